// A transaction's BEGIN sent with its first statement, in one round trip instead of two: the
// extended protocol's messages for BEGIN (Parse, Bind, Execute of the unnamed statement) go ahead
// of the statement's own, before the one Sync. The server runs them in order: BEGIN opens the
// transaction block and the statement runs in it, exactly as if each had been sent alone (an
// error in the statement leaves the transaction aborted, which the caller rolls back as before).
// The driver has no such call of its own: a query object (the driver's own Query, which its
// clients run as any other) sends the extra messages and keeps BEGIN's completion out of the result.
import pg from 'pg';

/** What of the driver's Query this needs beyond its typings (pg/lib/query.js). */
export interface QueryInternals {
  prepare(connection: ProtocolConnection): void;
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void;
}

/** The driver's connection's message writers (pg/lib/connection.js). */
export interface ProtocolConnection {
  parse(message: { text: string }): void;
  bind(message: object): void;
  execute(message: object): void;
  sync(): void;
  readonly parsedStatements: Record<string, string | undefined>;
}

export const queryInternals = pg.Query.prototype as unknown as QueryInternals;

/** The statement `config` preceded by BEGIN, as one query of the driver. */
class BeginThen extends pg.Query {
  private begun = false;

  prepare(connection: ProtocolConnection): void {
    connection.parse({ text: 'BEGIN' });
    connection.bind({});
    connection.execute({});
    queryInternals.prepare.call(this, connection);
  }

  /** The first completion is BEGIN's: the result is the statement's alone. */
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    if (this.begun) queryInternals.handleCommandComplete.call(this, message, connection);
    this.begun = true;
  }
}

/**
 * Whether `config` can carry BEGIN: a statement with parameters (the extended protocol; a text
 * alone may hold several statements, which it refuses), whose name, if it has one, this
 * connection has prepared already. The driver notes a statement prepared when a ParseComplete
 * arrives during its query, and BEGIN's would come first: were the statement's own Parse then
 * to fail, the driver would believe it prepared and never send it again.
 */
function canCarry(client: pg.ClientBase, config: unknown): config is pg.QueryConfig {
  if (typeof config !== 'object' || config === null || 'submit' in config) return false;
  const { text, values, name, rows } = config as pg.QueryConfig & { rows?: unknown };
  if (typeof text !== 'string' || !Array.isArray(values) || rows !== undefined) return false;
  const connection = (client as unknown as { connection: ProtocolConnection }).connection;
  return name === undefined || connection.parsedStatements[name] === text;
}

/** `config` run on `client` after BEGIN, in one round trip. */
function beginWith(client: pg.ClientBase, config: pg.QueryConfig): Promise<pg.QueryResult> {
  return runQuery(client, new BeginThen({ ...config, queryMode: 'extended' } as pg.QueryConfig));
}

/** A query object of the driver run on `client`: its result. */
export function runQuery<Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  query: pg.Query,
): Promise<pg.QueryResult<Row>> {
  return new Promise((resolve, reject) => {
    (query as unknown as { callback: (error: Error | null, result: pg.QueryResult<Row>) => void }).callback = (
      error,
      result,
    ) => (error ? reject(error) : resolve(result));
    client.query(query);
  });
}

/** Whether `client`'s transaction has sent BEGIN (beginWithNext's hook is gone). */
export function hasBegun(client: pg.ClientBase): boolean {
  return !Object.hasOwn(client, 'query');
}

/**
 * Opens a transaction on `client` with its next statement: that statement carries BEGIN (or, one
 * that cannot, waits for BEGIN alone). Answers whether BEGIN has been sent, to ask once the
 * transaction's body is done: if not, it sent no statement, and no transaction is open.
 */
export function beginWithNext(client: pg.PoolClient): () => boolean {
  let sent = false;
  const own = client as unknown as { query?: unknown };
  own.query = (config: unknown, ...rest: unknown[]): unknown => {
    // The client's own query again (its class's), for this statement and every one after.
    delete own.query;
    sent = true;
    if (rest.length === 0 && canCarry(client, config)) return beginWith(client, config);
    const statement = client as unknown as { query(...args: unknown[]): unknown };
    return client.query('BEGIN').then(() => statement.query(config, ...rest));
  };
  return () => {
    delete own.query;
    return sent;
  };
}
