// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import { createServices, type Services } from './service/services.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { Store } from './storage/store.js';

/** Which engine keeps the data, and where. */
export interface StoreConfig {
  /** Data directory of the embedded SQLite engine; undefined keeps everything in memory. */
  readonly location: string | undefined;
}

export interface Composition {
  readonly store: Store;
  readonly services: Services;
}

export async function openStore(config: StoreConfig): Promise<Store> {
  return SqliteStore.open({ location: config.location });
}

export async function compose(config: StoreConfig): Promise<Composition> {
  const store = await openStore(config);
  return { store, services: createServices(store) };
}
