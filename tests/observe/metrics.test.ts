// /_metrics against real server processes: each series moves as traffic flows (requests by
// operation and status, latency histograms, query entities by class, group commits, sizes on disk,
// partition series only with --metrics-partitions and only for the busiest few).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from '../helpers/server.js';
import { describeResponse, devPath, send } from '../helpers/http.js';
import { freshTable } from '../helpers/sdk.js';
import { sample, samples, scrape } from '../helpers/metrics.js';

describe('metrics on disk, with --metrics-partitions', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ args: ['--metrics-partitions'] });
  });
  after(async () => {
    await server?.stop();
  });

  test('every series moves as traffic flows', async () => {
    const before = await scrape(server.port);
    assert.equal(sample(before, 'cerulean_requests_total', { operation: 'InsertEntity' }), undefined);

    const client = await freshTable(server, 'met');
    await driveTraffic(client);

    const text = await scrape(server.port);
    assertRequestSeries(text);
    assertQueryAndCommitSeries(text);
    assertPartitionSeries(text, client.tableName);

    // Counters move by exactly what happens next.
    for (let i = 0; i < 3; i++) await client.createEntity({ partitionKey: 'more', rowKey: `m${i}` });
    const later = await scrape(server.port);
    assert.equal(sample(later, 'cerulean_requests_total', { operation: 'InsertEntity' }), 16);
    assert.equal(sample(later, 'cerulean_commit_group_writes_sum'), 18);
    assert.ok(sample(later, 'cerulean_process_resident_memory_bytes')! > 0, 'default process metrics are there');
    assert.equal(sample(later, 'cerulean_insights_findings', { kind: 'hot-partition' }), 0);
  });
});

type TableClient = Awaited<ReturnType<typeof freshTable>>;

/** 13 inserts over 8 partitions, 3 reads and a miss, a table scan, a partition scan, a 5-entity batch. */
async function driveTraffic(client: TableClient): Promise<void> {
  // 8 partitions: p0 takes 6 inserts, p1…p7 one each.
  const keys = [
    ...Array.from({ length: 6 }, (_, i) => ['p0', `r${i}`]),
    ...Array.from({ length: 7 }, (_, i) => [`p${i + 1}`, 'r0']),
  ];
  for (const [partitionKey, rowKey] of keys)
    await client.createEntity({ partitionKey: partitionKey!, rowKey: rowKey!, Size: Number(rowKey!.slice(1)) });
  for (const rowKey of ['r0', 'r1', 'r2']) await client.getEntity('p0', rowKey);
  await assert.rejects(client.getEntity('p0', 'missing'), (error: { statusCode?: number }) => error.statusCode === 404);
  const scanned = [];
  for await (const entity of client.listEntities({ queryOptions: { filter: 'Size ge 3' } })) scanned.push(entity);
  const partition = [];
  for await (const entity of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p0'" } }))
    partition.push(entity);
  assert.equal(scanned.length, 3);
  assert.equal(partition.length, 6);
  await client.submitTransaction(
    Array.from({ length: 5 }, (_, i) => ['create', { partitionKey: 'p9', rowKey: `b${i}` }] as const),
  );
}

/** Requests by operation and status, and the latency histogram, after driveTraffic. */
function assertRequestSeries(text: string): void {
  const requests = (labels: Record<string, string>) => sample(text, 'cerulean_requests_total', labels);
  assert.equal(requests({ operation: 'CreateTable' }), 1, samples(text, 'cerulean_requests_total').join('\n'));
  assert.equal(requests({ operation: 'InsertEntity' }), 13);
  assert.equal(requests({ operation: 'QueryEntity', status: '200' }), 3);
  assert.equal(requests({ operation: 'QueryEntity', status: '404' }), 1);
  assert.equal(requests({ operation: 'QueryEntities', status: '200' }), 2);
  assert.equal(requests({ operation: 'EntityGroupTransaction', status: '202' }), 1);
  assert.equal(sample(text, 'cerulean_request_duration_seconds_count', { operation: 'QueryEntity' }), 4);
  assert.equal(sample(text, 'cerulean_request_duration_seconds_bucket', { operation: 'QueryEntity', le: '+Inf' }), 4);
  assert.ok(sample(text, 'cerulean_request_duration_seconds_sum', { operation: 'InsertEntity' })! > 0);
}

/** Query entities by class, group commits and sizes on disk, after driveTraffic. */
function assertQueryAndCommitSeries(text: string): void {
  // The table scan read all 13 entities and returned 3; the partition scan read and returned p0's 6.
  assert.equal(sample(text, 'cerulean_query_entities_read_total', { class: 'table-scan' }), 13);
  assert.equal(sample(text, 'cerulean_query_entities_returned_total', { class: 'table-scan' }), 3);
  assert.equal(sample(text, 'cerulean_query_entities_read_total', { class: 'partition-scan' }), 6);
  assert.equal(sample(text, 'cerulean_query_entities_returned_total', { class: 'partition-scan' }), 6);

  // Every write job lands in exactly one group commit: the table, 13 inserts, one batch.
  assert.equal(
    sample(text, 'cerulean_commit_group_writes_sum'),
    15,
    samples(text, 'cerulean_commit_group_writes_sum').join('\n'),
  );
  const commits = sample(text, 'cerulean_commit_duration_seconds_count')!;
  assert.ok(commits >= 1 && commits <= 15, `${commits} commits`);
  assert.ok(sample(text, 'cerulean_storage_bytes', { kind: 'data' })! > 0);
  assert.ok(sample(text, 'cerulean_storage_bytes', { kind: 'log' })! > 0);
}

/** Partition series after driveTraffic: the busiest five of the table only. */
function assertPartitionSeries(text: string, tableName: string): void {
  // p0 first with its 6 inserts + 3 reads + 1 miss + 1 query.
  const partitions = samples(text, 'cerulean_partition_entities_touched').filter((line) =>
    line.includes(`table="${tableName}"`),
  );
  assert.equal(partitions.length, 5, partitions.join('\n'));
  assert.equal(sample(text, 'cerulean_partition_entities_touched', { table: tableName, partition: 'p0' }), 16);
  assert.equal(sample(text, 'cerulean_partition_entities_touched', { table: tableName, partition: 'p9' }), 5);
}

describe('metrics switches', () => {
  let plain: RunningServer;
  let off: RunningServer;
  before(async () => {
    [plain, off] = await Promise.all([
      startServer({ inMemory: true }),
      startServer({ inMemory: true, args: ['--no-metrics'] }),
    ]);
  });
  after(async () => {
    await Promise.all([plain?.stop(), off?.stop()]);
  });

  test('without --metrics-partitions no partition series (keys are user data); in memory no sizes on disk', async () => {
    const client = await freshTable(plain, 'plain');
    await client.createEntity({ partitionKey: 'secret-key', rowKey: 'r' });
    const text = await scrape(plain.port);
    assert.equal(sample(text, 'cerulean_requests_total', { operation: 'InsertEntity' }), 1);
    assert.equal(text.includes('secret-key'), false);
    assert.deepEqual(samples(text, 'cerulean_partition_entities_touched'), []);
    assert.deepEqual(samples(text, 'cerulean_storage_bytes'), []);
  });

  test('--no-metrics: no /_metrics or /_insights, the API works as ever', async () => {
    for (const path of ['/_metrics', '/_insights']) {
      const res = await send(off.port, { method: 'GET', path, auth: 'none' });
      assert.equal(res.status, 404, describeResponse(res));
    }
    const res = await send(off.port, { method: 'POST', path: devPath('Tables'), body: { TableName: 'stillworks' } });
    assert.equal(res.status, 201, describeResponse(res));
  });

  test('other paths under /_ are not found; a wrong method is refused', async () => {
    assert.equal((await send(plain.port, { method: 'GET', path: '/_nothing', auth: 'none' })).status, 404);
    assert.equal((await send(plain.port, { method: 'POST', path: '/_metrics', auth: 'none' })).status, 405);
  });
});
