// Composition: configuration → stores → services, shared by the server (main.ts) and every tool
// that works on a store. One engine holds every service's data: opening it gives the table store,
// the queue store and the blob store over the same database. Process concerns (signals, the banner, listening)
// stay with the caller.
import type { ScanSplit } from './storage/scan-split.js';
import type { QueryService } from './table/service/query.js';
import { createTableServices, type TableServices } from './table/service/services.js';
import { PostgresStore } from './storage/postgres/postgres-store.js';
import { Sweep, type SweepOptions } from './storage/sweep.js';
import type { QueueStore } from './storage/queue-store.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { CommitObserver, TableStore } from './storage/table-store.js';
import { systemClock, type Clock } from './domain/clock.js';
import { blobReclaimGraceSecondsDefault } from './limits.js';
import type { QueueServices } from './queue/definition.js';
import type { BlobServices } from './blob/services.js';
import type { BlobStore } from './storage/blob-store.js';
import { QueueService } from './queue/service.js';
import { ServicePropertiesService } from './storage/service-properties.js';
import { BlobServicePropertiesService } from './blob/state/service-properties.js';
import assert from 'node:assert/strict';
import { describeDatabaseUrl, parseDatabaseUrl } from './storage/postgres/hosts.js';
import { ReplicationWatch } from './storage/postgres/replication.js';
import type { ReplicationSource } from './storage/replication.js';

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

export interface Composition {
  readonly store: TableStore;
  readonly queues: QueueStore;
  /** The Table service's operations over the table store. */
  readonly tableServices: TableServices;
  /** The Queue service's operations and its own service properties (kept in the table store's settings). */
  readonly queueServices: QueueServices;
  /** The Blob service's store, clock and service properties (kept in the table store's settings too). */
  readonly blobServices: BlobServices;
  /** The read-access secondary's table services, over a hot standby (with --secondary-database). */
  readonly secondary?: Secondary | undefined;
  /** Stops the sweeps, then closes the secondary, the queue store and the table store. */
  close(): Promise<void>;
}

export interface Secondary {
  readonly tableServices: TableServices;
  /** The secondary's queue services over the standby: read operations only (the front door refuses the rest). */
  readonly queueServices: QueueServices;
  /** The secondary's blob services over the standby: read operations only. */
  readonly blobServices: BlobServices;
  readonly replication: ReplicationSource;
  close(): Promise<void>;
}

/** Every service's store over one engine's database. */
export interface Stores {
  readonly tables: SqliteStore | PostgresStore;
  readonly queues: QueueStore;
  readonly blobs: EngineBlobStore;
  /** Closes the queue and blob stores, then the table store (whose writer or pool they share). */
  close(): Promise<void>;
}

/** A blob store as an engine opens it: closed before its table store (SQLite: its read connection). */
type EngineBlobStore = BlobStore & { close?(): void };

/** The engine's blob store (SQLite opens its content directory first). */
async function openBlobStoreOf(engine: SqliteStore | PostgresStore, contentGraceMs: number): Promise<EngineBlobStore> {
  return engine.openBlobStore({ contentGraceMs });
}

/** The reclaim grace of `config`, in milliseconds. */
function contentGraceMsOf(config: StoreConfig): number {
  return (config.blobReclaimGraceSeconds ?? blobReclaimGraceSecondsDefault) * 1000;
}

/**
 * How often the reclaim runs: every minute, or as often as the grace when that is shorter (a
 * short grace is for freeing space soon), but at most once a second.
 */
function reclaimIntervalMsOf(config: StoreConfig): number {
  return Math.min(60_000, Math.max(1000, contentGraceMsOf(config)));
}

/** How long to wait for a PostgreSQL database that is not up yet, and where to say so. */
export interface DatabaseWait {
  readonly seconds: number;
  readonly report: (line: string) => void;
}

/** What the server's workload watch (src/observe) puts between the engine and the services. */
export interface Watch {
  readonly onCommit: CommitObserver;
  store(engine: TableStore): TableStore;
  queries(store: TableStore): QueryService;
  /** The queue store as the throttle sees it (or as it is). */
  queueStore(engine: QueueStore, clock: Clock): QueueStore;
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

/** Throws an Error a user can act on when `url` is not a PostgreSQL URL libpq would read (hosts.ts). */
export function checkDatabaseUrl(url: string): void {
  parseDatabaseUrl(url);
}

/** Hears once when a database server goes out of reach and once when it is back (PostgreSQL only). */
export type ReachabilityObserver = (reachable: boolean, detail: string) => void;

/** The table store alone (openStores: with the queue store of the same engine). */
export async function openStore(
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

/** Between two lines about a database that is not up yet. */
const waitReportIntervalMs = 5_000;
const waitRetryDelayMs = 500;

/**
 * Opens the store; with `wait`, a PostgreSQL database that cannot be opened yet is tried again
 * until `wait.seconds` have passed (a database starting beside the server), `wait.report` hearing
 * why at most every few seconds.
 */
export async function openStoreWaiting(
  config: StoreConfig,
  onCommit: CommitObserver | undefined,
  onReachability: ReachabilityObserver | undefined,
  wait: DatabaseWait,
): Promise<SqliteStore | PostgresStore> {
  const deadlineMs = Date.now() + wait.seconds * 1000;
  let reportedMs = -Infinity;
  for (;;) {
    try {
      return await openStore(config, onCommit, onReachability);
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

export interface ComposeOptions {
  /** Hears when the database goes out of reach and comes back (PostgreSQL). */
  readonly onReachability?: ReachabilityObserver | undefined;
  /** Wait for a database that is not up yet. */
  readonly wait?: DatabaseWait | undefined;
  /** The sweep of expired messages: its interval and bounds (sweep.ts). */
  readonly purge?: SweepOptions;
  /** Hears of a failed run of the blob store's reclaimContent (the next run tries again). */
  readonly onReclaimError?: (error: unknown) => void;
  /** The queue and blob services' clock (tests inject one: domain/clock.ts); default the system clock. */
  readonly queueClock?: Clock;
}

/** Both stores of one engine (waiting for the database when `options.wait` says so). */
export async function openStores(
  config: StoreConfig,
  onCommit?: CommitObserver,
  options: Pick<ComposeOptions, 'onReachability' | 'wait'> = {},
): Promise<Stores> {
  const { onReachability, wait } = options;
  const tables =
    wait === undefined
      ? await openStore(config, onCommit, onReachability)
      : await openStoreWaiting(config, onCommit, onReachability, wait);
  const queues = tables.openQueueStore();
  const blobs = await openBlobStoreOf(tables, contentGraceMsOf(config));
  return {
    tables,
    queues,
    blobs,
    close: async () => {
      queues.close();
      blobs.close?.();
      await tables.close();
    },
  };
}

/**
 * The stores, the services over them, the sweeps (expired messages, stale blob content), and the read-access
 * secondary when there is a standby. `watch` wraps the table store and the queue store (src/observe).
 */
export async function compose(config: StoreConfig, watch?: Watch, options: ComposeOptions = {}): Promise<Composition> {
  const engine = await openStores(config, watch?.onCommit, options);
  const clock = options.queueClock ?? systemClock;
  const secondary = await openSecondary(config, engine.tables, clock).catch(async (error: unknown) => {
    await engine.close();
    throw error;
  });
  if (watch !== undefined) watch.replication = secondary?.replication;
  const store = watch === undefined ? engine.tables : watch.store(engine.tables);
  const tableServices =
    watch === undefined ? createTableServices(store) : { ...createTableServices(store), queries: watch.queries(store) };
  const queueStore = watch === undefined ? engine.queues : watch.queueStore(engine.queues, clock);
  const queueServices = {
    queues: new QueueService(queueStore, clock),
    properties: new ServicePropertiesService(store, 'queue'),
  };
  const blobServices: BlobServices = {
    blobs: engine.blobs,
    clock,
    properties: new BlobServicePropertiesService(store),
  };
  const expiry = new Sweep((nowMs, limit) => engine.queues.purgeExpired(nowMs, limit), {
    nowMs: () => clock.nowMs(),
    ...options.purge,
  });
  expiry.start();
  const reclaim = new Sweep(
    (nowMs, limit) => engine.blobs.reclaimContent(nowMs, nowMs - stagedBlockLifetimeMs, limit),
    { nowMs: () => clock.nowMs(), onError: options.onReclaimError, intervalMs: reclaimIntervalMsOf(config) },
  );
  reclaim.start();
  return {
    store,
    queues: engine.queues,
    tableServices,
    queueServices,
    blobServices,
    secondary,
    close: async () => {
      await expiry.stop();
      await reclaim.stop();
      await secondary?.close();
      await engine.close();
    },
  };
}

/**
 * Staged blocks never committed are dropped a week after they were staged (put-block: "discarded
 * after a week"); the store also frees content nothing references, after its own grace.
 */
const stagedBlockLifetimeMs = 7 * 24 * 60 * 60 * 1000;

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
 * The secondary endpoint's table and queue services over read-only stores on the standby, with the
 * replication status its Get Service Stats reports (storage/postgres/replication.ts).
 */
async function openSecondary(config: StoreConfig, primary: TableStore, clock: Clock): Promise<Secondary | undefined> {
  if (config.secondaryDatabase === undefined) return undefined;
  assert(primary instanceof PostgresStore, 'a secondary database is a standby of a PostgreSQL primary');
  const standby = await openStandby(config.secondaryDatabase);
  const replication = new ReplicationWatch(primary, standby);
  await replication.tick();
  // Over the standby's pool; no expiry purge here: the primary's purge replicates.
  const queues = standby.openQueueStore();
  const blobs = await openBlobStoreOf(standby, contentGraceMsOf(config));
  return {
    tableServices: { ...createTableServices(standby), replication },
    queueServices: {
      queues: new QueueService(queues, clock),
      properties: new ServicePropertiesService(standby, 'queue'),
      replication,
    },
    blobServices: {
      blobs,
      clock,
      properties: new BlobServicePropertiesService(standby),
      replication,
    },
    replication,
    close: async () => {
      replication.close();
      queues.close();
      blobs.close?.();
      await standby.close();
    },
  };
}
