// Runs `node bin/cerulean.js <command> …` as a user types it, and Azurite (from node_modules) as a
// second Table endpoint for `cerulean copy`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { NodeProcess } from '../../scripts/server-process.mjs';
import { devAccount, devKey, freeLoopbackPort, makeTempDir, removeDir, startNodeProcess } from './server.js';

const binPath = fileURLToPath(new URL('../../../bin/cerulean.js', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const azuriteMain = fileURLToPath(new URL('../../../node_modules/azurite/dist/src/table/main.js', import.meta.url));
/** Generous: a command that needs seconds on a quiet machine needs many times that at load 16. */
const commandTimeoutMs = 180_000;

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  /** The reader of stdout is gone before the command writes (`cerulean … | head -0`). */
  closedStdout?: boolean;
}

/** The test runner's own endpoints must not leak into a command run without -c. */
const ignoredVariables = new Set(['AZURE_TABLES_CONNECTION_STRING', 'AZURE_STORAGE_CONNECTION_STRING']);

/** Runs the CLI to completion. Those variables and CERULEAN_* are not inherited. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).result;
}

/** Starts the CLI; `signal` sends it a signal as a terminal would (Ctrl-C: SIGINT). */
export function startCli(
  args: readonly string[],
  options: CliOptions = {},
): { result: Promise<CliResult>; signal(name: NodeJS.Signals): void } {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('CERULEAN_') && !ignoredVariables.has(name)) env[name] = value;
  }
  const child = spawn(process.execPath, [binPath, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...env, ...options.env },
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  if (options.closedStdout === true) child.stdout!.destroy();
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), commandTimeoutMs);
  const result = once(child, 'close').then(([code]) => {
    clearTimeout(timer);
    return { code: code as number | null, stdout, stderr };
  });
  return { result, signal: (name) => child.kill(name) };
}

/** For assertion messages. */
export function describeRun(result: CliResult): string {
  return `exit ${result.code}\nstdout:\n${result.stdout.slice(0, 4000)}\nstderr:\n${result.stderr.slice(0, 4000)}`;
}

export interface RunningAzurite {
  /** A connection string for its development account. */
  readonly connectionString: string;
  stop(): Promise<void>;
}

/** Azurite's Table service in memory on a free loopback port. */
export async function startAzurite(): Promise<RunningAzurite> {
  if (!existsSync(azuriteMain)) throw new Error(`Azurite is not installed (${azuriteMain} missing)`);
  const workDir = makeTempDir('cerulean-azurite-');
  // Azurite prints the port it was given, so `--tablePort 0` would leave the real one unknown.
  const port = await freeLoopbackPort();
  const args = [azuriteMain, '--inMemoryPersistence', '--tableHost', '127.0.0.1', '--tablePort', String(port)];
  let azurite: NodeProcess<true>;
  try {
    azurite = await startNodeProcess({
      name: 'Azurite',
      args: [...args, '--disableTelemetry'],
      cwd: workDir,
      ready: (line) => (line.includes('successfully started') ? true : undefined),
    });
  } catch (error) {
    removeDir(workDir);
    throw error;
  }
  const url = `http://127.0.0.1:${port}/devstoreaccount1`;
  return {
    connectionString:
      `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};` + `TableEndpoint=${url};`,
    async stop() {
      await azurite.stop().catch(() => undefined); // it needed SIGKILL, but it is stopped
      removeDir(workDir);
    },
  };
}

const azuriteAccountMain = fileURLToPath(new URL('../../../node_modules/azurite/dist/src/azurite.js', import.meta.url));

/** Azurite's three services (one process) in memory on free loopback ports: a whole account's connection string. */
export async function startAzuriteAccount(): Promise<RunningAzurite> {
  if (!existsSync(azuriteAccountMain)) throw new Error(`Azurite is not installed (${azuriteAccountMain} missing)`);
  const workDir = makeTempDir('cerulean-azurite-account-');
  const [blobPort, queuePort, tablePort] = [
    await freeLoopbackPort(),
    await freeLoopbackPort(),
    await freeLoopbackPort(),
  ];
  const ports = { blob: blobPort, queue: queuePort, table: tablePort };
  const args = [azuriteAccountMain, '--inMemoryPersistence', '--silent', '--skipApiVersionCheck', '--disableTelemetry'];
  for (const [service, port] of Object.entries(ports))
    args.push(`--${service}Host`, '127.0.0.1', `--${service}Port`, String(port));
  let started = 0;
  let azurite: NodeProcess<true>;
  try {
    azurite = await startNodeProcess({
      name: 'Azurite',
      args,
      cwd: workDir,
      // One line per service: "Azurite Blob service is successfully listening at …"
      ready: (line) => (/successfully listening/.test(line) && ++started === 3 ? true : undefined),
    });
  } catch (error) {
    removeDir(workDir);
    throw error;
  }
  const url = (port: number) => `http://127.0.0.1:${port}/${devAccount}`;
  return {
    connectionString:
      `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};` +
      `BlobEndpoint=${url(blobPort)};QueueEndpoint=${url(queuePort)};TableEndpoint=${url(tablePort)};`,
    async stop() {
      await azurite.stop().catch(() => undefined); // it needed SIGKILL, but it is stopped
      removeDir(workDir);
    },
  };
}

/**
 * Entities with every EDM type at its extremes: Int64 limits, DateTime at both ends to 100 ns,
 * NaN, ±Infinity, -0, the largest and smallest doubles, empty and full binary, empty and
 * astral-plane strings, Guid, Boolean, and property sets that differ between entities.
 */
export function extremeEntities(): Record<string, unknown>[] {
  const typed = (type: string, value: string) => ({ type, value });
  return [
    {
      partitionKey: 'edge',
      rowKey: 'max',
      i64: typed('Int64', '9223372036854775807'),
      i32: 2147483647,
      dbl: typed('Double', '1.7976931348623157e308'),
      tiny: typed('Double', '5e-324'),
      whole: typed('Double', '2.0'),
      when: typed('DateTime', '9999-12-31T23:59:59.9999999Z'),
      bytes: typed('Binary', Buffer.from([0, 1, 127, 128, 254, 255]).toString('base64')),
      text: 'a\u{1F600}b\u{1D11E}c \u00e9\u20ac "quoted", comma\nnew line',
      id: typed('Guid', '0f8fad5b-d9cb-469f-a165-70867728950e'),
      yes: true,
    },
    {
      partitionKey: 'edge',
      rowKey: 'min',
      i64: typed('Int64', '-9223372036854775808'),
      i32: -2147483648,
      dbl: typed('Double', '-1.7976931348623157e308'),
      negzero: typed('Double', '-0.0'),
      when: typed('DateTime', '1601-01-01T00:00:00.0000001Z'),
      bytes: typed('Binary', ''),
      text: '',
      no: false,
    },
    {
      partitionKey: 'edge',
      rowKey: 'special',
      nan: typed('Double', 'NaN'),
      inf: typed('Double', 'Infinity'),
      ninf: typed('Double', '-Infinity'),
      when: typed('DateTime', '1601-01-01T00:00:00Z'),
      astral: '\u{10FFFF}\u{1F4A9}',
      spaces: '  leading and trailing  ',
    },
    { partitionKey: '', rowKey: 'empty partition key, no properties' },
  ];
}

/** JSON lines with Timestamp removed and properties in name order, for comparing exports. */
export function comparableLines(jsonl: string): string[] {
  return jsonl
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const entity = JSON.parse(line) as Record<string, unknown>;
      delete entity['Timestamp'];
      // Re-read number literals exactly as written: JSON.parse would lose -0.0's sign and `.0`.
      const literals = new Map<string, string>();
      for (const match of line.matchAll(/"([^"\\]+)":(-?[\d.eE+-]+)[,}]/g)) literals.set(match[1]!, match[2]!);
      const sorted = Object.keys(entity)
        .sort()
        .map((name) => `${JSON.stringify(name)}:${literals.get(name) ?? JSON.stringify(entity[name])}`);
      return `{${sorted.join(',')}}`;
    })
    .sort();
}
