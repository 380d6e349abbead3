// Composition: configuration → stores → services, shared by the server (main.ts) and every tool
// that works on a store. One engine holds every service's data: opening it gives the table store
// and the queue store over the same database. Process concerns (signals, the banner, listening)
// stay with the caller.
import type { ScanSplit } from './config.js';
import type { QueryService } from './service/query.js';
import { createServices, type Services } from './service/services.js';
import assert from 'node:assert/strict';
import { ReplicationWatch } from './storage/postgres/replication.js';
import { describeDatabaseUrl } from './storage/postgres/hosts.js';
import { PostgresStore } from './storage/postgres/postgres-store.js';
import { ExpiryPurge, type ExpiryPurgeOptions } from './storage/queue-purge.js';
import type { QueueStore } from './storage/queue-store.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { ReplicationSource } from './storage/replication.js';
import type { CommitObserver, Store } from './storage/store.js';

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
}

export interface Composition {
  readonly store: Store;
  readonly queues: QueueStore;
  readonly services: Services;
  /** The read-access secondary's services, over a hot standby (with --secondary-database). */
  readonly secondary?: Secondary | undefined;
  /** Stops the expiry purge, then closes the queue store, the table store and the secondary. */
  close(): Promise<void>;
}

export interface Secondary {
  readonly services: Services;
  readonly replication: ReplicationSource;
  close(): Promise<void>;
}

/** Both services' stores over one engine's database. */
export interface Stores {
  readonly tables: SqliteStore | PostgresStore;
  readonly queues: QueueStore;
  /** Closes the queue store, then the table store (whose writer or pool the queue store shares). */
  close(): Promise<void>;
}

/** What the server's workload watch (src/observe) puts between the engine and the services. */
export interface Watch {
  readonly onCommit: CommitObserver;
  store(engine: Store): Store;
  queries(store: Store): QueryService;
  /** The read-access secondary's replication status, for metrics. */
  replication?: ReplicationSource | undefined;
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

/** Hears once when a database server goes out of reach and once when it is back (PostgreSQL only). */
export type ReachabilityObserver = (reachable: boolean, detail: string) => void;

export interface ComposeOptions {
  readonly onReachability?: ReachabilityObserver | undefined;
  /** The periodic purge of expired messages: its interval and bounds (queue-purge.ts). */
  readonly purge?: ExpiryPurgeOptions | undefined;
}

/** The table store alone (openStores: with the queue store of the same engine). */
export function openStore(
  config: StoreConfig,
  onCommit?: CommitObserver,
  onReachability?: ReachabilityObserver,
): Promise<SqliteStore | PostgresStore> {
  return config.database === undefined
    ? SqliteStore.open({
        location: config.location,
        onCommit,
        scanSplit: config.scanSplit,
        autoIndexRows: config.autoIndexRows,
      })
    : PostgresStore.open({ url: config.database, onCommit, autoIndexRows: config.autoIndexRows, onReachability });
}

export async function openStores(
  config: StoreConfig,
  onCommit?: CommitObserver,
  onReachability?: ReachabilityObserver,
): Promise<Stores> {
  const tables = await openStore(config, onCommit, onReachability);
  const queues = tables.openQueueStore();
  return {
    tables,
    queues,
    close: async () => {
      queues.close();
      await tables.close();
    },
  };
}

/**
 * The stores, the services over them, the periodic purge of expired messages, and the read-access
 * secondary when there is a standby. `watch` wraps the table store (src/observe).
 */
export async function compose(config: StoreConfig, watch?: Watch, options: ComposeOptions = {}): Promise<Composition> {
  const engine = await openStores(config, watch?.onCommit, options.onReachability);
  const secondary = await openSecondary(config, engine.tables).catch(async (error: unknown) => {
    await engine.close();
    throw error;
  });
  if (watch !== undefined) watch.replication = secondary?.replication;
  const store = watch === undefined ? engine.tables : watch.store(engine.tables);
  const services =
    watch === undefined ? createServices(store) : { ...createServices(store), queries: watch.queries(store) };
  const expiry = new ExpiryPurge(engine.queues, options.purge);
  expiry.start();
  return {
    store,
    queues: engine.queues,
    services,
    secondary,
    close: async () => {
      await expiry.stop();
      await secondary?.close();
      await engine.close();
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
 * The secondary endpoint's services over a read-only store on the standby, with the replication
 * status its Get Service Stats reports (storage/postgres/replication.ts).
 */
async function openSecondary(config: StoreConfig, primary: Store): Promise<Secondary | undefined> {
  if (config.secondaryDatabase === undefined) return undefined;
  assert(primary instanceof PostgresStore, 'a secondary database is a standby of a PostgreSQL primary');
  const standby = await openStandby(config.secondaryDatabase);
  const replication = new ReplicationWatch(primary, standby);
  await replication.tick();
  return {
    services: { ...createServices(standby), replication },
    replication,
    close: async () => {
      replication.close();
      await standby.close();
    },
  };
}
