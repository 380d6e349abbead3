// Design insights (/_insights, `cerulean insights`, the insight counts in /_metrics): each finding
// appears for a workload built to cause it, and not for one built to avoid it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TableClient, TableEntity } from '@azure/data-tables';
import { startServer, type RunningServer } from '../helpers/server.js';
import { describeResponse, send } from '../helpers/http.js';
import { freshTable, inParallel } from '../helpers/sdk.js';
import { insights, sample, scrape, type Finding } from '../helpers/metrics.js';

const cli = fileURLToPath(new URL('../../../bin/cerulean.js', import.meta.url));

function findingsOf(findings: readonly Finding[], kind: string, table: TableClient): Finding[] {
  return findings.filter((finding) => finding.kind === kind && finding.table === table.tableName);
}

async function insertAll(client: TableClient, entities: readonly TableEntity[], width = 8): Promise<void> {
  await inParallel(entities, width, (entity) => client.createEntity(entity));
}

async function query(client: TableClient, filter: string): Promise<number> {
  let count = 0;
  for await (const _ of client.listEntities({ queryOptions: { filter } })) count++;
  return count;
}

/** `count` entities over `partitions` partitions, two of them with Status 'rare'. */
function spread(count: number, partitions: number): TableEntity[] {
  return Array.from({ length: count }, (_, i) => ({
    partitionKey: `p${i % partitions}`,
    rowKey: `r${String(i).padStart(4, '0')}`,
    Status: i % 50 === 7 ? 'rare' : 'common',
    Size: i,
  }));
}

/** A fixed shuffle of 0…n-1 (a multiplicative step coprime with n). */
function shuffled(n: number): number[] {
  return Array.from({ length: n }, (_, i) => (i * 37 + 11) % n);
}

type Tables = Record<string, TableClient>;

/** Hot partition, table scan and partition scan workloads, each with its twin. */
async function hotAndScanWorkloads(t: Tables): Promise<void> {
  // Hot partition: 100 of 120 inserts into one partition, against 120 spread over 20.
  await insertAll(t.hot!, [
    ...Array.from({ length: 100 }, (_, i) => ({ partitionKey: 'hot', rowKey: `h${shuffled(100)[i]}` })),
    ...spread(20, 20),
  ]);
  await insertAll(t.even!, spread(120, 20));
  // Table scan by a property, against the same data read by PartitionKey.
  await t.scan!.submitTransaction(spread(100, 1).map((e) => ['create', e] as const));
  await t.scan!.submitTransaction(
    spread(120, 1)
      .slice(100)
      .map((e) => ['create', e] as const),
  );
  assert.equal(await query(t.scan!, "Status eq 'rare'"), 3);
  await insertAll(t.keyed!, spread(120, 20));
  assert.equal(await query(t.keyed!, "PartitionKey eq 'p1'"), 6);
  // Partition scan filtering on a property, against a RowKey range returning all it reads.
  for (const client of [t.pscan!, t.prange!]) {
    await client.submitTransaction(spread(100, 1).map((e) => ['create', e] as const));
    await client.submitTransaction(
      spread(150, 1)
        .slice(100)
        .map((e) => ['create', e] as const),
    );
  }
  assert.equal(await query(t.pscan!, "PartitionKey eq 'p0' and Status eq 'rare'"), 3);
  assert.equal(await query(t.prange!, "PartitionKey eq 'p0' and RowKey ge 'r0020' and RowKey lt 'r0140'"), 120);
}

/**
 * Point query inside a filter with another condition; a RowKey lookup scanning the table; and their
 * twin: a point read and a filter of the two keys alone.
 */
async function pointQueryWorkloads(t: Tables): Promise<void> {
  for (const client of [t.point!, t.rowkey!, t.pointok!]) await insertAll(client, spread(10, 10));
  assert.equal(await query(t.point!, "PartitionKey eq 'p1' and RowKey eq 'r0001' and Size gt 0"), 1);
  assert.equal(await query(t.rowkey!, "RowKey eq 'r0003'"), 1);
  await t.pointok!.getEntity('p1', 'r0001');
  assert.equal(await query(t.pointok!, "PartitionKey eq 'p1' and RowKey eq 'r0001'"), 1);
}

/** Append: ever larger PartitionKeys; prepend: ever smaller RowKeys in one partition; random order. */
async function keyOrderWorkloads(t: Tables): Promise<void> {
  for (let i = 0; i < 60; i++) await t.append!.createEntity({ partitionKey: String(i).padStart(6, '0'), rowKey: '' });
  for (let i = 0; i < 60; i++) await t.prepend!.createEntity({ partitionKey: 'log', rowKey: String(2e9 - i) });
  for (const i of shuffled(60)) await t.random!.createEntity({ partitionKey: String(i).padStart(6, '0'), rowKey: '' });
}

/** A 576 KB entity against a small one; 120 properties against 20. */
async function entitySizeWorkloads(t: Tables): Promise<void> {
  const big = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`Chunk${i}`, 'x'.repeat(32_000)]));
  await t.large!.createEntity({ partitionKey: 'p', rowKey: 'big', ...big });
  await t.small!.createEntity({ partitionKey: 'p', rowKey: 'small', Text: 'x'.repeat(1000) });
  await t.wide!.createEntity({
    partitionKey: 'p',
    rowKey: 'wide',
    ...Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`P${i}`, i])),
  });
  await t.narrow!.createEntity({
    partitionKey: 'p',
    rowKey: 'narrow',
    ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`P${i}`, i])),
  });
}

/** Each finding is there for the workload built to cause it, and not for its twin. */
function assertFindingsPerWorkload(findings: readonly Finding[], t: Tables): void {
  const expect = (kind: string, present: TableClient, absent: TableClient) => {
    assert.ok(
      findingsOf(findings, kind, present).length > 0,
      `${kind} missing for ${present.tableName}: ${JSON.stringify(findings, null, 1)}`,
    );
    assert.deepEqual(findingsOf(findings, kind, absent), [], `${kind} for ${absent.tableName}`);
  };
  expect('hot-partition', t.hot!, t.even!);
  expect('table-scan', t.scan!, t.keyed!);
  expect('partition-scan', t.pscan!, t.prange!);
  expect('point-query-candidate', t.point!, t.pointok!);
  expect('point-query-candidate', t.rowkey!, t.pointok!);
  expect('prepend-append', t.append!, t.random!);
  expect('prepend-append', t.prepend!, t.random!);
  expect('large-entity', t.large!, t.small!);
  expect('wide-entity', t.wide!, t.narrow!);
}

/** The evidence is there, in the guides' terms, and filter literals never appear. */
function assertEvidence(findings: readonly Finding[], t: Tables): void {
  const [hot] = findingsOf(findings, 'hot-partition', t.hot!);
  assert.equal(hot!.evidence['partitionKey'], 'hot');
  assert.ok(Number(hot!.evidence['share']) >= 0.8, JSON.stringify(hot));
  const [scan] = findingsOf(findings, 'table-scan', t.scan!);
  assert.equal(scan!.evidence['filter'], 'Status eq ?');
  assert.equal(scan!.evidence['entitiesRead'], 120);
  assert.equal(scan!.evidence['entitiesReturned'], 3);
  assert.equal(scan!.evidence['readPerReturned'], 40);
  assert.equal(
    findingsOf(findings, 'partition-scan', t.pscan!)[0]!.evidence['filter'],
    '(PartitionKey eq ? and Status eq ?)',
  );
  assert.equal(findingsOf(findings, 'prepend-append', t.append!)[0]!.evidence['direction'], 'append');
  assert.equal(findingsOf(findings, 'prepend-append', t.prepend!)[0]!.evidence['direction'], 'prepend');
  assert.equal(findingsOf(findings, 'wide-entity', t.wide!)[0]!.evidence['widestProperties'], 120);
  for (const finding of findings)
    assert.ok(finding.pattern.length > 40 && finding.summary.length > 20, JSON.stringify(finding));
  assert.ok(!JSON.stringify(findings).includes("'rare'"), 'filter literals never appear in shapes');
}

/** `cerulean insights`, as text (the scan table's block) and as JSON (the same counts). */
async function assertInsightsCli(port: number, scanTable: TableClient, counts: Record<string, number>): Promise<void> {
  const endpoint = `http://127.0.0.1:${port}`;
  const { stdout: textOut } = await promisify(execFile)(process.execPath, [
    cli,
    'insights',
    '-c',
    `${endpoint}/devstoreaccount1`,
  ]);
  const scanBlock = textOut.slice(textOut.indexOf(`Table devstoreaccount1/${scanTable.tableName}\n`));
  assert.match(
    scanBlock,
    /^Table \S+\n(  .*\n)*  \[table-scan\] Table scan: 1 query of shape Status eq \? read 120 entities/,
  );
  assert.match(
    textOut,
    /evidence: filter="Status eq \?", queryClass="table-scan", queries=1, entitiesRead=120, entitiesReturned=3, readPerReturned=40/,
  );
  assert.match(textOut, /fix: A filter without PartitionKey reads every partition\./);
  const { stdout: jsonOut } = await promisify(execFile)(process.execPath, [
    cli,
    'insights',
    '-c',
    `${endpoint}/devstoreaccount1`,
    '--json',
  ]);
  assert.deepEqual(JSON.parse(jsonOut).counts, counts);
}

describe('design insights', () => {
  let server: RunningServer;
  const tables: Record<string, TableClient> = {};
  before(async () => {
    server = await startServer({ inMemory: true });
    for (const name of [
      'hot',
      'even',
      'scan',
      'keyed',
      'pscan',
      'prange',
      'point',
      'rowkey',
      'pointok',
      'append',
      'prepend',
      'random',
      'large',
      'small',
      'wide',
      'narrow',
    ]) {
      tables[name] = await freshTable(server, name);
    }
  });
  after(async () => {
    await server?.stop();
  });

  test('each workload shows its finding, and its twin built to avoid it does not', async () => {
    await hotAndScanWorkloads(tables);
    await pointQueryWorkloads(tables);
    await keyOrderWorkloads(tables);
    await entitySizeWorkloads(tables);

    const { findings, counts } = await insights(server.port);
    assertFindingsPerWorkload(findings, tables);
    assertEvidence(findings, tables);

    // The metrics carry the counts.
    const text = await scrape(server.port);
    for (const [kind, count] of Object.entries(counts))
      assert.equal(sample(text, 'cerulean_insights_findings', { kind }), count, kind);
    assert.ok(counts['table-scan']! >= 1);

    await assertInsightsCli(server.port, tables['scan']!, counts);

    // DELETE /_insights starts observing afresh.
    const reset = await send(server.port, { method: 'DELETE', path: '/_insights', auth: 'none' });
    assert.equal(reset.status, 204, describeResponse(reset));
    assert.deepEqual((await insights(server.port)).findings, []);
  });

  test('cerulean insights reports an unreachable server and bad arguments', async () => {
    await assert.rejects(
      promisify(execFile)(process.execPath, [cli, 'insights', '-c', 'http://127.0.0.1:1/devstoreaccount1']),
      (error: { code?: number }) => error.code === 1,
    );
    await assert.rejects(
      promisify(execFile)(process.execPath, [cli, 'insights', '--bogus']),
      (error: { code?: number }) => error.code === 2,
    );
  });
});

describe('design insights: partitions worth splitting', () => {
  let server: RunningServer;
  before(async () => {
    // Half the partition target (90 entities/s here) marks a partition worth splitting.
    server = await startServer({ inMemory: true, args: ['--throttle', 'partition=180,account=100000'] });
  });
  after(async () => {
    await server?.stop();
  });

  test('100 entities in one partition within a second, against 50 in each of two', async () => {
    const busy = await freshTable(server, 'busy');
    const calm = await freshTable(server, 'calm');
    await busy.submitTransaction(
      Array.from({ length: 100 }, (_, i) => ['create', { partitionKey: 'one', rowKey: `r${i}` }] as const),
    );
    for (const partitionKey of ['a', 'b']) {
      await calm.submitTransaction(
        Array.from({ length: 50 }, (_, i) => ['create', { partitionKey, rowKey: `r${i}` }] as const),
      );
    }
    const { findings } = await insights(server.port);
    const [split] = findingsOf(findings, 'partition-split', busy);
    assert.equal(split?.evidence['peakEntitiesPerSecond'], 100, JSON.stringify(findings));
    assert.equal(split?.evidence['thresholdEntitiesPerSecond'], 90);
    assert.deepEqual(findingsOf(findings, 'partition-split', calm), []);
  });
});
