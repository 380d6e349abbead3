// --throttle: token buckets per partition and per account refuse only past their rate, with the
// service's 503 ServerBusy, without executing the request; a batch counts its entities; the
// official SDK's default retry policy rides through a throttled burst.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { AzureNamedKeyCredential, TableClient } from '@azure/data-tables';
import { startServer, devAccount, devKey, type RunningServer } from '../helpers/server.js';
import { describeResponse, devPath, errorCode, send, type RawResponse } from '../helpers/http.js';
import { accountUrl, freshTable, uniqueTableName } from '../helpers/sdk.js';
import { sample, scrape } from '../helpers/metrics.js';

const partitionLimitText = 'The server is currently unable to receive requests. Please retry your request.';
const accountLimitText = 'Operations per second is over the account limit.';

async function createTable(server: RunningServer, prefix: string): Promise<string> {
  const table = uniqueTableName(prefix);
  const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
  assert.equal(res.status, 201, describeResponse(res));
  return table;
}

/** Sends the inserts all at once; returns the answers and the seconds from first send to last answer. */
async function burst(
  server: RunningServer,
  table: string,
  keys: readonly [string, string][],
): Promise<{ answers: RawResponse[]; seconds: number }> {
  const started = performance.now();
  const answers = await Promise.all(
    keys.map(([PartitionKey, RowKey]) =>
      send(server.port, { method: 'POST', path: devPath(table), body: { PartitionKey, RowKey } }),
    ),
  );
  return { answers, seconds: (performance.now() - started) / 1000 };
}

function assertServerBusy(res: RawResponse, text: string): void {
  assert.equal(res.status, 503, describeResponse(res));
  assert.equal(errorCode(res), 'ServerBusy');
  assert.equal(res.headers['x-ms-error-code'], 'ServerBusy');
  assert.ok(res.json()['odata.error'].message.value.startsWith(`${text}\nRequestId:`), res.text);
}

async function countInPartition(server: RunningServer, table: string, partitionKey: string): Promise<number> {
  // A filter without PartitionKey is checked against the account's bucket only.
  const res = await send(server.port, {
    method: 'GET',
    path: devPath(`${table}()?$filter=${encodeURIComponent("RowKey ne ''")}`),
  });
  assert.equal(res.status, 200, describeResponse(res));
  return (res.json().value as { PartitionKey: string }[]).filter((entity) => entity.PartitionKey === partitionKey)
    .length;
}

describe('--throttle partition=20,account=1000', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, args: ['--throttle', 'partition=20,account=1000'] });
  });
  after(async () => {
    await server?.stop();
  });

  test('a burst of 20 passes; past it, requests are refused until the rate pays them back', async () => {
    const table = await createTable(server, 'thr');
    const first = await burst(
      server,
      table,
      Array.from({ length: 20 }, (_, i) => ['hot', `a${i}`]),
    );
    assert.deepEqual(
      first.answers.map((res) => res.status),
      Array(20).fill(201),
    );
    const second = await burst(
      server,
      table,
      Array.from({ length: 20 }, (_, i) => ['hot', `b${i}`]),
    );
    const seconds = first.seconds + second.seconds;
    const passed = second.answers.filter((res) => res.status === 201).length;
    // The bucket refills 20 tokens a second: the second burst gets at most what came back meanwhile.
    assert.ok(passed <= Math.ceil(20 * seconds) + 1, `${passed} passed in ${seconds.toFixed(3)} s`);
    if (seconds < 0.9) assert.ok(passed < 20, `the 40th request in ${seconds.toFixed(3)} s must be refused`);
    for (const res of second.answers.filter((answer) => answer.status !== 201))
      assertServerBusy(res, partitionLimitText);
    // Refused inserts were not executed; other partitions are not throttled.
    assert.equal(await countInPartition(server, table, 'hot'), 20 + passed);
    const cold = await send(server.port, {
      method: 'POST',
      path: devPath(table),
      body: { PartitionKey: 'cold', RowKey: '1' },
    });
    assert.equal(cold.status, 201, describeResponse(cold));
    const text = await scrape(server.port);
    assert.equal(sample(text, 'cerulean_throttled_requests_total', { scope: 'partition' }), 20 - passed);
  });

  test('a batch counts its entities: after 40 in one batch the partition is a second in debt', async () => {
    const client = await freshTable(server, 'thb');
    await client.submitTransaction(
      Array.from({ length: 40 }, (_, i) => ['create', { partitionKey: 'b', rowKey: `r${i}` }] as const),
    );
    const started = performance.now();
    const next = await send(server.port, {
      method: 'POST',
      path: devPath(client.tableName),
      body: { PartitionKey: 'b', RowKey: 'late' },
    });
    const batch = await client.submitTransaction([['create', { partitionKey: 'b', rowKey: 'late2' }]]).then(
      () => 202,
      (error: { statusCode?: number }) => error.statusCode,
    );
    if (performance.now() - started < 900) {
      assertServerBusy(next, partitionLimitText);
      assert.equal(batch, 503, 'a throttled batch is refused as a whole, not as one of its parts');
    }
    const elsewhere = await send(server.port, {
      method: 'POST',
      path: devPath(client.tableName),
      body: { PartitionKey: 'c', RowKey: '1' },
    });
    assert.equal(elsewhere.status, 201, describeResponse(elsewhere));
  });

  test('the SDK with its default retry policy completes a throttled burst of 40', async () => {
    const table = await createTable(server, 'thsdk');
    const throttledBefore =
      sample(await scrape(server.port), 'cerulean_throttled_requests_total', { scope: 'partition' }) ?? 0;
    // Default options: the SDK's own retry policy (exponential back-off on 503).
    const client = new TableClient(accountUrl(server), table, new AzureNamedKeyCredential(devAccount, devKey), {
      allowInsecureConnection: true,
    });
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        client.createEntity({ partitionKey: 'sdk', rowKey: `r${String(i).padStart(2, '0')}` }),
      ),
    );
    assert.equal(await countInPartition(server, table, 'sdk'), 40);
    const throttled =
      sample(await scrape(server.port), 'cerulean_throttled_requests_total', { scope: 'partition' })! - throttledBefore;
    assert.ok(throttled >= 1, 'the burst was throttled and retried');
  });
});

describe('--throttle partition=1000,account=30', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, args: ['--throttle', 'partition=1000,account=30'] });
  });
  after(async () => {
    await server?.stop();
  });

  test('the account target covers every partition', async () => {
    const table = await createTable(server, 'tha');
    const { answers, seconds } = await burst(
      server,
      table,
      Array.from({ length: 60 }, (_, i) => [`p${i}`, 'r']),
    );
    const passed = answers.filter((res) => res.status === 201).length;
    assert.ok(
      passed >= 30 && passed <= 30 + Math.ceil(30 * seconds) + 1,
      `${passed} passed in ${seconds.toFixed(3)} s`,
    );
    for (const res of answers.filter((answer) => answer.status !== 201)) assertServerBusy(res, accountLimitText);
    assert.equal(
      sample(await scrape(server.port), 'cerulean_throttled_requests_total', { scope: 'account' }),
      60 - passed,
    );
  });
});

describe('--throttle azure', () => {
  test('is accepted, and a bad rate is refused at start', async () => {
    const server = await startServer({ inMemory: true, args: ['--throttle', 'azure'] });
    await server.stop();
    await assert.rejects(startServer({ inMemory: true, args: ['--throttle', 'partition=fast'] }), /--throttle must be/);
  });
});
