// A transaction's last statement sent with COMMIT, in one round trip instead of two: the
// statement's extended-protocol messages, then those of COMMIT, then the one Sync. If the
// statement fails, the server skips every message up to the Sync, COMMIT too: the transaction
// stays open and aborted, and the caller rolls it back as before. Only a statement whose success
// means the transaction is to be kept may go so, and its every failure must be an error of the
// database (a statement that checks what it wrote raises one), never a result the caller judges.
// The result comes once COMMIT has completed: the transaction is durable when it resolves.
import assert from 'node:assert/strict';
import pg from 'pg';
import { hasBegun, queryInternals, runQuery, type ProtocolConnection } from './begin-with.js';

/** The statement `config` followed by COMMIT, as one query of the driver. */
class ThenCommit extends pg.Query {
  private completed = false;

  /** The driver's last step of a statement (pg/lib/query.js _getRows), with COMMIT before its Sync. */
  _getRows(connection: ProtocolConnection & { execute(message: { portal: string }): void }): void {
    connection.execute({ portal: (this as unknown as { portal: string }).portal });
    connection.parse({ text: 'COMMIT' });
    connection.bind({});
    connection.execute({});
    connection.sync();
  }

  /** The second completion is COMMIT's: the result is the statement's alone. */
  handleCommandComplete(message: unknown, connection: ProtocolConnection): void {
    if (!this.completed) queryInternals.handleCommandComplete.call(this, message, connection);
    this.completed = true;
  }
}

/** Clients whose transaction sent COMMIT with a statement (commitWith), until the transaction ends. */
const committing = new WeakSet<pg.ClientBase>();

/**
 * Runs `config`, the last statement of `client`'s transaction (which has sent BEGIN), and commits
 * the transaction in the same round trip; its result once committed. The transaction
 * (connection.ts) then sends no COMMIT of its own.
 */
export function commitWith<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.ClientBase,
  config: pg.QueryConfig,
): Promise<pg.QueryResult<Row>> {
  assert(hasBegun(client), 'a transaction commits with a statement after its first');
  assert(!committing.has(client), 'a transaction commits once');
  committing.add(client);
  return runQuery<Row>(client, new ThenCommit({ ...config, queryMode: 'extended' } as pg.QueryConfig));
}

/** Whether `client`'s transaction sent COMMIT with a statement; forgets it (the transaction is over). */
export function sentCommit(client: pg.ClientBase): boolean {
  return committing.delete(client);
}
