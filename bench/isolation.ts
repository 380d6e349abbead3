// Latency isolation ("slow clients cannot pin the server"): point reads at 4 concurrent
// requests, alone and while another client walks a filter over the whole table, once with a
// filter the storage engine checks itself (on a scan thread) and once with one it cannot (an
// `or`, checked by the query engine on the HTTP thread, which lets other requests in between
// its steps). One on-disk Cerulean, 100k entities.
//
//   node dist/bench/isolation.js [--entities N] [--duration S]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { devAccountName, expectStatus, keepAliveAgent, TableHttpClient } from './client.js';
import { preload, spreadDataset } from './datasets.js';
import { runClosedLoop, type LoadResult, type Operation } from './load.js';
import { startCeruleanAt } from './servers.js';
import { walk } from './walk.js';

const readers = 4;
const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), '../../bench/results');
/** Both match nothing, so every page reads its whole budget of rows. */
const filters = {
  'checked by the storage engine': 'Bucket eq -1',
  'checked by the query engine': 'Bucket eq -1 or Bucket eq -2',
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { entities: { type: 'string' }, duration: { type: 'string' } } });
  const entities = Number(values.entities ?? 100_000);
  const durationMs = Number(values.duration ?? 5) * 1000;
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-isolation-'));
  const server = await startCeruleanAt(location);
  const rows: string[] = [];
  try {
    const endpoint = { host: '127.0.0.1', port: server.ready.port, account: devAccountName };
    const client = new TableHttpClient(endpoint, keepAliveAgent(readers + 1), 600_000);
    const dataset = spreadDataset('entities', 'isolation', entities);
    await preload(client, dataset, () => undefined);
    const reads: Operation[] = Array.from({ length: readers }, () => async () => {
      const { partitionKey, rowKey } = dataset.key(Math.floor(Math.random() * entities));
      const resource = `${dataset.table}(PartitionKey='${partitionKey}',RowKey='${rowKey}')`;
      await expectStatus('point read', client.send({ method: 'GET', resource }), 200);
    });
    rows.push(row('alone', await measure(reads, durationMs), '–'));
    for (const [how, filter] of Object.entries(filters)) {
      let scanning = true;
      let pages = 0;
      const scanner = (async () => {
        while (scanning) pages += (await walk(client, dataset.table, filter, 1000)).pages;
      })();
      const during = await measure(reads, durationMs);
      scanning = false;
      await scanner;
      rows.push(row(`during \`${filter}\` (${how})`, during, String(pages)));
    }
  } finally {
    await server.stop();
    rmSync(location, { recursive: true, force: true });
  }
  const load = os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  const markdown = [
    '# Point reads while another client scans',
    '',
    `\`node dist/bench/isolation.js --entities ${entities}\`; ${readers} concurrent point readers; load average at the end ${load}.`,
    '',
    '| point reads | reads/s | p50 ms | p99 ms | scan pages meanwhile |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'isolation.md'), markdown);
  process.stdout.write(markdown);
}

function measure(operations: readonly Operation[], durationMs: number): Promise<LoadResult> {
  return runClosedLoop(
    operations,
    {
      concurrency: readers,
      warmupMs: 500,
      durationMs,
      durationMaxMs: durationMs * 3,
      windowOpsMin: 20,
      drainMs: 5000,
      opsMax: 10_000_000,
      errorsMax: 10,
    },
    () => undefined,
  );
}

function row(label: string, result: LoadResult, pages: string): string {
  const cells = [
    Math.round(result.opsPerSec).toLocaleString('en-US'),
    result.p50Ms.toFixed(2),
    result.p99Ms.toFixed(2),
    pages,
  ];
  return `| ${label} | ${cells.join(' | ')} |`;
}

await main();
