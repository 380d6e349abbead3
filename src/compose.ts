// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import type { ScanSplit } from './storage/scan-split.js';
import type { QueryService } from './service/query.js';
import { createServices, type Services } from './service/services.js';
import { PostgresStore } from './storage/postgres/postgres-store.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { CommitObserver, Store } from './storage/store.js';
import type { QueueStore } from './storage/queue-store.js';
import type { Clock } from './queue/clock.js';
import type { QueueServices } from './queue/definition.js';
import { QueueService } from './queue/queue-service.js';
import { ServicePropertiesService } from './service/service-properties.js';

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
  /** The Queue service over the same database; undefined where the engine has no queue store yet. */
  readonly queueServices: QueueServices | undefined;
}

/** What the server's workload watch (src/observe) puts between the engine and the services. */
export interface Watch {
  readonly onCommit: CommitObserver;
  store(engine: Store): Store;
  queries(store: Store): QueryService;
  /** The queue store as the throttle sees it (or as it is). */
  queueStore(engine: QueueStore): QueueStore;
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

/** The Queue service's store over the same database as the tables; undefined for an engine without one. */
function openQueueStore(engine: Store): QueueStore | undefined {
  if (engine instanceof SqliteStore || engine instanceof PostgresStore) return engine.openQueueStore();
  return undefined;
}

export async function compose(config: StoreConfig, watch?: Watch, queueClock?: Clock): Promise<Composition> {
  const engine = await openStore(config, watch?.onCommit);
  const queueEngine = openQueueStore(engine);
  const queueStore = queueEngine === undefined || watch === undefined ? queueEngine : watch.queueStore(queueEngine);
  const store = watch === undefined ? engine : watch.store(engine);
  const services =
    watch === undefined ? createServices(store) : { ...createServices(store), queries: watch.queries(store) };
  const queueServices =
    queueStore === undefined || queueClock === undefined
      ? undefined
      : { queues: new QueueService(queueStore, queueClock), properties: new ServicePropertiesService(store, 'queue') };
  return { store, services, queueServices };
}
