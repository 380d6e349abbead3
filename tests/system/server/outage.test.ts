// The PostgreSQL database out of reach, through a real server over a private cluster the test
// stops and starts: a $batch fails as a whole with the outer 503 and the service's error body (not
// 202 with an inner part), so the JS SDK retries the transaction until the database is back; the
// log says once that the database went and once that it came back, and each refused request is
// one warn line with its cause, never an error with a stack.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { AzureNamedKeyCredential, TableClient } from '@azure/data-tables';
import { absoluteUrl, changesetBody, op, postBatch } from '../../helpers/batch.js';
import { assertError, devPath, send } from '../../helpers/http.js';
import { postgresBin, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { accountUrl, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';

const skip = postgresBin() === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined;

function logLines(server: RunningServer, pattern: RegExp): string[] {
  return server
    .output()
    .stderr.split('\n')
    .filter((line) => pattern.test(line));
}

describe('a batch while the database is out of reach (PostgreSQL)', { skip }, () => {
  let cluster: Cluster;
  let server: RunningServer;
  let table: string;

  before(async () => {
    cluster = await startCluster(postgresBin()!);
    server = await startServer({ database: cluster.url });
    table = uniqueTableName('outage');
    await tableClient(server, table).createTable();
    cluster.stop(); // immediate: as a crash of the database
  });
  after(async () => {
    await server?.stop();
    cluster?.destroy();
  });

  test('raw $batch and a single insert: the outer status is 503 ServerBusy with the error body', async () => {
    const insert = op.insert(absoluteUrl(server.port, table), { PartitionKey: 'p', RowKey: 'raw' });
    assertError(await postBatch(server.port, changesetBody([insert])), 503, 'ServerBusy');
    assertError(
      await send(server.port, { method: 'POST', path: devPath(table), body: { PartitionKey: 'p', RowKey: 'single' } }),
      503,
      'ServerBusy',
    );
  });

  test('the JS SDK retries the transaction and it commits once the database is back', async () => {
    const client = new TableClient(accountUrl(server), table, new AzureNamedKeyCredential(devAccount, devKey), {
      allowInsecureConnection: true,
      retryOptions: { maxRetries: 40, retryDelayInMs: 100, maxRetryDelayInMs: 500 },
    });
    const statuses: number[] = [];
    client.pipeline.addPolicy(
      {
        name: 'recordStatuses',
        sendRequest: async (request, next) => {
          const response = await next(request);
          statuses.push(response.status);
          return response;
        },
      },
      { afterPhase: 'Retry' },
    );
    let settled = false;
    const outcome = client.submitTransaction([['create', { partitionKey: 'p', rowKey: 'sdk', n: 1 }]]).then(
      () => 'committed',
      (error: unknown) => error,
    );
    void outcome.then(() => (settled = true));
    for (const deadline = Date.now() + 20_000; statuses.length === 0 && !settled && Date.now() < deadline;)
      await sleep(20);
    assert.equal(
      statuses[0],
      503,
      `first attempt answered ${statuses[0]}, outcome ${settled ? String(await outcome) : 'pending'}`,
    );
    cluster.start();
    assert.equal(await outcome, 'committed');
    assert.equal(statuses.at(-1), 202);
    assert.equal((await tableClient(server, table).getEntity<{ n: number }>('p', 'sdk')).n, 1);
  });

  test('the log: database unreachable, then back, once each; one warn line per refused request', async () => {
    const { stderr } = server.output();
    assert.equal(logLines(server, /database unreachable/).length, 1, stderr);
    assert.match(
      logLines(server, /database unreachable/)[0]!,
      /^\S+ warn database unreachable: database: .*ECONNREFUSED/,
    );
    assert.equal(logLines(server, /database back/).length, 1, stderr);
    const refused = logLines(server, /503 ServerBusy/);
    assert.ok(refused.length >= 3, stderr);
    for (const line of refused) assert.match(line, /^\S+ warn 503 ServerBusy answering \S+ \S+: database: /);
    assert.doesNotMatch(stderr, / error /, stderr);
    assert.doesNotMatch(stderr, /\n\s+at /, stderr);
  });
});
