// What keeping metrics and design insights costs a point read (the target: at most 5 %). Two
// Cerulean servers on disk with the same data, one as it runs by default and one with
// --no-metrics, get the same number of random point reads at the same concurrency, in
// interleaved rounds. Per round: throughput, and the server's CPU time per read from
// /proc/PID/stat, which a busy shared machine disturbs far less than throughput.
//   node dist/bench/observe-cost.js [--entities 10000] [--reads 20000] [--concurrency 16] [--rounds 6]
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { expectStatus, keepAliveAgent, TableHttpClient } from './client.js';
import { preload, spreadDataset } from './datasets.js';
import { clockTicksPerSecond, cpuTicks } from './proc-stat.js';
import { entityResource } from './scenarios.js';
import { startServer, type BenchServer } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface Round {
  readonly opsPerSec: number;
  readonly cpuMicrosPerRead: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      entities: { type: 'string', default: '10000' },
      reads: { type: 'string', default: '20000' },
      concurrency: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '6' },
    },
  });
  const [entities, reads, concurrency, rounds] = [values.entities, values.reads, values.concurrency, values.rounds].map(
    Number,
  ) as [number, number, number, number];
  const workRoot = await mkdtemp(path.join(os.tmpdir(), 'cerulean-observe-cost-'));
  const servers: BenchServer[] = [];
  try {
    for (const kind of ['cerulean', 'cerulean-unobserved'] as const) {
      const dataDir = path.join(workRoot, kind);
      servers.push(await startServer(kind, repoRoot, await mkdtemp(dataDir)));
    }
    const dataset = spreadDataset('entities', 'benchentities', entities);
    const clients = servers.map((server) => new TableHttpClient(server.endpoint, keepAliveAgent(concurrency), 60_000));
    await Promise.all(clients.map((client) => preload(client, dataset, () => undefined)));
    const results: Record<string, Round[]> = { cerulean: [], 'cerulean-unobserved': [] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const server = servers[i]!;
        const result = await measure(
          server,
          clients[i]!,
          (index) => entityResource(dataset.table, dataset.key(index)),
          entities,
          reads,
          concurrency,
        );
        results[server.kind]!.push(result);
        process.stderr.write(
          `round ${round + 1} ${server.kind}: ${Math.round(result.opsPerSec)} reads/s, ${result.cpuMicrosPerRead.toFixed(1)} µs CPU per read\n`,
        );
      }
    }
    const observed = summary(results['cerulean']!);
    const plain = summary(results['cerulean-unobserved']!);
    process.stdout.write(
      `point reads over ${entities} entities, ${reads} per round, C=${concurrency}, ${rounds} rounds, load average at end ${os.loadavg()[0]!.toFixed(2)}\n` +
        `| server | best reads/s | median reads/s | median µs CPU per read |\n| --- | ---: | ---: | ---: |\n` +
        `| Cerulean (metrics and insights on) | ${observed.best} | ${observed.median} | ${observed.cpu.toFixed(1)} |\n` +
        `| Cerulean --no-metrics | ${plain.best} | ${plain.median} | ${plain.cpu.toFixed(1)} |\n` +
        `throughput (best) ${(observed.best / plain.best).toFixed(3)}×, CPU per read ${(observed.cpu / plain.cpu).toFixed(3)}×\n`,
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await rm(workRoot, { recursive: true, force: true });
  }
}

async function measure(
  server: BenchServer,
  client: TableHttpClient,
  resource: (index: number) => string,
  entities: number,
  reads: number,
  concurrency: number,
): Promise<Round> {
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (issued < reads) {
      issued++;
      await expectStatus(
        'point read',
        client.send({ method: 'GET', resource: resource(Math.floor(Math.random() * entities)) }),
        200,
      );
    }
  };
  const cpuBefore = await cpuTicks([server.pids[0]!]);
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const cpuSeconds = ((await cpuTicks([server.pids[0]!])) - cpuBefore) / clockTicksPerSecond;
  return { opsPerSec: reads / seconds, cpuMicrosPerRead: (cpuSeconds * 1e6) / reads };
}

function summary(rounds: readonly Round[]): { best: number; median: number; cpu: number } {
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return {
    best: Math.round(Math.max(...rounds.map((r) => r.opsPerSec))),
    median: Math.round(median(rounds.map((r) => r.opsPerSec))),
    cpu: median(rounds.map((r) => r.cpuMicrosPerRead)),
  };
}

await main();
