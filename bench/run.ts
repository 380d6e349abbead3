// `npm run bench`: starts every server, preloads the same data into each, runs every
// scenario × concurrency in interleaved rounds, then writes bench/results/latest.{json,md} (or --report's name).
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { keepAliveAgent, TableHttpClient } from './client.js';
import { BlobHttpClient } from './blob-client.js';
import { measureUploadMemory, uploadRssProbe } from './blob-memory.js';
import { bareServes, blobScenarios as blockScenarios } from './blob-scenarios.js';
import { pageScenarios } from './page-scenarios.js';

/** The Blob service's scenarios: block and append blobs, then page blobs. */
const blobScenarios = [...blockScenarios, ...pageScenarios];
import { QueueHttpClient } from './queue-client.js';
import { queueScenarios } from './queue-scenarios.js';
import {
  bigDatasetCount,
  partitionDataset,
  preload,
  spreadDataset,
  type Dataset,
  type DatasetName,
} from './datasets.js';
import { runClosedLoop, type LoadPlan } from './load.js';
import { clockTicksPerSecond, cpuTicks } from './proc-stat.js';
import { parseOptions, type BenchOptions } from './options.js';
import { renderMarkdown, summarize, writeReport, type Report, type RunRecord } from './report.js';
import { bigScenarios, scenarios, type Scenario } from './scenarios.js';
import { benchPostgres, type BenchPostgres } from './postgres.js';
import { postgresKinds, startServer, waitForQuiet, type BenchServer, type ServerKind } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const resultsDirectory = path.join(repoRoot, 'bench/results');
/** Interleaving order of round 1; even rounds run it backwards. */
const roundOrder: readonly ServerKind[] = [
  'cerulean',
  'cerulean-other',
  'cerulean-unobserved',
  'cerulean-pg',
  'cerulean-pg-2',
  'azurite-memory',
  'azurite-disk',
];
/** The ceiling server answers any GET, so it runs the point-read request shape only. */
const ceilingScenario = 'point-read';
const requestTimeoutMs = 60_000;
const quietWaitMaxMs = 15_000;
const preloadConcurrency = 4;
const exitGraceMs = 1_000;

interface Contender {
  server: BenchServer;
  datasets: Partial<Record<DatasetName, Dataset>>;
  /** Set when the server can no longer be measured (it crashed, or a preload failed). */
  unavailable?: string;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const selected = selectScenarios(options);
  const startedAt = new Date();
  const loadAverageAtStart = os.loadavg();
  const workRoot = await mkdtemp(path.join(os.tmpdir(), 'cerulean-bench-'));
  log(
    `scenarios: ${selected.map((s) => s.name).join(', ')}; concurrency ${options.concurrency.join(',')}; ` +
      `${options.rounds} rounds; window ${options.durationS} s after ${options.warmupS} s warm-up`,
  );
  const notStarted: Record<string, string> = {};
  const contenders: Contender[] = [];
  let postgres: BenchPostgres | undefined;
  try {
    const wanted = options.servers.filter((kind) => !isBare(kind) || selected.some((s) => runsOn(s, kind)));
    if (wanted.some((kind) => postgresKinds.includes(kind))) {
      try {
        postgres = await benchPostgres();
      } catch (error) {
        for (const kind of wanted.filter((kind) => postgresKinds.includes(kind))) notStarted[kind] = message(error);
      }
    }
    const startable = wanted.filter((kind) => notStarted[kind] === undefined);
    contenders.push(...(await startContenders(startable, workRoot, notStarted, postgres)));
    const preloadSeconds = await preloadUpfront(contenders, selected, options);
    const runs = await runScenarios(contenders, selected, options, preloadSeconds);
    const uploadMemory = options.scenarios.includes(uploadRssProbe)
      ? await measureUploadMemory(
          contenders.filter((c) => c.unavailable === undefined).map((c) => c.server),
          requestTimeoutMs,
        )
      : undefined;
    const report: Report = {
      meta: {
        command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
        startedAt: startedAt.toISOString(),
        wallSeconds: (Date.now() - startedAt.getTime()) / 1000,
        node: process.version,
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}`,
        loadAverageAtStart,
        options: { ...options, bestOf: 'highest ops/s of the rounds' },
        scenarios: Object.fromEntries(selected.map((s) => [s.name, s.summary])),
        bytesPerOperation: Object.fromEntries(
          selected.flatMap((s) => (s.bytesPerOperation === undefined ? [] : [[s.name, s.bytesPerOperation]])),
        ),
        preloadSeconds,
        notStarted,
      },
      summary: summarize(runs),
      runs,
      ...(uploadMemory === undefined ? {} : { uploadMemory }),
    };
    const written = await writeReport(resultsDirectory, report, options.report);
    process.stdout.write(`${renderMarkdown(report)}\n`);
    log(`wrote ${written.json} and ${written.markdown}`);
  } finally {
    await Promise.all(contenders.map((c) => c.server.stop()));
    postgres?.stop();
    await rm(workRoot, { recursive: true, force: true });
  }
}

/** Starts each server in its own data directory; one that fails is noted and left out. */
async function startContenders(
  kinds: readonly ServerKind[],
  workRoot: string,
  notStarted: Record<string, string>,
  postgres: BenchPostgres | undefined,
): Promise<Contender[]> {
  const contenders: Contender[] = [];
  for (const kind of kinds) {
    const dataDir = path.join(workRoot, kind);
    await mkdir(dataDir);
    try {
      const database =
        postgres !== undefined && postgresKinds.includes(kind) ? await postgres.database(kind) : undefined;
      const server = await startServer(kind, repoRoot, dataDir, database);
      const ports = [server.endpoint.port, ...(server.endpoint.morePorts ?? [])].join(', ');
      log(`${kind} listening on ${server.endpoint.host}:${ports} (pid ${server.pids.join(', ')})`);
      contenders.push({ server, datasets: {} });
    } catch (error) {
      notStarted[kind] = message(error);
      log(`${kind} did not start: ${message(error)}`);
    }
  }
  return contenders;
}

/** Loads every dataset but the 1M one into all servers at once; returns seconds per server. */
async function preloadUpfront(
  contenders: readonly Contender[],
  selected: readonly Scenario[],
  options: BenchOptions,
): Promise<Record<string, number>> {
  const upfront = [...new Set(selected.flatMap((s) => s.datasets).filter((name) => name !== 'big'))];
  const preloadSeconds: Record<string, number> = {};
  await Promise.all(
    contenders.map(async (contender) => {
      if (isBare(contender.server.kind)) {
        // It answers any key without holding data; it only needs the key layout.
        for (const name of upfront) contender.datasets[name] = datasetFor(name, options);
        return;
      }
      preloadSeconds[contender.server.kind] = await preloadAll(contender, upfront, options);
    }),
  );
  return preloadSeconds;
}

/** Every scenario × concurrency × round, servers interleaved; the 1M table is loaded just in time. */
async function runScenarios(
  contenders: readonly Contender[],
  selected: readonly Scenario[],
  options: BenchOptions,
  preloadSeconds: Record<string, number>,
): Promise<RunRecord[]> {
  const runs: RunRecord[] = [];
  const servers = contenders.map((c) => c.server);
  let runId = 0;
  for (const scenario of selected) {
    if (scenario.datasets.includes('big')) {
      for (const contender of contenders) {
        if (isBare(contender.server.kind)) continue;
        preloadSeconds[`${contender.server.kind} (1M)`] = await preloadAll(contender, ['big'], options);
      }
    }
    const participants = contenders.filter((c) => runsOn(scenario, c.server.kind, c.server));
    for (const concurrency of concurrencyLevels(scenario, options)) {
      for (let round = 1; round <= options.rounds; round++) {
        for (const contender of interleaved(participants, round)) {
          runs.push(await measure(contender, servers, scenario, concurrency, round, ++runId, options));
        }
      }
    }
  }
  return runs;
}

/**
 * Whether `scenario` runs on a server of `kind` (on `server` once started: whether it has the service).
 * The bare servers run the point-read request shape and the blob transfers only.
 */
function runsOn(scenario: Scenario, kind: ServerKind, server?: BenchServer): boolean {
  if (isBare(kind)) {
    return scenario.service === 'blob' ? bareServes(scenario) : kind === 'bare' && scenario.name === ceilingScenario;
  }
  if (server === undefined || scenario.service === undefined) return true;
  return scenario.service === 'queue' ? server.queue !== undefined : server.blob !== undefined;
}

function isBare(kind: ServerKind): boolean {
  return kind === 'bare' || kind === 'bare-disk';
}

/** The --concurrency levels, those above the scenario's cap run at the cap (once). */
function concurrencyLevels(scenario: Scenario, options: BenchOptions): number[] {
  const cap = scenario.concurrencyMax ?? Number.POSITIVE_INFINITY;
  return [...new Set(options.concurrency.map((level) => Math.min(level, cap)))];
}

/** The scenarios named (a service's name stands for all of its scenarios), or the default set. */
function selectScenarios(options: BenchOptions): Scenario[] {
  const groups: Record<string, readonly Scenario[]> = {
    table: scenarios,
    queue: queueScenarios,
    blob: blobScenarios,
  };
  const defaults = [...scenarios, ...queueScenarios, ...blobScenarios];
  const available = [...defaults, ...bigScenarios];
  if (options.scenarios.length === 0) return options.big ? available : defaults;
  const selected = options.scenarios.flatMap((name) => {
    if (name === uploadRssProbe) return [];
    const scenario = groups[name] ?? available.filter((s) => s.name === name);
    if (scenario.length === 0) {
      const known = [...Object.keys(groups), ...available.map((s) => s.name), uploadRssProbe];
      throw new Error(`unknown scenario ${name}; known: ${known.join(', ')}`);
    }
    return scenario;
  });
  return [...new Set(selected)];
}

function datasetFor(name: DatasetName, options: BenchOptions): Dataset {
  switch (name) {
    case 'entities':
      return spreadDataset('entities', 'benchentities', options.preload);
    case 'partition':
      return partitionDataset();
    case 'big':
      return spreadDataset('big', 'benchbig', bigDatasetCount);
    default: {
      const unknown: never = name;
      throw new Error(`unknown dataset ${String(unknown)}`);
    }
  }
}

/** Preloads datasets into one server; a failure or crash makes the server unavailable from then on. */
async function preloadAll(contender: Contender, names: DatasetName[], options: BenchOptions): Promise<number> {
  const started = Date.now();
  if (contender.unavailable !== undefined) return 0;
  const agent = keepAliveAgent(preloadConcurrency);
  const client = new TableHttpClient(contender.server.endpoint, agent, requestTimeoutMs);
  const kind = contender.server.kind;
  try {
    for (const name of names) {
      const dataset = datasetFor(name, options);
      let reported = 0;
      await preload(client, dataset, (loaded) => {
        if (loaded - reported >= 100_000 || loaded === dataset.count) {
          reported = loaded;
          log(`${kind}: preloaded ${loaded}/${dataset.count} into ${dataset.table}`);
        }
      });
      contender.datasets[name] = dataset;
    }
    contender.server.noteWrites();
  } catch (error) {
    const crash = await contender.server.exitWithin(exitGraceMs);
    contender.unavailable = crash !== undefined ? `crashed: ${crash}` : `preload failed: ${message(error)}`;
    log(`${kind}: ${contender.unavailable}`);
  } finally {
    agent.destroy();
  }
  return (Date.now() - started) / 1000;
}

function interleaved(participants: readonly Contender[], round: number): Contender[] {
  const rank = (c: Contender): number => {
    const index = roundOrder.indexOf(c.server.kind);
    return index === -1 ? roundOrder.length : index;
  };
  const ordered = [...participants].sort((a, b) => rank(a) - rank(b));
  return round % 2 === 1 ? ordered : ordered.reverse();
}

function loadPlan(concurrency: number, options: BenchOptions, windowOpsPerWorker = 1): LoadPlan {
  const durationMs = options.durationS * 1000;
  return {
    concurrency,
    warmupMs: options.warmupS * 1000,
    durationMs,
    durationMaxMs: Math.max(3 * durationMs, 30_000),
    windowOpsMin: concurrency * windowOpsPerWorker,
    drainMs: 1_000,
    opsMax: 10_000_000,
    errorsMax: 1_000,
  };
}

async function measure(
  contender: Contender,
  servers: BenchServer[],
  scenario: Scenario,
  concurrency: number,
  round: number,
  runId: number,
  options: BenchOptions,
): Promise<RunRecord> {
  const { server } = contender;
  const record: RunRecord = { scenario: scenario.name, concurrency, server: server.kind, round };
  const where = `${scenario.name} C=${concurrency} round ${round} ${server.kind}`;
  if (contender.unavailable === undefined && server.exitReason() !== undefined) {
    contender.unavailable = `crashed: ${server.exitReason()}`;
  }
  const missing = scenario.datasets.find((name) => contender.datasets[name] === undefined);
  if (contender.unavailable !== undefined || missing !== undefined) {
    record.unavailable = contender.unavailable ?? `dataset ${missing} not loaded`;
    log(`${where}: n/a (${record.unavailable})`);
    return record;
  }
  await waitForQuiet(servers, server, quietWaitMaxMs);
  const agent = keepAliveAgent(concurrency);
  const client = new TableHttpClient(server.endpoint, agent, requestTimeoutMs);
  try {
    const queue = server.queue && new QueueHttpClient(server.queue, agent, requestTimeoutMs);
    const blob = server.blob && new BlobHttpClient(server.blob, agent, requestTimeoutMs);
    const prepared = await scenario.prepare({ client, concurrency, datasets: contender.datasets, runId, queue, blob });
    if (prepared.wrongAnswer !== undefined) record.wrongAnswer = prepared.wrongAnswer;
    const plan = loadPlan(concurrency, options, scenario.windowOpsPerWorkerMin);
    const ticksBefore = await cpuTicks(server.pids);
    record.result = await runClosedLoop(prepared.operations, plan, () => agent.destroy());
    const cpuMs = ((await cpuTicks(server.pids)) - ticksBefore) * (1000 / clockTicksPerSecond);
    if (record.result.opsStarted > 0) record.serverCpuMsPerOp = cpuMs / record.result.opsStarted;
    await prepared.cleanup?.();
    if (prepared.note !== undefined) {
      record.note = prepared.note;
      log(`${where}: ${prepared.note}`);
    }
  } catch (error) {
    record.unavailable = `failed: ${message(error)}`;
  } finally {
    agent.destroy();
    if (scenario.writes) server.noteWrites();
  }
  const failed = record.unavailable !== undefined || (record.result?.errors ?? 0) > 0;
  const crash = failed ? await server.exitWithin(exitGraceMs) : server.exitReason();
  if (crash !== undefined) {
    contender.unavailable = `crashed: ${crash}`;
    record.unavailable = contender.unavailable;
    delete record.result;
  }
  const r = record.result;
  log(
    r === undefined
      ? `${where}: n/a (${record.unavailable})`
      : `${where}: ${r.opsPerSec.toFixed(1)} ops/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms` +
          ` (${r.ops} ops in ${(r.windowMs / 1000).toFixed(1)} s${r.errors ? `, ${r.errors} errors` : ''}` +
          `${record.serverCpuMsPerOp === undefined ? '' : `; server CPU ${record.serverCpuMsPerOp.toFixed(3)} ms/op`}` +
          `${record.wrongAnswer ? `, WRONG ANSWER: ${record.wrongAnswer}` : ''})`,
  );
  return record;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function log(line: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${message(error)}\n`);
  process.exitCode = 1;
});
