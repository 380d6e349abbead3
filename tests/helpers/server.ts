// Runs the real `cerulean` process for system tests: spawn, wait for its banner, stop with SIGTERM
// or SIGKILL (scripts/server-process.mjs does that, for the benchmarks and the toolkit too). Each
// server gets its own temp dir unless told otherwise.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as ServerProcess from '../../scripts/server-process.mjs';
import { createDatabase, databaseFor, dropDatabase, testDatabaseUrl } from './postgres.js';

// From dist/tests/helpers/ at run time: the module lives in the repository, not in dist/.
const serverProcessUrl = new URL('../../../scripts/server-process.mjs', import.meta.url);
const serverProcess = (await import(serverProcessUrl.href)) as typeof ServerProcess;
const { startCerulean } = serverProcess;
/** For other servers the tests start (Azurite, an installed package). */
export const { freeLoopbackPort, startNodeProcess, ceruleanBanner, repoRoot } = serverProcess;

/** The well-known development account (Azure REST: authorize-with-shared-key); the server always has it. */
export const devAccount = 'devstoreaccount1';
export const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface ServerOptions {
  /** Pass `--in-memory`. */
  inMemory?: boolean;
  /** Pass `--location DIR` (the caller owns DIR). */
  location?: string;
  /** Extra environment; `undefined` removes a variable. CERULEAN_* and AZURITE_ACCOUNTS are never inherited. */
  env?: Record<string, string | undefined>;
  /**
   * Extra arguments. `--port 0`, `--queue-port 0`, `--blob-port 0` (parallel tests must not collide on the default
   * ports) and a temp `--location` are added only when neither args nor env choose them.
   */
  args?: string[];
  /** Working directory of the process (default: the repository root). */
  cwd?: string;
  /**
   * The PostgreSQL engine: `--database URL`, or 'fresh' for a new database of the test cluster,
   * dropped when the server stops (tests/helpers/postgres.ts).
   */
  database?: string | 'fresh';
}

/**
 * The engines a system test runs its server on: SQLite (the default), and a fresh database of the
 * test cluster when there is one.
 */
export const serverEngines: readonly { readonly label: string; readonly options: ServerOptions }[] = [
  { label: 'SQLite', options: {} },
  ...(testDatabaseUrl() === undefined ? [] : [{ label: 'PostgreSQL', options: { database: 'fresh' } }]),
];

/**
 * CERULEAN_TEST_ENGINE=postgres runs a test file written for SQLite on PostgreSQL instead (see
 * tests/system/server/postgres-engine.test.ts): in memory becomes a fresh database, and a data directory
 * a database of its own, the same one each time the directory is named.
 */
async function onEngineUnderTest(options: ServerOptions): Promise<ServerOptions> {
  if (process.env['CERULEAN_TEST_ENGINE'] !== 'postgres' || options.database !== undefined) return options;
  const args = (options.args ?? []).filter((arg) => arg !== '--in-memory');
  const database = options.location === undefined ? 'fresh' : await databaseFor(options.location);
  return { ...options, args, inMemory: false, location: undefined, database };
}

/**
 * Both storage setups whose read paths differ: in memory everything runs on the HTTP thread; on
 * disk, conditional scans run on the scan threads.
 */
export const storeSetups: readonly { readonly label: string; readonly options: ServerOptions }[] = [
  { label: 'in-memory store', options: { inMemory: true } },
  { label: 'on-disk store', options: {} },
  ...(testDatabaseUrl() === undefined ? [] : [{ label: 'PostgreSQL store', options: { database: 'fresh' } }]),
];

export interface RunningServer {
  readonly host: string;
  readonly port: number;
  /** `http://HOST:PORT/devstoreaccount1`, as printed: the Table service. */
  readonly url: string;
  /** The Queue service's endpoint as printed; undefined when the server serves no queues. */
  readonly queueUrl: string | undefined;
  /** The Blob service's endpoint as printed; undefined when the server serves no blobs. */
  readonly blobUrl: string | undefined;
  readonly connectionString: string;
  readonly process: ChildProcess;
  /** What the process printed so far (for failure messages). */
  output(): { stdout: string; stderr: string };
  /** SIGTERM and wait; resolves to the exit code (null if killed by a signal). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait: no chance to flush anything. */
  kill9(): Promise<void>;
}

/** A fresh empty directory under the OS temp dir; remove it with removeDir. */
export function makeTempDir(prefix = 'cerulean-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

function serverEnv(extra: ServerOptions['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('CERULEAN_') && name !== 'AZURITE_ACCOUNTS') env[name] = value;
  }
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

interface ArgPlan {
  args: string[];
  ownedDir: string | undefined;
}

function planArgs(options: ServerOptions, env: NodeJS.ProcessEnv): ArgPlan {
  const given = options.args ?? [];
  const args: string[] = [];
  if (!given.includes('--port') && env.CERULEAN_PORT === undefined) args.push('--port', '0');
  if (!given.includes('--queue-port') && env.CERULEAN_QUEUE_PORT === undefined) args.push('--queue-port', '0');
  if (!given.includes('--blob-port') && env.CERULEAN_BLOB_PORT === undefined) args.push('--blob-port', '0');
  let ownedDir: string | undefined;
  if (options.database !== undefined) args.push('--database', options.database);
  else if (options.inMemory) args.push('--in-memory');
  else if (options.location !== undefined) args.push('--location', options.location);
  else if (
    !given.includes('--location') &&
    !given.includes('--in-memory') &&
    env.CERULEAN_LOCATION === undefined &&
    env.CERULEAN_IN_MEMORY === undefined &&
    env.CERULEAN_DATABASE_URL === undefined
  ) {
    ownedDir = makeTempDir();
    args.push('--location', ownedDir);
  }
  return { args: [...args, ...given], ownedDir };
}

/** Spawns `node bin/cerulean.js …` and resolves once it printed its listening and connection-string lines. */
export async function startServer(requested: ServerOptions = {}): Promise<RunningServer> {
  let options = await onEngineUnderTest(requested);
  const freshDatabase = options.database === 'fresh' ? await createDatabase() : undefined;
  if (freshDatabase !== undefined) options = { ...options, database: freshDatabase };
  const dropFresh = async () => {
    if (freshDatabase !== undefined) await dropDatabase(freshDatabase);
  };
  const env = serverEnv(options.env);
  const { args, ownedDir } = planArgs(options, env);
  let server: ServerProcess.NodeProcess<ServerProcess.CeruleanBanner>;
  try {
    server = await startCerulean({ args, env, cwd: options.cwd ?? repoRoot, name: 'server' });
  } catch (error) {
    if (ownedDir !== undefined) removeDir(ownedDir);
    await dropFresh();
    throw error;
  }
  const ended = server.exited.then(() => {
    if (ownedDir !== undefined) removeDir(ownedDir);
  });
  const { url, queueUrl, blobUrl, host, port, connectionString } = server.ready;
  const thenDropFresh = async <T>(stopping: Promise<T>): Promise<T> => {
    try {
      return await stopping;
    } finally {
      await ended;
      await dropFresh();
    }
  };
  return {
    host,
    port,
    url,
    queueUrl,
    blobUrl,
    connectionString,
    process: server.process,
    output: server.output,
    stop: () => thenDropFresh(server.stop()),
    kill9: () => thenDropFresh(server.kill9()),
  };
}
