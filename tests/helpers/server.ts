// Runs the real `cerulean` process for system tests: spawn, wait for the listening line,
// stop with SIGTERM or SIGKILL. Each server gets its own temp dir unless told otherwise.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createDatabase, databaseFor, dropDatabase, testDatabaseUrl } from './postgres.js';

/** The well-known development account (Azure REST: authorize-with-shared-key); the server always has it. */
export const devAccount = 'devstoreaccount1';
export const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

const binPath = fileURLToPath(new URL('../../../bin/cerulean.js', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const startTimeoutMs = 20_000;
const stopTimeoutMs = 10_000;
const listeningPrefix = 'Cerulean listening on ';
const connectionStringPrefix = 'Connection string: ';

export interface ServerOptions {
  /** Pass `--in-memory`. */
  inMemory?: boolean;
  /** Pass `--location DIR` (the caller owns DIR). */
  location?: string;
  /** Extra environment; `undefined` removes a variable. CERULEAN_* and AZURITE_ACCOUNTS are never inherited. */
  env?: Record<string, string | undefined>;
  /** Extra arguments. `--port 0` and a temp `--location` are added only when neither args nor env choose them. */
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
 * CERULEAN_TEST_ENGINE=postgres runs a test file written for SQLite on PostgreSQL instead (see
 * tests/system/postgres-engine.test.ts): in memory becomes a fresh database, and a data directory
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
  /** `http://HOST:PORT/devstoreaccount1`, as printed. */
  readonly url: string;
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

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return once(child, 'exit').then(([code]) => code as number | null);
}

async function waitForExit(child: ChildProcess, what: string): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not exit within ${stopTimeoutMs} ms after ${what}`));
    }, stopTimeoutMs);
  });
  try {
    return await Promise.race([exitOf(child), timeout]);
  } finally {
    clearTimeout(timer);
  }
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
  const child = spawn(process.execPath, [binPath, ...args], {
    cwd: options.cwd ?? repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const output = () => ({ stdout, stderr });
  const cleanup = () => {
    if (ownedDir !== undefined) removeDir(ownedDir);
  };
  child.once('exit', cleanup);

  const ready = new Promise<{ url: string; connectionString: string }>((resolve, reject) => {
    let url: string | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout += line + '\n';
      if (line.startsWith(listeningPrefix)) url = line.slice(listeningPrefix.length).trim();
      else if (line.startsWith(connectionStringPrefix) && url !== undefined) {
        resolve({ url, connectionString: line.slice(connectionStringPrefix.length).trim() });
      }
    });
    child.once('exit', (code, signal) =>
      reject(
        new Error(
          `server exited (code ${code}, signal ${signal}) before listening\nargs: ${args.join(' ')}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      ),
    );
    child.once('error', reject);
    setTimeout(
      () =>
        reject(new Error(`server not listening after ${startTimeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`)),
      startTimeoutMs,
    ).unref();
  });

  let started: { url: string; connectionString: string };
  try {
    started = await ready;
  } catch (error) {
    child.kill('SIGKILL');
    await exitOf(child);
    await dropFresh();
    throw error;
  }
  const parsed = new URL(started.url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port),
    url: started.url,
    connectionString: started.connectionString,
    process: child,
    output,
    stop: async () => {
      child.kill('SIGTERM');
      try {
        return await waitForExit(child, 'SIGTERM');
      } finally {
        await dropFresh();
      }
    },
    kill9: async () => {
      child.kill('SIGKILL');
      try {
        await waitForExit(child, 'SIGKILL');
      } finally {
        await dropFresh();
      }
    },
  };
}
