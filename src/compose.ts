// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import type { ScanSplit } from './config.js';
import type { QueryService } from './service/query.js';
import { createServices, type Services } from './service/services.js';
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

export async function openStore(config: StoreConfig, onCommit?: CommitObserver): Promise<Store> {
  return config.database === undefined
    ? SqliteStore.open({
        location: config.location,
        onCommit,
        scanSplit: config.scanSplit,
        autoIndexRows: config.autoIndexRows,
      })
    : PostgresStore.open({ url: config.database, onCommit, autoIndexRows: config.autoIndexRows });
}

export async function compose(config: StoreConfig, watch?: Watch): Promise<Composition> {
  if (watch === undefined) {
    const store = await openStore(config);
    return { store, services: createServices(store) };
  }
  const store = watch.store(await openStore(config, watch.onCommit));
  return { store, services: { ...createServices(store), queries: watch.queries(store) } };
}
