// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import type { ScanSplit } from './storage/scan-split.js';
import type { QueryService } from './table/service/query.js';
import { createServices, type Services } from './table/service/services.js';
import { PostgresStore } from './storage/postgres/postgres-store.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { CommitObserver, Store } from './storage/store.js';

/** Which engine keeps the data, and where. */
export interface StoreConfig {
  /** Data directory of the embedded SQLite engine; undefined keeps everything in memory. */
  readonly location: string | undefined;
  /** A PostgreSQL connection URL: the PostgreSQL engine instead (`location` is then unused). */
  readonly database: string | undefined;
  /** When a filtered scan's steps run on two scan threads (SQLite on disk); default auto. */
  readonly scanSplit?: ScanSplit;
  /** Rows a table's scans examine for one property before it is indexed; 0 never; default autoIndexRowsDefault. */
  readonly autoIndexRows?: number;
}

export interface Composition {
  readonly store: Store;
  readonly services: Services;
}

/** How long to wait for a PostgreSQL database that is not up yet, and where to say so. */
export interface DatabaseWait {
  readonly seconds: number;
  readonly report: (line: string) => void;
}

/** What the server's workload watch (src/observe) puts between the engine and the services. */
export interface Watch {
  readonly onCommit: CommitObserver;
  store(engine: Store): Store;
  queries(store: Store): QueryService;
}

/** Where the data lives, in words (the URL without its password). */
export function describeStore(config: StoreConfig): string {
  if (config.database !== undefined) {
    const url = new URL(config.database);
    if (url.password !== '') url.password = '***';
    return `PostgreSQL ${url.href}, every acknowledged write durable in the database`;
  }
  return config.location === undefined
    ? 'in memory, nothing is kept'
    : `${config.location}, every acknowledged write fsync-durable`;
}

/** Hears once when a database server goes out of reach and once when it is back (PostgreSQL only). */
export type ReachabilityObserver = (reachable: boolean, detail: string) => void;

export async function openStore(
  config: StoreConfig,
  onCommit?: CommitObserver,
  onReachability?: ReachabilityObserver,
): Promise<Store> {
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
): Promise<Store> {
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
}

export async function compose(config: StoreConfig, watch?: Watch, options: ComposeOptions = {}): Promise<Composition> {
  const { onReachability, wait } = options;
  const open = (onCommit?: CommitObserver): Promise<Store> =>
    wait === undefined
      ? openStore(config, onCommit, onReachability)
      : openStoreWaiting(config, onCommit, onReachability, wait);
  if (watch === undefined) {
    const store = await open();
    return { store, services: createServices(store) };
  }
  const store = watch.store(await open(watch.onCommit));
  return { store, services: { ...createServices(store), queries: watch.queries(store) } };
}
