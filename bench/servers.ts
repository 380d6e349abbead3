// The servers under test, each in its own child process on 127.0.0.1 with a free port:
// Cerulean on SQLite, Cerulean on PostgreSQL with one and with two processes over one database
// (the client sends requests round-robin to the two), Azurite in memory, Azurite on disk, and the
// bare node:http ceiling.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { devAccountName, type Endpoint } from './client.js';
import type { BlobEndpoint } from './blob-client.js';
import type { QueueEndpoint } from './queue-client.js';
import type * as ServerProcess from '../scripts/server-process.mjs';

// From dist/bench/ at run time: the module lives in the repository, not in dist/.
const serverProcessUrl = new URL('../../scripts/server-process.mjs', import.meta.url);
const { ceruleanBanner, freeLoopbackPort, startCerulean, startNodeProcess } = (await import(
  serverProcessUrl.href
)) as typeof ServerProcess;

export type CeruleanProcess = ServerProcess.NodeProcess<ServerProcess.CeruleanBanner>;

/** One Cerulean on SQLite in `location`, logging only warnings: for the benchmarks that drive one server. */
export function startCeruleanAt(location: string): Promise<CeruleanProcess> {
  return startCerulean({ args: ['--port', '0', '--location', location, '--log-level', 'warn'], name: 'cerulean' });
}

export const serverKinds = [
  'cerulean',
  'cerulean-pg',
  'cerulean-pg-2',
  'azurite-disk',
  'azurite-memory',
  'bare',
  'bare-disk',
  'cerulean-unobserved',
  'cerulean-other',
] as const;
/**
 * Run unless --servers names others; cerulean-unobserved only measures what metrics cost, and
 * cerulean-other compares this build with another checkout's (otherCheckoutVariable).
 */
export const defaultServerKinds: readonly ServerKind[] = [
  'cerulean',
  'cerulean-pg',
  'cerulean-pg-2',
  'azurite-disk',
  'azurite-memory',
  'bare',
  'bare-disk',
];
export type ServerKind = (typeof serverKinds)[number];

export const serverLabels: Readonly<Record<ServerKind, string>> = {
  cerulean: 'Cerulean',
  'cerulean-pg': 'Cerulean on PostgreSQL',
  'cerulean-pg-2': 'Cerulean on PostgreSQL, 2 processes',
  'azurite-disk': 'Azurite (disk)',
  'azurite-memory': 'Azurite (memory)',
  bare: 'bare node:http',
  'bare-disk': 'bare node:http, blobs to files (fsync)',
  'cerulean-unobserved': 'Cerulean --no-metrics',
  'cerulean-other': 'Cerulean of the other checkout',
};

/**
 * The checkout (compiled: its bin/ and dist/, its node_modules) the cerulean-other server runs, e.g.
 * a worktree of an earlier commit, to compare two builds of Cerulean in one interleaved run.
 */
export const otherCheckoutVariable = 'CERULEAN_BENCH_OTHER';

/** The kinds that keep their data in PostgreSQL: each gets a database of its own. */
export const postgresKinds: readonly ServerKind[] = ['cerulean-pg', 'cerulean-pg-2'];

export interface BenchServer {
  readonly kind: ServerKind;
  readonly endpoint: Endpoint;
  /** Its Queue service, if it serves one (Azurite's runs in a process of its own). */
  readonly queue?: QueueEndpoint;
  /** Its Blob service, if it serves one (Azurite's runs in a process of its own). */
  readonly blob?: BlobEndpoint;
  /** The process serving the Blob service, whose memory the 1 GiB upload samples. */
  readonly blobPid?: number;
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

interface ReadyAt {
  host: string;
  port: number;
  /** The Queue service's endpoint, when the same process serves it. */
  queue?: { host: string; port: number };
  /** The Blob service's endpoint, when the same process serves it. */
  blob?: { host: string; port: number };
}

type SideService = 'queue' | 'blob';

interface LaunchSpec {
  args: string[];
  /** A fresh reader of output lines that returns where the server listens once it is ready. */
  ready: () => (line: string) => ReadyAt | undefined;
  /** Processes of their own that serve the Queue and Blob services (Azurite's). */
  sideProcesses?: Partial<Record<SideService, LaunchSpec>>;
  /** Interval of a timer-driven background save, 0 if the server has none. */
  flushIntervalMs: number;
  /** Processes to start with these arguments, each on its own port (default 1). */
  processes?: number;
}

const readyTimeoutMs = 60_000;
const stopTimeoutMs = 5_000;
/** Characters of each output stream kept to explain an exit (a long run must not hoard its log). */
const outputCharsKept = 8_192;
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
  const side: Partial<Record<SideService, Launched>> = {};
  try {
    for (const [service, sideSpec] of Object.entries(spec.sideProcesses ?? {}) as [SideService, LaunchSpec][]) {
      side[service] = await launch(sideSpec, dataDir);
      processes.push(side[service]);
    }
  } catch (error) {
    await Promise.all(processes.map((launched) => launched.stop()));
    throw error;
  }
  const queueAt = side.queue ?? first.queue;
  const blobAt = side.blob ?? first.blob;
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
    ...(queueAt === undefined ? {} : { queue: { host: queueAt.host, port: queueAt.port, account: devAccountName } }),
    ...(blobAt === undefined
      ? {}
      : { blob: { host: blobAt.host, port: blobAt.port, account: devAccountName }, blobPid: (side.blob ?? first).pid }),
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
  readonly queue: { host: string; port: number } | undefined;
  readonly blob: { host: string; port: number } | undefined;
  readonly exited: Promise<void>;
  exitReason(): string | undefined;
  stop(): Promise<void>;
}

async function launch(spec: LaunchSpec, dataDir: string): Promise<Launched> {
  const started = await startNodeProcess({
    args: spec.args,
    cwd: dataDir,
    startTimeoutMs: readyTimeoutMs,
    stopTimeoutMs,
    outputBytesMax: outputCharsKept,
    ready: spec.ready(),
  });
  let exitReason: string | undefined;
  const exited = started.exited.then(({ code, signal }) => {
    const { stdout, stderr } = started.output();
    const lines = [...stdout.split('\n'), ...stderr.split('\n')].reverse();
    const error = lines.find((line) => /error|fatal|out of memory/i.test(line))?.trim();
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    exitReason = error ? `${how} (${error})` : how;
  });
  // A server that needed SIGKILL to stop has stopped all the same.
  const stop = () =>
    started.stop().then(
      () => undefined,
      () => undefined,
    );
  const { host, port, queue, blob } = started.ready;
  if (![host, queue?.host, blob?.host].every((name) => name === undefined || isLoopback(name))) {
    await stop();
    throw new Error(`${spec.args[0]} listens on ${host}, not on loopback`);
  }
  return { host, port, queue, blob, pid: started.process.pid!, exited, exitReason: () => exitReason, stop };
}

async function launchSpec(
  kind: ServerKind,
  repoRoot: string,
  dataDir: string,
  database: string | undefined,
): Promise<LaunchSpec> {
  const cerulean = (store: string[], root = repoRoot) => ({
    args: [path.join(root, 'bin/cerulean.js'), '--port', '0', '--queue-port', '0', '--blob-port', '0', ...store],
    ready: ceruleanReady,
    flushIntervalMs: 0,
  });
  switch (kind) {
    case 'cerulean':
      return cerulean(['--location', dataDir]);
    case 'cerulean-unobserved':
      return cerulean(['--location', dataDir, '--no-metrics']);
    case 'cerulean-other': {
      const other = process.env[otherCheckoutVariable];
      if (other === undefined || !existsSync(path.join(other, 'bin/cerulean.js')))
        throw new Error(`${otherCheckoutVariable} names no checkout with bin/cerulean.js`);
      return cerulean(['--location', dataDir], other);
    }
    case 'cerulean-pg':
    case 'cerulean-pg-2':
      if (database === undefined) throw new Error('no PostgreSQL database for it');
      return { ...cerulean(['--database', database]), processes: kind === 'cerulean-pg-2' ? 2 : 1 };
    case 'azurite-disk':
    case 'azurite-memory': {
      // Azurite refuses --location together with --inMemoryPersistence.
      const persistence = kind === 'azurite-memory' ? ['--inMemoryPersistence'] : ['--location', dataDir];
      const flushIntervalMs = kind === 'azurite-disk' ? azuriteAutosaveMs : 0;
      const sideProcess = async (service: SideService) => ({
        args: [...(await azuriteArgs(repoRoot, service)), ...persistence],
        ready: byPattern(/successfully listens on http:\/\/([\d.]+):(\d+)/),
        flushIntervalMs,
      });
      return {
        args: [...(await azuriteArgs(repoRoot, 'table')), ...persistence],
        ready: byPattern(/successfully started on ([\d.]+):(\d+)/),
        flushIntervalMs,
        sideProcesses: { queue: await sideProcess('queue'), blob: await sideProcess('blob') },
      };
    }
    case 'bare':
    case 'bare-disk': {
      const ready = byPattern(/listening on http:\/\/([\d.]+):(\d+)\//);
      return {
        args: [path.join(repoRoot, 'dist/bench/bare-server.js'), ...(kind === 'bare' ? [] : ['--location', dataDir])],
        // It takes blob requests on its one port.
        ready: () => {
          const read = ready();
          return (line) => {
            const at = read(line);
            return at && { ...at, blob: { host: at.host, port: at.port } };
          };
        },
        flushIntervalMs: 0,
      };
    }
    default: {
      const unknown: never = kind;
      throw new Error(`unknown server kind ${String(unknown)}`);
    }
  }
}

/** Azurite's `service` (table, queue or blob) on a free loopback port, without telemetry or access log. */
async function azuriteArgs(repoRoot: string, service: 'table' | SideService): Promise<string[]> {
  const main = path.join(repoRoot, `node_modules/azurite/dist/src/${service}/main.js`);
  if (!existsSync(main)) throw new Error(`Azurite is not installed (${main} missing)`);
  const port = await freeLoopbackPort();
  return [main, `--${service}Host`, '127.0.0.1', `--${service}Port`, String(port), '--disableTelemetry', '--silent'];
}

/** Ready at the line `pattern` matches; groups 1 and 2 are host and port. */
function byPattern(pattern: RegExp): () => (line: string) => ReadyAt | undefined {
  return () => (line) => {
    const match = pattern.exec(line.trim());
    return match === null ? undefined : { host: match[1]!, port: Number(match[2]) };
  };
}

/** Cerulean's banner: the Table endpoint, and the Queue and Blob endpoints when it prints them. */
function ceruleanReady(): (line: string) => ReadyAt | undefined {
  const read = ceruleanBanner();
  const at = (url: string | undefined): { host: string; port: number } | undefined => {
    if (url === undefined) return undefined;
    const parsed = new URL(url);
    return { host: parsed.hostname, port: Number(parsed.port) };
  };
  return (line) => {
    const banner = read(line);
    if (banner === undefined) return undefined;
    const queue = at(banner.queueUrl);
    const blob = at(banner.blobUrl);
    return { host: banner.host, port: banner.port, ...(queue && { queue }), ...(blob && { blob }) };
  };
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
