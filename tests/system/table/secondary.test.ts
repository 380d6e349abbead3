// The read-access secondary on a real hot standby (--secondary-database): the `{account}-secondary`
// endpoint reads from the standby, refuses writes, and its Get Service Stats reports a LastSyncTime
// that is true: every write acknowledged before it is readable there. When the primary database
// stops, the Python SDK's retry to the secondary still reads; when the standby stops, the status
// turns unavailable.
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { devPath, describeResponse, send } from '../../helpers/http.js';
import { postgresBin, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { postgresUnavailable } from '../../helpers/postgres.js';
import { sample, scrape } from '../../helpers/metrics.js';
import { tableClient } from '../../helpers/sdk.js';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';

const bin = postgresBin();
const skip = postgresUnavailable() ?? (bin === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined);
const secondary = `${devAccount}-secondary`;
const statsPattern = /<Status>(\w+)<\/Status><LastSyncTime>([^<]*)<\/LastSyncTime>/;

async function stats(server: RunningServer): Promise<{ status: string; lastSyncMs: number | undefined }> {
  const res = await send(server.port, { method: 'GET', path: `/${secondary}/?restype=service&comp=stats` });
  assert.equal(res.status, 200, describeResponse(res));
  const [, status, time] = statsPattern.exec(res.text) ?? assert.fail(`no GeoReplication in ${res.text}`);
  return { status: status!, lastSyncMs: time === '' ? undefined : Date.parse(time!) };
}

async function secondaryRowKeys(server: RunningServer, table: string): Promise<Set<string>> {
  const res = await send(server.port, { method: 'GET', path: `/${secondary}/${table}()?$select=RowKey` });
  assert.equal(res.status, 200, describeResponse(res));
  return new Set((res.json().value as { RowKey: string }[]).map((entity) => entity.RowKey));
}

describe('a read-access secondary on a hot standby', { skip }, () => {
  let primary: Cluster;
  let standby: Cluster;
  let server: RunningServer;
  before(async () => {
    primary = await startCluster(bin!);
    standby = await startCluster(bin!, { standbyOf: primary.url });
    server = await startServer({
      database: primary.url,
      args: ['--secondary-database', standby.url, '--log-level', 'warn'],
    });
  });
  after(async () => {
    await server?.stop();
    primary?.destroy();
    standby?.destroy();
  });

  test('every write acknowledged before LastSyncTime is readable on the secondary', async () => {
    const client = tableClient(server, 'replicated');
    await client.createTable();
    const acknowledged: { rowKey: string; ms: number }[] = [];
    let checks = 0;
    for (let i = 0; checks < 5; i++) {
      const rowKey = String(i).padStart(5, '0');
      await client.createEntity({ partitionKey: 'p', rowKey });
      acknowledged.push({ rowKey, ms: Date.now() });
      if (i % 10 !== 9) continue;
      const { status, lastSyncMs } = await stats(server);
      if (lastSyncMs === undefined) continue;
      assert.equal(status, 'live');
      const readable = await secondaryRowKeys(server, 'replicated');
      const missing = acknowledged.filter(({ rowKey, ms }) => ms < lastSyncMs && !readable.has(rowKey));
      assert.deepEqual(missing, [], `LastSyncTime ${new Date(lastSyncMs).toISOString()} is ahead of the standby`);
      checks++;
    }
    // And it moves: a write is covered within seconds.
    const last = acknowledged.at(-1)!;
    const deadline = Date.now() + 30_000;
    while (((await stats(server)).lastSyncMs ?? 0) <= last.ms) {
      assert.ok(Date.now() < deadline, 'LastSyncTime did not pass the last write');
      await sleep(200);
    }
    assert.ok((await secondaryRowKeys(server, 'replicated')).has(last.rowKey));
    const metrics = await scrape(server.port);
    assert.equal(sample(metrics, 'cerulean_replication_status', { status: 'live' }), 1);
    const lagSeconds = sample(metrics, 'cerulean_replication_lag_seconds');
    assert.ok(lagSeconds !== undefined && lagSeconds >= 0 && lagSeconds < 60, `lag ${lagSeconds}`);
    assert.ok(sample(metrics, 'cerulean_replication_lag_bytes') !== undefined);
  });

  test('the secondary refuses writes; the primary takes them', async () => {
    const res = await send(server.port, {
      method: 'POST',
      path: `/${secondary}/replicated`,
      body: { PartitionKey: 'p', RowKey: 'from-secondary' },
    });
    assert.equal(res.status, 403, describeResponse(res));
    assert.equal(res.headers['x-ms-error-code'], 'InsufficientAccountPermissions');
    const primaryWrite = await send(server.port, {
      method: 'POST',
      path: devPath('replicated'),
      body: { PartitionKey: 'p', RowKey: 'w' },
    });
    assert.equal(primaryWrite.status, 201, describeResponse(primaryWrite));
  });

  test('with the primary database down, the Python SDK reads from the secondary (retry_to_secondary)', async () => {
    const client = tableClient(server, 'pyfallback');
    await client.createTable();
    await client.createEntity({ partitionKey: 'p', rowKey: 'r', name: 'replicated' });
    const written = Date.now();
    while (((await stats(server)).lastSyncMs ?? 0) <= written) await sleep(200);
    primary.stop();
    try {
      const script = [
        'from azure.data.tables import TableClient',
        'from azure.core.credentials import AzureNamedKeyCredential',
        `client = TableClient(endpoint="http://127.0.0.1:${server.port}/${devAccount}", table_name="pyfallback",`,
        `    credential=AzureNamedKeyCredential("${devAccount}", "${devKey}"), retry_to_secondary=True,`,
        '    retry_total=2, retry_backoff_factor=0.1)',
        'print(client.get_entity("p", "r")["name"])',
      ].join('\n');
      const run = spawnSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout.trim(), 'replicated');
    } finally {
      primary.start();
    }
  });

  test('a stopped standby reports unavailable, and live again once it is back', async () => {
    standby.stop();
    try {
      const deadline = Date.now() + 30_000;
      while ((await stats(server)).status !== 'unavailable') {
        assert.ok(Date.now() < deadline, 'the status stayed live with the standby down');
        await sleep(200);
      }
    } finally {
      standby.start();
    }
    const deadline = Date.now() + 60_000;
    while ((await stats(server)).status !== 'live') {
      assert.ok(Date.now() < deadline, 'the status did not come back to live');
      await sleep(200);
    }
  });
});
