// Where the time of an operation goes on the PostgreSQL engine: CPU time per operation
// of the Cerulean process, of PostgreSQL's processes (the postmaster's children: backends, WAL
// writer, checkpointer...) and of this load generator, per scenario, beside Cerulean on SQLite.
// CPU per operation is what a busy shared machine disturbs least; from it, operations per second
// per core of each tier. Same scenarios and data as `npm run bench`.
//   node dist/bench/pg-cost.js [--servers cerulean,cerulean-pg] [--scenarios point-read,...]
//     [--preload 20000] [--concurrency 16] [--duration 3]
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { keepAliveAgent, TableHttpClient } from './client.js';
import { partitionDataset, preload, spreadDataset, type Dataset, type DatasetName } from './datasets.js';
import { benchPostgres } from './postgres.js';
import { childrenOf, clockTicksPerSecond, cpuTicks, postmasterOf } from './proc-stat.js';
import { scenarios } from './scenarios.js';
import { startServer, type BenchServer, type ServerKind } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface Cost {
  readonly ops: number;
  readonly opsPerSec: number;
  /** CPU µs per operation of each tier. */
  readonly server: number;
  readonly database: number;
  readonly client: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      servers: { type: 'string', default: 'cerulean,cerulean-pg' },
      scenarios: {
        type: 'string',
        default: 'insert-distinct,upsert,point-read,merge-if-match,range-query,partition-scan,table-scan',
      },
      preload: { type: 'string', default: '20000' },
      concurrency: { type: 'string', default: '16' },
      duration: { type: 'string', default: '3' },
    },
  });
  const kinds = values.servers.split(',') as ServerKind[];
  const chosen = values.scenarios.split(',').map((name) => {
    const scenario = scenarios.find((candidate) => candidate.name === name);
    if (scenario === undefined) throw new Error(`unknown scenario ${name}`);
    return scenario;
  });
  const [preloadCount, concurrency, durationS] = [values.preload, values.concurrency, values.duration].map(Number) as [
    number,
    number,
    number,
  ];
  const postgres = kinds.some((kind) => kind.startsWith('cerulean-pg')) ? await benchPostgres() : undefined;
  const workRoot = await mkdtemp(path.join(os.tmpdir(), 'cerulean-pg-cost-'));
  const results = new Map<string, Map<ServerKind, Cost>>();
  try {
    for (const kind of kinds) {
      const database = kind.startsWith('cerulean-pg') ? await postgres!.database(kind) : undefined;
      const server = await startServer(kind, repoRoot, await mkdtemp(path.join(workRoot, kind)), database);
      const postmaster = database === undefined ? undefined : await postmasterOf(new URL(database).port);
      try {
        const client = new TableHttpClient(server.endpoint, keepAliveAgent(concurrency), 120_000);
        const datasets: Partial<Record<DatasetName, Dataset>> = {};
        for (const name of new Set(chosen.flatMap((scenario) => scenario.datasets))) {
          const dataset =
            name === 'partition' ? partitionDataset() : spreadDataset('entities', 'benchentities', preloadCount);
          await preload(new TableHttpClient(server.endpoint, keepAliveAgent(4), 120_000), dataset, () => undefined);
          datasets[name] = dataset;
        }
        for (const [runId, scenario] of chosen.entries()) {
          const prepared = await scenario.prepare({ client, concurrency, datasets, runId: runId + 1 });
          if (prepared.wrongAnswer !== undefined) throw new Error(`${kind} ${scenario.name}: ${prepared.wrongAnswer}`);
          // Autovacuum, autoanalyze and a checkpoint of what the preload and earlier scenarios
          // wrote would otherwise run inside the window and be counted against its operations.
          if (database !== undefined) await settle(database);
          const cost = await measure(server, postmaster, prepared.operations, durationS * 1000);
          await prepared.cleanup?.();
          if (!results.has(scenario.name)) results.set(scenario.name, new Map());
          results.get(scenario.name)!.set(kind, cost);
          process.stderr.write(`${kind} ${scenario.name}: ${format(cost)}\n`);
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    postgres?.stop();
    await rm(workRoot, { recursive: true, force: true });
  }
  process.stdout.write(costTable(results, concurrency, durationS, preloadCount));
}

/** The Markdown table of CPU time per operation and tier. */
function costTable(
  results: ReadonlyMap<string, ReadonlyMap<ServerKind, Cost>>,
  concurrency: number,
  durationS: number,
  preloadCount: number,
): string {
  let table =
    `C=${concurrency}, ${durationS} s per scenario, ${preloadCount} entities, load average at end ${os
      .loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}\n\n` +
    `| scenario | server | ops/s | Cerulean µs/op | PostgreSQL µs/op | client µs/op | Cerulean ops/s per core | PostgreSQL ops/s per core |\n` +
    `| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n`;
  for (const [name, byKind] of results) {
    for (const [kind, cost] of byKind) {
      const perCore = (micros: number) => (micros > 0 ? Math.round(1e6 / micros).toLocaleString('en-US') : '–');
      table +=
        `| ${name} | ${kind} | ${Math.round(cost.opsPerSec).toLocaleString('en-US')} | ${cost.server.toFixed(0)} | ${cost.database.toFixed(0)} | ` +
        `${cost.client.toFixed(0)} | ${perCore(cost.server)} | ${perCore(cost.database)} |\n`;
    }
  }
  return table;
}

function format(cost: Cost): string {
  return `${Math.round(cost.opsPerSec)} ops/s; CPU µs/op: Cerulean ${cost.server.toFixed(0)}, PostgreSQL ${cost.database.toFixed(0)}, client ${cost.client.toFixed(0)}`;
}

/** Runs every worker's operation in a loop for `durationMs`, with CPU counted over exactly that window. */
async function measure(
  server: BenchServer,
  postmaster: number | undefined,
  operations: readonly (() => Promise<void>)[],
  durationMs: number,
): Promise<Cost> {
  const ticks = async () => ({
    server: await cpuTicks(server.pids),
    database: postmaster === undefined ? 0 : await cpuTicks([postmaster, ...(await childrenOf(postmaster))]),
  });
  // A short warm-up (prepared statements, JIT), not counted.
  await loop(operations, 500);
  const before = await ticks();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const ops = await loop(operations, durationMs);
  const seconds = (performance.now() - started) / 1000;
  const clientCpu = process.cpuUsage(clientBefore);
  const after = await ticks();
  const micros = (delta: number) => (delta / clockTicksPerSecond / ops) * 1e6;
  return {
    ops,
    opsPerSec: ops / seconds,
    server: micros(after.server - before.server),
    database: micros(after.database - before.database),
    client: (clientCpu.user + clientCpu.system) / ops,
  };
}

async function loop(operations: readonly (() => Promise<void>)[], durationMs: number): Promise<number> {
  const deadline = performance.now() + durationMs;
  let ops = 0;
  await Promise.all(
    operations.map(async (operation) => {
      while (performance.now() < deadline) {
        await operation();
        ops++;
      }
    }),
  );
  return ops;
}

/** Vacuums, analyzes and checkpoints the database, so that no background work is owed. */
async function settle(database: string): Promise<void> {
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE)');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

await main();
