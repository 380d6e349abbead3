// The engine switch: `--database postgres://…` selects PostgreSQL, otherwise the embedded SQLite
// engine keeps its data under `--location` (or in memory).
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export interface EngineConfig {
  /** SQLite's data directory; undefined keeps everything in memory. */
  readonly location: string | undefined;
  /** A PostgreSQL connection URL; when set, `location` is unused. */
  readonly database: string | undefined;
}

export function openStore(config: EngineConfig): Promise<Store> {
  return config.database === undefined ? SqliteStore.open({ location: config.location }) : PostgresStore.open({ url: config.database });
}

/** Where the data lives, for the startup banner (the URL without its password). */
export function describeStore(config: EngineConfig): string {
  if (config.database !== undefined) {
    const url = new URL(config.database);
    if (url.password !== '') url.password = '***';
    return `PostgreSQL ${url.href}, every acknowledged write durable in the database`;
  }
  return config.location === undefined ? 'in memory, nothing is kept' : `${config.location}, every acknowledged write fsync-durable`;
}
