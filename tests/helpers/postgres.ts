// The PostgreSQL database of the test run: `npm test` (scripts/test.mjs) starts a throwaway
// cluster and names it in CERULEAN_TEST_DATABASE_URL. Each test server gets a database of its own.
import { createHash, randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';

const urlVariable = 'CERULEAN_TEST_DATABASE_URL';

/** The cluster's admin URL, or undefined when this run has no PostgreSQL. */
export function testDatabaseUrl(): string | undefined {
  const url = process.env[urlVariable];
  return url === undefined || url === '' ? undefined : url;
}

/**
 * Why the PostgreSQL tests cannot run, for `skip`: undefined when they can. Under CI a missing
 * database is a failure, not a skip.
 */
export function postgresUnavailable(): string | undefined {
  if (testDatabaseUrl() !== undefined) return undefined;
  const reason = `${urlVariable} is not set (npm test sets it when PostgreSQL's server binaries are installed)`;
  if (process.env['CI']) throw new Error(`CI is set but the PostgreSQL tests cannot run: ${reason}`);
  return `SKIPPED: ${reason}`;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = testDatabaseUrl();
  if (url === undefined) throw new Error(`${urlVariable} is not set`);
  return onDatabase(url, work);
}

/** `work` on one connection to the database at `url`, closed afterwards. */
export async function onDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(testDatabaseUrl()!);
  url.pathname = `/${name}`;
  return url.href;
}

/** A new empty database; its URL. */
export async function createDatabase(): Promise<string> {
  const name = `cerulean_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  return databaseUrl(name);
}

/** The database that stands for a SQLite data directory: the same directory, the same database. */
export async function databaseFor(dir: string): Promise<string> {
  const name = `cerulean_dir_${createHash('sha256').update(dir).digest('hex').slice(0, 16)}`;
  await admin(async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  });
  return databaseUrl(name);
}

/** Drops the database of `url`, disconnecting whoever is still connected. */
export async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * A PostgreSQL store on a database of its own, which closing the store drops. With `url`, a store
 * over that existing database instead (a second process's view of it), which closing leaves.
 */
export async function openPostgresStore(
  options: { url?: string; stepExamineMax?: number; autoIndexRows?: number } = {},
): Promise<PostgresStore> {
  const url = options.url ?? (await createDatabase());
  const store = await PostgresStore.open({
    url,
    stepExamineMax: options.stepExamineMax,
    autoIndexRows: options.autoIndexRows,
  });
  if (options.url !== undefined) return store;
  const close = store.close.bind(store);
  return Object.assign(store, {
    close: async () => {
      await close();
      await dropDatabase(url);
    },
  });
}

/** Two stores over one new database: two processes' views of it. `close` closes both and drops it. */
export interface TwoStores {
  readonly url: string;
  readonly first: PostgresStore;
  readonly second: PostgresStore;
  close(): Promise<void>;
}

export async function openTwoStores(): Promise<TwoStores> {
  const url = await createDatabase();
  const [first, second] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
  return {
    url,
    first,
    second,
    close: async () => {
      await Promise.all([first.close(), second.close()]);
      await dropDatabase(url);
    },
  };
}

/** Inside a describe: two stores over a new database, opened before its tests and closed after. */
export function twoStoresForSuite(): TwoStores {
  let stores: TwoStores | undefined;
  before(async () => {
    stores = await openTwoStores();
  });
  after(() => stores?.close());
  const open = () => {
    assert.ok(stores !== undefined, 'the stores open before the tests');
    return stores;
  };
  return {
    get url() {
      return open().url;
    },
    get first() {
      return open().first;
    },
    get second() {
      return open().second;
    },
    close: () => open().close(),
  };
}
