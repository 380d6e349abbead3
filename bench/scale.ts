// Flat behaviour as the store grows: one on-disk Cerulean grows one table through
// 10k, 100k, 1M and 10M entities (100-entity batches); at each size it measures point reads and
// single inserts at 16 concurrent requests, one property-filtered scan of the whole table (to its
// last page), the server's RSS after all that, and a restart's startup time and RSS.
//
//   node dist/bench/scale.js [--max N] [--duration S] [--keep]
//
// Results: bench/results/scale.json and bench/results/scale.md (also printed). Each step's figures
// are relative to the first step's in the last columns: "within 20%" is the target.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { devAccountName, expectStatus, keepAliveAgent, TableHttpClient } from './client.js';
import { createTable, loadEntities, spreadDataset } from './datasets.js';
import { entityJson } from './entities.js';
import { runClosedLoop, type LoadResult, type Operation } from './load.js';
import { startCeruleanAt, type CeruleanProcess } from './servers.js';
import { walk, type Walk } from './walk.js';

const sizes = [10_000, 100_000, 1_000_000, 10_000_000];
const concurrency = 16;
const table = 'benchscale';
const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), '../../bench/results');

interface Step {
  entities: number;
  loadSeconds: number;
  pointRead: LoadResult;
  insert: LoadResult;
  /** `Bucket eq 7` over the whole table, every page. */
  tableScan: Walk;
  rssMiB: number;
  startupMs: number;
  rssAfterStartMiB: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { max: { type: 'string' }, duration: { type: 'string' }, keep: { type: 'boolean' } },
  });
  const max = Number(values.max ?? sizes.at(-1));
  const durationMs = Number(values.duration ?? 5) * 1000;
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-scale-'));
  let server = await start(location);
  const steps: Step[] = [];
  try {
    let client = clientOf(server);
    await createTable(client, table);
    let loaded = 0;
    let inserted = 0;
    for (const size of sizes.filter((s) => s <= max)) {
      const dataset = spreadDataset('big', table, size);
      const loadStarted = performance.now();
      await loadEntities(client, dataset, loaded, size, (n) => {
        if (n % 500_000 === 0) log(`  ${loaded + n} loaded`);
      });
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      loaded = size;
      log(`${size} entities (loaded the last ${size - (steps.at(-1)?.entities ?? 0)} in ${loadSeconds.toFixed(1)} s)`);

      const readOps: Operation[] = Array.from({ length: concurrency }, () => async () => {
        const { partitionKey, rowKey } = dataset.key(Math.floor(Math.random() * size));
        const resource = `${table}(PartitionKey='${partitionKey}',RowKey='${rowKey}')`;
        await expectStatus('point read', client.send({ method: 'GET', resource }), 200);
      });
      const pointRead = await measure(readOps, durationMs);
      // New entities land at random places of the grown index: 'n…' row keys sort before 'r…'.
      const insertOps: Operation[] = Array.from({ length: concurrency }, () => async () => {
        const { partitionKey } = dataset.key(Math.floor(Math.random() * size));
        const body = entityJson(partitionKey, `n${inserted++}`, inserted);
        const headers = { prefer: 'return-no-content' };
        await expectStatus('insert', client.send({ method: 'POST', resource: table, headers, body }), 204);
      });
      const insert = await measure(insertOps, durationMs);
      const tableScan = await walk(client, table, 'Bucket eq 7', 1000);
      const rssMiB = rssOf(server);

      await server.stop();
      const restartStarted = performance.now();
      server = await start(location);
      const startupMs = performance.now() - restartStarted;
      client = clientOf(server);
      steps.push({
        entities: size,
        loadSeconds,
        pointRead,
        insert,
        tableScan,
        rssMiB,
        startupMs,
        rssAfterStartMiB: rssOf(server),
      });
      log(report(steps));
    }
  } finally {
    await server.stop();
    if (!values.keep) rmSync(location, { recursive: true, force: true });
  }
  writeResults(max, steps);
}

function writeResults(max: number, steps: readonly Step[]): void {
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'scale.json'), JSON.stringify({ machineLoad: os.loadavg(), steps }, null, 2));
  const load = os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const markdown = `# Cerulean at scale\n\n\`node dist/bench/scale.js --max ${max}\`; load average at the end ${load}.\n\n${report(steps)}\n`;
  writeFileSync(path.join(resultsDir, 'scale.md'), markdown);
  process.stdout.write(markdown);
}

function start(location: string): Promise<CeruleanProcess> {
  return startCeruleanAt(location);
}

function clientOf(server: CeruleanProcess): TableHttpClient {
  const endpoint = { host: '127.0.0.1', port: server.ready.port, account: devAccountName };
  return new TableHttpClient(endpoint, keepAliveAgent(concurrency), 60_000);
}

function measure(operations: readonly Operation[], durationMs: number): Promise<LoadResult> {
  return runClosedLoop(
    operations,
    {
      concurrency,
      warmupMs: 1000,
      durationMs,
      durationMaxMs: durationMs * 3,
      windowOpsMin: 1000,
      drainMs: 2000,
      opsMax: 10_000_000,
      errorsMax: 10,
    },
    () => undefined,
  );
}

/** Resident set size of the server process, from /proc (Linux). */
function rssOf(server: CeruleanProcess): number {
  const status = readFileSync(`/proc/${server.process.pid}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kib / 1024;
}

function report(steps: readonly Step[]): string {
  const first = steps[0]!;
  const ratio = (value: number, base: number): string => `${((value / base) * 100).toFixed(0)} %`;
  const rows = steps.map((s) =>
    [
      s.entities.toLocaleString('en-US'),
      Math.round(s.pointRead.opsPerSec).toLocaleString('en-US'),
      s.pointRead.p50Ms.toFixed(2),
      s.pointRead.p99Ms.toFixed(2),
      Math.round(s.insert.opsPerSec).toLocaleString('en-US'),
      s.insert.p50Ms.toFixed(2),
      (s.tableScan.ms / 1000).toFixed(2),
      Math.round(s.tableScan.scanned / (s.tableScan.ms / 1000)).toLocaleString('en-US'),
      s.rssMiB.toFixed(0),
      s.startupMs.toFixed(0),
      s.rssAfterStartMiB.toFixed(0),
      ratio(s.pointRead.p50Ms, first.pointRead.p50Ms),
      ratio(s.insert.opsPerSec, first.insert.opsPerSec),
    ].join(' | '),
  );
  return [
    '| entities | point reads/s | p50 ms | p99 ms | inserts/s | p50 ms | filtered scan s | scanned/s | RSS MiB | restart ms | RSS after restart MiB | read p50 vs first | insert rate vs first |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

await main();
