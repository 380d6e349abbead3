// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import type { QueryService } from './service/query.js';
import { createServices, type Services } from './service/services.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { CommitObserver, Store } from './storage/store.js';

/** Which engine keeps the data, and where. */
export interface StoreConfig {
  /** Data directory of the embedded SQLite engine; undefined keeps everything in memory. */
  readonly location: string | undefined;
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

export async function openStore(config: StoreConfig, onCommit?: CommitObserver): Promise<Store> {
  return SqliteStore.open({ location: config.location, onCommit });
}

export async function compose(config: StoreConfig, watch?: Watch): Promise<Composition> {
  if (watch === undefined) {
    const store = await openStore(config);
    return { store, services: createServices(store) };
  }
  const store = watch.store(await openStore(config, watch.onCommit));
  return { store, services: { ...createServices(store), queries: watch.queries(store) } };
}
