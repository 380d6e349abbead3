// Composition: configuration → store → services, shared by the server (main.ts) and every tool
// that works on a store. Process concerns (signals, the banner, listening) stay with the caller.
import type { ScanSplit } from './config.js';
import type { QueryService } from './service/query.js';
import { createServices, type Services } from './service/services.js';
import assert from 'node:assert/strict';
import { ReplicationWatch } from './storage/postgres/replication.js';
import { describeDatabaseUrl } from './storage/postgres/hosts.js';
import { PostgresStore } from './storage/postgres/postgres-store.js';
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
  readonly services: Services;
  /** The read-access secondary's services, over a hot standby (with --secondary-database). */
  readonly secondary?: Secondary | undefined;
}

export interface Secondary {
  readonly services: Services;
  readonly replication: ReplicationSource;
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
  return config.location === undefined ? 'in memory, nothing is kept' : `${config.location}, every acknowledged write fsync-durable`;
}

export async function openStore(config: StoreConfig, onCommit?: CommitObserver): Promise<Store> {
  return config.database === undefined
    ? SqliteStore.open({ location: config.location, onCommit, scanSplit: config.scanSplit, autoIndexRows: config.autoIndexRows })
    : PostgresStore.open({ url: config.database, onCommit, autoIndexRows: config.autoIndexRows });
}

export async function compose(config: StoreConfig, watch?: Watch): Promise<Composition> {
  const engine = await openStore(config, watch?.onCommit);
  const secondary = await openSecondary(config, engine).catch(async (error: unknown) => {
    await engine.close();
    throw error;
  });
  if (watch === undefined) return { store: engine, services: createServices(engine), secondary };
  watch.replication = secondary?.replication;
  const store = watch.store(engine);
  return { store, services: { ...createServices(store), queries: watch.queries(store) }, secondary };
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
