// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import { createServices, type Services } from './service/services.js';
import { PostgresStore } from './storage/postgres/postgres-store.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';
import type { Store } from './storage/store.js';

/** Which engine keeps the data, and where. */
export interface StoreConfig {
  /** Data directory of the embedded SQLite engine; undefined keeps everything in memory. */
  readonly location: string | undefined;
  /** A PostgreSQL connection URL: the PostgreSQL engine instead (`location` is then unused). */
  readonly database: string | undefined;
}

export interface Composition {
  readonly store: Store;
  readonly services: Services;
}

export async function openStore(config: StoreConfig): Promise<Store> {
  return config.database === undefined ? SqliteStore.open({ location: config.location }) : PostgresStore.open({ url: config.database });
}

/** Where the data lives, in words (the URL without its password). */
export function describeStore(config: StoreConfig): string {
  if (config.database !== undefined) {
    const url = new URL(config.database);
    if (url.password !== '') url.password = '***';
    return `PostgreSQL ${url.href}, every acknowledged write durable in the database`;
  }
  return config.location === undefined ? 'in memory, nothing is kept' : `${config.location}, every acknowledged write fsync-durable`;
}

export async function compose(config: StoreConfig): Promise<Composition> {
  const store = await openStore(config);
  return { store, services: createServices(store) };
}
