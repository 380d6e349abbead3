// The servers under test, each in its own child process on 127.0.0.1 with a free port:
// Cerulean on SQLite, Cerulean on PostgreSQL with one and with two processes over one database
// (the client sends requests round-robin to the two), Azurite in memory, Azurite on disk, and the
// bare node:http ceiling.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { devAccountName, type Endpoint } from './client.js';

export const serverKinds = [
  'cerulean',
  'cerulean-pg',
  'cerulean-pg-2',
  'azurite-disk',
  'azurite-memory',
  'bare',
  'cerulean-unobserved',
] as const;
/** Run unless --servers names others; cerulean-unobserved only measures what metrics cost. */
export const defaultServerKinds: readonly ServerKind[] = [
  'cerulean',
  'cerulean-pg',
  'cerulean-pg-2',
  'azurite-disk',
  'azurite-memory',
  'bare',
];
export type ServerKind = (typeof serverKinds)[number];

export const serverLabels: Readonly<Record<ServerKind, string>> = {
  cerulean: 'Cerulean',
  'cerulean-pg': 'Cerulean on PostgreSQL',
  'cerulean-pg-2': 'Cerulean on PostgreSQL, 2 processes',
  'azurite-disk': 'Azurite (disk)',
  'azurite-memory': 'Azurite (memory)',
  bare: 'bare node:http',
  'cerulean-unobserved': 'Cerulean --no-metrics',
};

/** The kinds that keep their data in PostgreSQL: each gets a database of its own. */
export const postgresKinds: readonly ServerKind[] = ['cerulean-pg', 'cerulean-pg-2'];

export interface BenchServer {
  readonly kind: ServerKind;
  readonly endpoint: Endpoint;
  /** Its processes (two for cerulean-pg-2). */
  readonly pids: readonly number[];
  /** Why the process ended on its own, if it did. */
  exitReason(): string | undefined;
  /** The exit reason if the process ends within `ms` (a reset connection often precedes the exit event). */
  exitWithin(ms: number): Promise<string | undefined>;
  /** Records that a run just wrote to this server, so its background save is still to come. */
  noteWrites(): void;
  /** When a background save triggered by the last writes will have started. */
  backgroundWorkDueAt(): number;
  stop(): Promise<void>;
}

interface LaunchSpec {
  args: string[];
  /** Matches the line that says the server is ready; groups 1 and 2 are host and port. */
  ready: RegExp;
  /** Interval of a timer-driven background save, 0 if the server has none. */
  flushIntervalMs: number;
  /** Processes to start with these arguments, each on its own port (default 1). */
  processes?: number;
}

const readyTimeoutMs = 60_000;
const stopTimeoutMs = 5_000;
const outputLinesKept = 20;
/** LokiJS autosave interval of Azurite's table store (LokiTableMetadataStore). */
const azuriteAutosaveMs = 5_000;
/** Slack for a save timer tick that fires late. */
const flushTickMarginMs = 100;

/** `database`: the PostgreSQL URL for the PostgreSQL kinds. */
export async function startServer(
  kind: ServerKind,
  repoRoot: string,
  dataDir: string,
  database?: string,
): Promise<BenchServer> {
  const spec = await launchSpec(kind, repoRoot, dataDir, database);
  const processes: Launched[] = [];
  try {
    for (let i = 0; i < (spec.processes ?? 1); i++) processes.push(await launch(spec, dataDir));
  } catch (error) {
    await Promise.all(processes.map((launched) => launched.stop()));
    throw error;
  }
  const [first, ...more] = processes as [Launched, ...Launched[]];
  let writesEndedAt = Number.NEGATIVE_INFINITY;
  const exitReason = () => processes.map((launched) => launched.exitReason()).find((reason) => reason !== undefined);
  return {
    kind,
    endpoint: {
      host: first.host,
      port: first.port,
      account: devAccountName,
      morePorts: more.map((launched) => launched.port),
    },
    pids: processes.map((launched) => launched.pid),
    exitReason,
    exitWithin: async (ms) => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ...processes.map((launched) => launched.exited),
        new Promise((resolve) => (timer = setTimeout(resolve, ms))),
      ]);
      clearTimeout(timer);
      return exitReason();
    },
    noteWrites: () => (writesEndedAt = Date.now()),
    // The save timer ticks every interval; the first tick after the writes does the save.
    backgroundWorkDueAt: () =>
      spec.flushIntervalMs === 0 ? Number.NEGATIVE_INFINITY : writesEndedAt + spec.flushIntervalMs + flushTickMarginMs,
    stop: async () => {
      await Promise.all(processes.map((launched) => launched.stop()));
    },
  };
}

interface Launched {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  readonly exited: Promise<void>;
  exitReason(): string | undefined;
  stop(): Promise<void>;
}

async function launch(spec: LaunchSpec, dataDir: string): Promise<Launched> {
  const child = spawn(process.execPath, spec.args, { cwd: dataDir, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  let exitReason: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      const error = [...output].reverse().find((line) => /error|fatal|out of memory/i.test(line));
      const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
      exitReason = error ? `${how} (${error})` : how;
      resolve();
    }),
  );
  const readyLine = waitForLine(child, output, spec.ready, exited);
  let match: RegExpExecArray;
  try {
    match = await readyLine;
  } catch (error) {
    await stopChild(child, exited);
    throw error;
  }
  const host = match[1]!;
  if (!isLoopback(host)) {
    await stopChild(child, exited);
    throw new Error(`${spec.args[0]} listens on ${host}, not on loopback`);
  }
  return {
    host,
    port: Number(match[2]),
    pid: child.pid!,
    exited,
    exitReason: () => exitReason,
    stop: () => stopChild(child, exited),
  };
}

async function launchSpec(
  kind: ServerKind,
  repoRoot: string,
  dataDir: string,
  database: string | undefined,
): Promise<LaunchSpec> {
  const cerulean = (store: string[]) => ({
    args: [path.join(repoRoot, 'bin/cerulean.js'), '--port', '0', ...store],
    ready: /Cerulean listening on http:\/\/([^\s/]+):(\d+)\//,
    flushIntervalMs: 0,
  });
  switch (kind) {
    case 'cerulean':
      return cerulean(['--location', dataDir]);
    case 'cerulean-unobserved':
      return cerulean(['--location', dataDir, '--no-metrics']);
    case 'cerulean-pg':
    case 'cerulean-pg-2':
      if (database === undefined) throw new Error('no PostgreSQL database for it');
      return { ...cerulean(['--database', database]), processes: kind === 'cerulean-pg-2' ? 2 : 1 };
    case 'azurite-disk':
    case 'azurite-memory': {
      const main = path.join(repoRoot, 'node_modules/azurite/dist/src/table/main.js');
      if (!existsSync(main)) throw new Error(`Azurite is not installed (${main} missing)`);
      const port = await freeLoopbackPort();
      // Azurite refuses --location together with --inMemoryPersistence.
      const persistence = kind === 'azurite-memory' ? ['--inMemoryPersistence'] : ['--location', dataDir];
      return {
        args: [
          main,
          ...persistence,
          '--tableHost',
          '127.0.0.1',
          '--tablePort',
          String(port),
          '--disableTelemetry',
          '--silent',
        ],
        ready: /successfully started on ([\d.]+):(\d+)/,
        flushIntervalMs: kind === 'azurite-disk' ? azuriteAutosaveMs : 0,
      };
    }
    case 'bare':
      return {
        args: [path.join(repoRoot, 'dist/bench/bare-server.js')],
        ready: /listening on http:\/\/([\d.]+):(\d+)\//,
        flushIntervalMs: 0,
      };
    default: {
      const unknown: never = kind;
      throw new Error(`unknown server kind ${String(unknown)}`);
    }
  }
}

function waitForLine(
  child: ChildProcess,
  output: string[],
  ready: RegExp,
  exited: Promise<void>,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let found = false;
    const onLine = (line: string): void => {
      output.push(line);
      if (output.length > outputLinesKept) output.shift();
      const match = ready.exec(line);
      if (match && !found) {
        found = true;
        clearTimeout(timer);
        resolve(match);
      }
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let pending = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        const lines = (pending + chunk).split('\n');
        pending = lines.pop()!;
        for (const line of lines) onLine(line.trim());
      });
    }
    const timer = setTimeout(
      () => reject(new Error(`not ready within ${readyTimeoutMs} ms: ${output.join(' | ')}`)),
      readyTimeoutMs,
    );
    void exited.then(() => {
      clearTimeout(timer);
      if (!found) reject(new Error(`exited before it was ready: ${output.join(' | ')}`));
    });
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
  await exited;
  clearTimeout(timer);
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const quietSampleMs = 100;
/** CPU clock ticks (normally 10 ms each) all servers together may use per sample to count as idle. */
const quietTicksMax = 1;
/** A save writes in bursts with idle gaps: after one, ask for this many quiet samples in a row. */
const quietSamplesAfterFlush = 3;

/**
 * Before a run on `next`: waits until no other server still owes a background save, then
 * until all servers sat idle, so leftover work (a save, an aborted scan) does not land in
 * the next measurement. `next`'s own periodic save is part of its sustained write cost and
 * is not waited for. Reads CPU time from /proc; without it only the save deadlines count.
 */
export async function waitForQuiet(servers: readonly BenchServer[], next: BenchServer, maxMs: number): Promise<void> {
  const live = servers.filter((server) => server.exitReason() === undefined);
  const deadline = Date.now() + maxMs;
  const dueAt = Math.max(...live.filter((server) => server !== next).map((server) => server.backgroundWorkDueAt()));
  let quietSamplesNeeded = 1;
  if (dueAt > Date.now()) {
    await delay(Math.min(dueAt, deadline) - Date.now());
    quietSamplesNeeded = quietSamplesAfterFlush;
  }
  let before = cpuTicks(live);
  let quietSamples = 0;
  while (before !== undefined && Date.now() < deadline) {
    await delay(quietSampleMs);
    const after = cpuTicks(live);
    if (after === undefined) return;
    quietSamples = after - before <= quietTicksMax ? quietSamples + 1 : 0;
    if (quietSamples >= quietSamplesNeeded) return;
    before = after;
  }
}

function cpuTicks(servers: readonly BenchServer[]): number | undefined {
  let total = 0;
  for (const server of servers) {
    try {
      // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
      for (const pid of server.pids) {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += Number(fields[11]) + Number(fields[12]);
      }
    } catch {
      return undefined;
    }
  }
  return total;
}
