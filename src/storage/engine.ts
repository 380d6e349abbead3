// The one seam where an engine is opened: configuration → the table, queue and blob stores over one
// database (SQLite on disk or in memory, or PostgreSQL), and the read-only stores over a hot standby
// for the read-access secondary. Everything above (compose.ts, the tools) sees the store contracts.
import assert from 'node:assert/strict';
import type { ScanSplit } from './scan-split.js';
import type { BlobStore } from './blob-store.js';
import type { PathStore } from './path-store.js';
import type { QueueStore } from './queue-store.js';
import type { ReplicationSource } from './replication.js';
import type { CommitObserver, TableStore } from './table-store.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import { describeDatabaseUrl, parseDatabaseUrl } from './postgres/hosts.js';
import { ReplicationWatch } from './postgres/replication.js';
import { blobReclaimGraceSecondsDefault } from '../limits.js';

/** Which engine keeps the data, and where. */
export interface StoreConfig {
  /** Data directory of the embedded SQLite engine; undefined keeps everything in memory. */
  readonly location: string | undefined;
  /** A PostgreSQL connection URL: the PostgreSQL engine instead (`location` is then unused). */
  readonly database: string | undefined;
  /** A hot standby of `database`, for the read-access secondary endpoint. */
  readonly secondaryDatabase?: string | undefined;
  /** When a filtered scan's steps run on two scan threads (SQLite on disk); default auto. */
  readonly scanSplit?: ScanSplit;
  /** Rows a table's scans examine for one property before it is indexed; 0 never; default autoIndexRowsDefault. */
  readonly autoIndexRows?: number;
  /** How long unreferenced blob content stays before the reclaim removes it; default blobReclaimGraceSecondsDefault. */
  readonly blobReclaimGraceSeconds?: number;
}

/** Every service's store over one database: what a service definition's `open` works on. */
export interface ServiceStores {
  readonly tables: TableStore;
  readonly queues: QueueStore;
  readonly blobs: BlobStore;
  /** The Data Lake API's renames over the blob store's rows (path-store.ts). */
  readonly paths: PathStore;
}

/** An opened engine: its stores, and how to close them. */
export interface Engine extends ServiceStores {
  /** The engine's table store itself (metrics and the tools read its own counters). */
  readonly tables: SqliteStore | PostgresStore;
  /** Closes the queue and blob stores, then the table store (whose writer or pool they share). */
  close(): Promise<void>;
}

/** The read-only stores over a hot standby, and how far it lags the primary. */
export interface StandbyEngine extends ServiceStores {
  readonly replication: ReplicationSource;
  close(): Promise<void>;
}

/** How long to wait for a PostgreSQL database that is not up yet, and where to say so. */
export interface DatabaseWait {
  readonly seconds: number;
  readonly report: (line: string) => void;
}

/** Hears once when a database server goes out of reach and once when it is back (PostgreSQL only). */
export type ReachabilityObserver = (reachable: boolean, detail: string) => void;

export interface EngineOptions {
  /** Hears of each durable commit (metrics). */
  readonly onCommit?: CommitObserver | undefined;
  /** Hears when the database goes out of reach and comes back (PostgreSQL). */
  readonly onReachability?: ReachabilityObserver | undefined;
  /** Wait for a database that is not up yet. */
  readonly wait?: DatabaseWait | undefined;
}

/** Where the data lives, in words (the URL without its password). */
export function describeStore(config: StoreConfig): string {
  if (config.database !== undefined) {
    return `PostgreSQL ${describeDatabaseUrl(config.database)}, every acknowledged write durable in the database`;
  }
  return config.location === undefined
    ? 'in memory, nothing is kept'
    : `${config.location}, every acknowledged write fsync-durable`;
}

/** Throws an Error a user can act on when `url` is not a PostgreSQL URL libpq would read (hosts.ts). */
export function checkDatabaseUrl(url: string): void {
  parseDatabaseUrl(url);
}

/** The reclaim grace of `config`, in milliseconds. */
export function contentGraceMsOf(config: StoreConfig): number {
  return (config.blobReclaimGraceSeconds ?? blobReclaimGraceSecondsDefault) * 1000;
}

/** The table store alone (openEngine: with the queue and blob stores of the same engine). */
async function openTableStore(config: StoreConfig, options: EngineOptions): Promise<SqliteStore | PostgresStore> {
  const { onCommit, onReachability } = options;
  return config.database === undefined
    ? SqliteStore.open({
        location: config.location,
        onCommit,
        scanSplit: config.scanSplit,
        autoIndexRows: config.autoIndexRows,
      })
    : PostgresStore.open({ url: config.database, onCommit, autoIndexRows: config.autoIndexRows, onReachability });
}

/** Between two lines about a database that is not up yet. */
const waitReportIntervalMs = 5_000;
const waitRetryDelayMs = 500;

/**
 * Opens the table store; with `options.wait`, a PostgreSQL database that cannot be opened yet is tried
 * again until `wait.seconds` have passed (a database starting beside the server), `wait.report`
 * hearing why at most every few seconds.
 */
async function openTableStoreWaiting(
  config: StoreConfig,
  options: EngineOptions,
): Promise<SqliteStore | PostgresStore> {
  const { wait } = options;
  if (wait === undefined) return openTableStore(config, options);
  const deadlineMs = Date.now() + wait.seconds * 1000;
  let reportedMs = -Infinity;
  for (;;) {
    try {
      return await openTableStore(config, options);
    } catch (error) {
      if (config.database === undefined || Date.now() + waitRetryDelayMs > deadlineMs) throw error;
      if (Date.now() - reportedMs >= waitReportIntervalMs) {
        reportedMs = Date.now();
        const leftSeconds = Math.ceil((deadlineMs - reportedMs) / 1000);
        wait.report(`waiting for the database (${leftSeconds} s left): ${(error as Error).message}`);
      }
      await new Promise((resolve) => setTimeout(resolve, waitRetryDelayMs));
    }
  }
}

/** The three stores of the engine `config` names (waiting for the database when `options.wait` says so). */
export async function openEngine(config: StoreConfig, options: EngineOptions = {}): Promise<Engine> {
  const tables = await openTableStoreWaiting(config, options);
  return storesOver(tables, config, () => tables.close());
}

/** The queue and blob stores beside `tables` (SQLite opens its content directory first). */
async function storesOver(
  tables: SqliteStore | PostgresStore,
  config: StoreConfig,
  closeTables: () => Promise<void>,
): Promise<Engine> {
  const queues = tables.openQueueStore();
  const blobs: BlobStore & { close?(): void } = await tables.openBlobStore({
    contentGraceMs: contentGraceMsOf(config),
  });
  return {
    tables,
    queues,
    blobs,
    paths: tables.openPathStore(),
    close: async () => {
      queues.close();
      blobs.close?.();
      await closeTables();
    },
  };
}

/** How long a start waits for the standby to replay the schema the primary has just migrated. */
const standbyCatchUpMs = 30_000;

async function openStandby(url: string): Promise<PostgresStore> {
  const deadlineMs = Date.now() + standbyCatchUpMs;
  for (;;) {
    try {
      return await PostgresStore.open({ url, readOnly: true });
    } catch (error) {
      if (Date.now() > deadlineMs) throw new Error(`--secondary-database: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Read-only stores over `config.secondaryDatabase`, a hot standby of the primary's database, with the
 * replication status a secondary's Get Service Stats reports (postgres/replication.ts); undefined
 * without one. No sweep runs here: the primary's replicate.
 */
export async function openStandbyEngine(config: StoreConfig, primary: Engine): Promise<StandbyEngine | undefined> {
  if (config.secondaryDatabase === undefined) return undefined;
  assert(primary.tables instanceof PostgresStore, 'a secondary database is a standby of a PostgreSQL primary');
  const standby = await openStandby(config.secondaryDatabase);
  const replication = new ReplicationWatch(primary.tables, standby);
  await replication.tick();
  const stores = await storesOver(standby, config, () => standby.close());
  return {
    ...stores,
    replication,
    close: async () => {
      replication.close();
      await stores.close();
    },
  };
}
