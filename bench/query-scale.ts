// Query throughput at scale, in entities per second of the whole walk:
//   1. a partition scan of one 10k-entity partition, $top=1000, following continuations;
//   2. property-filtered table scans over N entities (default 1,000,000) that follow
//      continuations to the end: `Counter gt <…>L` (Int64, the last 10 match) and
//      `Bucket eq 999` (Int32, one in 1,000 matches).
// One on-disk Cerulean (`node bin/cerulean.js --port 0 --location <tmp> --log-level warn`), loaded
// through 100-entity batches (bench/datasets.ts); its data directory is removed at the end.
//
//   node dist/bench/query-scale.js [--entities N] [--runs R]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { devAccountName, keepAliveAgent, TableHttpClient } from './client.js';
import { startCeruleanAt } from './servers.js';
import { bucketMatches, partitionDataset, preload, spreadDataset, type Dataset } from './datasets.js';
import { walk } from './walk.js';

const requestTimeoutMs = 600_000;
const progressEveryEntities = 100_000;
/** bench/datasets.ts keeps this many batches in flight while loading. */
const loadBatchesInFlight = 4;

interface Measurement {
  name: string;
  filter: string;
  top: number;
  /** Entities the walk must read (the rate's numerator) and return. */
  entities: number;
  expectedReturned: number;
}

async function measure(client: TableHttpClient, table: string, m: Measurement, runs: number): Promise<void> {
  const rates: number[] = [];
  for (let run = 1; run <= runs; run++) {
    const w = await walk(client, table, m.filter, m.top);
    if (w.returned !== m.expectedReturned) {
      throw new Error(`${m.name}: WRONG ANSWER, ${w.returned} results, expected ${m.expectedReturned}`);
    }
    const rate = (m.entities / w.ms) * 1000;
    rates.push(rate);
    log(
      `${m.name} run ${run}: ${w.ms.toFixed(0)} ms, ${w.pages} pages, scanned ${w.scanned}, ` +
        `returned ${w.returned}, ${rate.toFixed(0)} entities/s`,
    );
  }
  rates.sort((a, b) => a - b);
  const median = rates[Math.floor(rates.length / 2)]!;
  console.log(
    `${m.name.padEnd(34)} ${m.filter.padEnd(36)} median ${median.toFixed(0)} entities/s (best ${rates.at(-1)!.toFixed(0)})`,
  );
}

async function load(client: TableHttpClient, dataset: Dataset): Promise<void> {
  const started = performance.now();
  let reported = 0;
  await preload(client, dataset, (loaded) => {
    if (loaded - reported >= progressEveryEntities) {
      reported = loaded;
      log(`  ${dataset.table}: ${loaded} loaded`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const rate = (dataset.count / seconds).toFixed(0);
  log(`loaded ${dataset.count} entities into ${dataset.table} in ${seconds.toFixed(1)} s (${rate} entities/s)`);
}

/** `Counter` of entity `seed` (bench/entities.ts): increasing, so `gt` of entity N-11 keeps the last 10. */
const counterOf = (seed: number) => BigInt(seed) * 1_000_003n + 4_294_967_296n;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { entities: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' } },
  });
  const count = Number(values.entities);
  const runs = Number(values.runs);
  if (!Number.isInteger(count) || count < 11) throw new Error('--entities must be an integer ≥ 11');
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs must be a positive integer');

  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'cerulean-query-scale-'));
  const server = await startCeruleanAt(dataDir);
  try {
    log(`cerulean on port ${server.ready.port}, data in ${dataDir}`);
    const endpoint = { host: '127.0.0.1', port: server.ready.port, account: devAccountName };
    const client = new TableHttpClient(endpoint, keepAliveAgent(loadBatchesInFlight), requestTimeoutMs);
    const partition = partitionDataset();
    const spread = spreadDataset('big', 'benchscale', count);
    await load(client, partition);
    await load(client, spread);
    await measure(
      client,
      partition.table,
      {
        name: `partition scan (${partition.count})`,
        filter: "PartitionKey eq 'scan'",
        top: 1000,
        entities: partition.count,
        expectedReturned: partition.count,
      },
      runs,
    );
    await measure(
      client,
      spread.table,
      {
        name: `filtered table scan Int64 (${count})`,
        filter: `Counter gt ${counterOf(count - 11)}L`,
        top: 1000,
        entities: count,
        expectedReturned: 10,
      },
      runs,
    );
    await measure(
      client,
      spread.table,
      {
        name: `filtered table scan Int32 (${count})`,
        filter: 'Bucket eq 999',
        top: 1000,
        entities: count,
        expectedReturned: bucketMatches(spread, 999),
      },
      runs,
    );
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    log(`removed ${dataDir}`);
  }
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
