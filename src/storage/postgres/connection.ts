// The connection to the PostgreSQL database, shared by every store of this folder: the pool, its
// limits and session settings, statements with what their failures mean to a client
// (failures.ts), and transactions that start over when they lose a race.
//
// A read that fails is answered 503 ServerBusy (it changed nothing). A write is answered 503 only
// when it certainly did not happen: its connection failed before the statement (or, in a
// transaction, COMMIT) was sent. Once sent, a lost connection leaves the outcome unknown
// (WriteOutcomeUnknown, 500 InternalError).
import assert from 'node:assert/strict';
import pg from 'pg';
import { StorageError } from '../../errors.js';
import { beginWithNext } from './begin-with.js';
import { sentCommit } from './commit-with.js';
import {
  azureError,
  isConnectionFailure,
  isMissingTable,
  isRetryable,
  Reachability,
  sentWriteFailure,
  WriteOutcomeUnknown,
} from './failures.js';
import { parseDatabaseUrl } from './hosts.js';
import { HostLocator, locatedClient, type LocatorEvents } from './locator.js';

/** Connections per process: requests beyond them wait for one, up to connectTimeoutMs. */
const poolConnectionsMax = 16;
/** Waiting for a connection (new or from the pool) longer than this answers 503 ServerBusy. */
const connectTimeoutMs = 3_000;
/** The database cancels a statement after this (57014: 500 OperationTimedOut)... */
const statementTimeoutMs = 10_000;
/** ...and the driver gives up on an unanswering server a little later. */
const queryTimeoutMs = 12_000;
/** A row lock held longer than this (a stuck transaction) fails the waiter with 503 ServerBusy. */
const lockTimeoutMs = 5_000;
/** Attempts of one transaction that lost a race, before 503 ServerBusy. */
const transactionAttemptsMax = 5;

/** Whether a statement may change the database: a failed write's outcome may be unknown. */
export type Effect = 'read' | 'write';

/** A statement: `name` prepares it once per connection. */
export interface Statement {
  readonly name?: string | undefined;
  readonly text: string;
  readonly values: readonly unknown[];
}

export interface ConnectionOptions {
  /** Hears once when the database goes out of reach and once when it is back (failures.ts Reachability). */
  readonly onReachability?: ((reachable: boolean, detail: string) => void) | undefined;
  /** Hears when the URL's hosts (hosts.ts) see a failover. */
  readonly locatorEvents?: LocatorEvents | undefined;
}

/** Thrown by a transaction's body that lost a race (another process wrote first): it starts over. */
export class RaceLost extends Error {}

export class PostgresConnection {
  private closed = false;

  private constructor(
    private readonly url: string,
    /** The pool, for statements whose failures their caller handles itself (property-indexes.ts). */
    readonly pool: pg.Pool,
    private readonly Client: typeof pg.Client,
    private readonly locator: HostLocator,
    private readonly reachability: Reachability,
  ) {}

  /** When this process last saw the database fail over to another host (ms since the epoch). */
  get lastFailoverMs(): number | undefined {
    return this.locator.lastFailoverMs;
  }

  /** The Azure error for a database failure (failures.ts), noting a database out of reach. */
  failure(error: unknown): unknown {
    this.reachability.failed(error instanceof WriteOutcomeUnknown ? error.failure : error);
    return azureError(error);
  }

  /**
   * A pool over `url`, which may name several hosts (hosts.ts): every connection, pooled or not,
   * goes to the host the locator chooses (locator.ts). No connection is made until the first
   * statement.
   */
  static create(url: string, options: ConnectionOptions = {}): PostgresConnection {
    const locator = new HostLocator(parseDatabaseUrl(url), options.locatorEvents);
    const Client = locatedClient(locator);
    const baseUrl = locator.target.urlFor(locator.target.hosts[0]!);
    const pool = new pg.Pool({
      Client,
      connectionString: baseUrl,
      max: poolConnectionsMax,
      connectionTimeoutMillis: connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      query_timeout: queryTimeoutMs,
      statement_timeout: statementTimeoutMs,
      lock_timeout: lockTimeoutMs,
      // A process killed mid-transaction must not hold its locks until TCP notices.
      idle_in_transaction_session_timeout: 30_000,
      keepAlive: true,
      application_name: 'cerulean',
      // Bitmap scans off: an equality step on a property index (property-indexes.ts) must walk
      // the index in key order and stop at its window. The planner has no statistics for a
      // partial index's expression, so it guesses the matches (0.5 % of all entities) and, with
      // bitmap scans on, may read every match of the range and sort them. Without them its only
      // choices are that ordered walk and the primary key walk, which at that guess costs far
      // more. No other statement of this engine wants a bitmap scan: all are key lookups or key walks.
      options: '-c synchronous_commit=on -c enable_bitmapscan=off',
    });
    // An idle connection the server dropped (restart, failover) is discarded; the next request gets a new one.
    pool.on('error', () => undefined);
    const reachability = new Reachability(options.onReachability ?? (() => undefined));
    pool.on('connect', () => reachability.reached());
    return new PostgresConnection(baseUrl, pool, Client, locator, reachability);
  }

  /**
   * A connection of its own, outside the pool and without a statement timeout (not yet
   * connected), for work that may run long: an index build (property-indexes.ts).
   */
  sessionClient(applicationName: string): pg.Client {
    const client = new this.Client({
      connectionString: this.url,
      application_name: applicationName,
      statement_timeout: 0,
      keepAlive: true,
    });
    client.on('error', () => undefined);
    return client;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** One statement outside a transaction; a failure as an Azure error. */
  async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    effect: Effect,
    statement: Statement,
  ): Promise<pg.QueryResult<Row>> {
    try {
      return await this.rawQuery<Row>(effect, statement);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * query, failing with the database's own error (a group statement's: its coalescer decides on
   * it), or WriteOutcomeUnknown for a write sent on a connection that then failed.
   */
  async rawQuery<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    effect: Effect,
    statement: Statement,
  ): Promise<pg.QueryResult<Row>> {
    return this.onClient(effect, (client) => client.query<Row>(queryConfig(statement)));
  }

  /**
   * A read that `run` makes on a pooled connection through the driver itself (a custom
   * submittable, such as a COPY: postgres/blob/copy-out.ts); a failure as an Azure error, as query's.
   */
  async read<T>(run: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await this.onClient('read', run);
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** `run` on a pooled connection, released after; a broken one is discarded (rawQuery's errors). */
  private async onClient<T>(effect: Effect, run: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.checkOut();
    try {
      const result = await run(client);
      client.release();
      return result;
    } catch (error) {
      client.release(isConnectionFailure(error));
      throw effect === 'write' ? sentWriteFailure(error) : error;
    }
  }

  /**
   * Runs `body` in one transaction and commits it if `keep` says so (rolls back otherwise),
   * starting over after a lost race (RaceLost, a serialization failure, a deadlock), up to
   * transactionAttemptsMax times. A foreign key violation (the table was deleted under the
   * transaction) answers `missingTable`. Failures are Azure errors.
   */
  async transaction<T>(
    body: (client: pg.PoolClient) => Promise<T>,
    keep: (result: T) => boolean,
    missingTable: T,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.checkOut();
      } catch (error) {
        throw this.failure(error);
      }
      const outcome = await attemptTransaction(client, body, keep);
      if (outcome.ok) return outcome.result;
      const { error } = outcome;
      if (isMissingTable(error)) return missingTable;
      const lostRace = error instanceof RaceLost || isRetryable(error);
      if (!lostRace || attempt >= transactionAttemptsMax)
        throw this.failure(lostRace ? new StorageError('ServerBusy') : error);
      // A short random pause, so that racing processes do not meet again in step.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** A pooled connection; a failure here comes before anything was sent. */
  private async checkOut(): Promise<pg.PoolClient> {
    if (this.closed) throw new Error('store is closed');
    const client = await this.pool.connect();
    // A connection that breaks between two statements of a transaction emits 'error' (which
    // would end the process unheard); the next statement fails too, and the client is discarded.
    if (!guardedClients.has(client)) {
      client.on('error', () => undefined);
      guardedClients.add(client);
    }
    return client;
  }
}

type Attempt<T> = { readonly ok: true; readonly result: T } | { readonly ok: false; readonly error: unknown };

/**
 * One attempt of a transaction on `client`, which it releases. A connection failure once COMMIT
 * was sent is WriteOutcomeUnknown; before, the transaction certainly did not commit.
 */
async function attemptTransaction<T>(
  client: pg.PoolClient,
  body: (client: pg.PoolClient) => Promise<T>,
  keep: (result: T) => boolean,
): Promise<Attempt<T>> {
  let committing = false;
  // BEGIN goes with the body's first statement, in its round trip (begin-with.ts).
  const begun = beginWithNext(client);
  try {
    const result = await body(client);
    committing = keep(result);
    let broken = false;
    // A body whose last statement carried COMMIT (commit-with.ts) is committed already.
    if (sentCommit(client)) assert(committing, 'a transaction that committed keeps its result');
    // A body that sent no statement opened no transaction: nothing to end.
    else if (!begun()) committing = false;
    else if (committing) await client.query('COMMIT');
    // A result not kept (a failed condition, say) stands however the rollback goes: nothing was
    // committed. A connection whose rollback failed is discarded, which ends the transaction.
    else await client.query('ROLLBACK').catch(() => (broken = true));
    client.release(broken);
    return { ok: true, result };
  } catch (error) {
    // A failure once COMMIT went with the last statement leaves the outcome as unknown as COMMIT's own.
    if (sentCommit(client)) committing = true;
    const broken = isConnectionFailure(error);
    const opened = begun();
    if (!broken && opened) await client.query('ROLLBACK').catch(() => undefined);
    client.release(broken);
    return { ok: false, error: committing ? sentWriteFailure(error) : error };
  }
}

function queryConfig({ name, text, values }: Statement): pg.QueryConfig {
  const config = { text, values: values as unknown[] };
  return name === undefined ? config : { ...config, name };
}

/** Checked-out clients given an 'error' listener (once each: the pool reuses them). */
const guardedClients = new WeakSet<pg.PoolClient>();
