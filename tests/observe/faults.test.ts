// Fault injection (--faults FILE, /_faults): each kind happens exactly as its rule says, on the
// operation and table it names and nothing else; probabilities replay the same with the same seed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { describeResponse, devPath, entityPath, errorCode, send, type RawRequest } from '../helpers/http.js';
import { sample, scrape } from '../helpers/metrics.js';
import { tableClient } from '../helpers/sdk.js';

const rules = {
  seed: 7,
  rules: [
    { kind: 'serverBusy', operation: 'InsertEntity', table: 'fbusy', every: 2 },
    { kind: 'operationTimedOut', operation: 'QueryEntity', table: 'ftimeout', every: 3 },
    { kind: 'internalError', table: 'frandom', probability: 0.5 },
    { kind: 'latency', operation: 'QueryEntity', table: 'fslow', every: 1, latencyMs: 400 },
    { kind: 'connectionReset', operation: 'DeleteEntity', table: 'freset', every: 1 },
    { kind: 'answerLost', operation: 'InsertEntity', table: 'flost', every: 1, limit: 1 },
    { kind: 'serverBusy', operation: 'EntityGroupTransaction', table: 'fbatch', every: 2 },
  ],
};

describe('fault injection', () => {
  let server: RunningServer;
  let dir: string;
  const insert = (table: string, rowKey: string) =>
    send(server.port, { method: 'POST', path: devPath(table), body: { PartitionKey: 'p', RowKey: rowKey } });
  const read = (table: string, rowKey: string) =>
    send(server.port, { method: 'GET', path: entityPath(table, 'p', rowKey) });
  const statuses = async (requests: (() => Promise<{ status: number }>)[]) => {
    const found = [];
    for (const request of requests) found.push((await request()).status);
    return found;
  };
  const faults = (request: Omit<RawRequest, 'path'>) => send(server.port, { ...request, path: '/_faults' });

  before(async () => {
    dir = makeTempDir();
    const file = join(dir, 'faults.json');
    writeFileSync(file, JSON.stringify(rules));
    server = await startServer({ inMemory: true, args: ['--faults', file] });
    for (const table of ['fbusy', 'ftimeout', 'frandom', 'fslow', 'freset', 'flost', 'fbatch', 'fother']) {
      const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
      assert.equal(res.status, 201, describeResponse(res));
    }
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('serverBusy on every 2nd insert into fbusy: refused inserts are not executed, other tables untouched', async () => {
    const found = await statuses(Array.from({ length: 5 }, (_, i) => () => insert('fbusy', `r${i}`)));
    assert.deepEqual(found, [201, 503, 201, 503, 201]);
    const refused = await insert('fbusy', 'r5');
    assert.equal(refused.status, 503);
    assert.equal(errorCode(refused), 'ServerBusy');
    assert.match(
      refused.json()['odata.error'].message.value,
      /^The server is currently unable to receive requests\. Please retry your request\.\nRequestId:/,
    );
    const listed = await send(server.port, { method: 'GET', path: devPath('fbusy()') });
    assert.deepEqual(
      listed.json().value.map((e: { RowKey: string }) => e.RowKey),
      ['r0', 'r2', 'r4'],
    );
    assert.deepEqual(
      await statuses(Array.from({ length: 6 }, (_, i) => () => insert('fother', `r${i}`))),
      Array(6).fill(201),
    );
  });

  test('operationTimedOut on every 3rd point read of ftimeout; writes there untouched', async () => {
    assert.deepEqual(
      await statuses(Array.from({ length: 4 }, (_, i) => () => insert('ftimeout', `r${i}`))),
      Array(4).fill(201),
    );
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await read('ftimeout', 'r0'));
    assert.deepEqual(
      answers.map((res) => res.status),
      [200, 200, 500, 200, 200, 500],
    );
    assert.equal(errorCode(answers[2]!), 'OperationTimedOut');
    assert.match(
      answers[2]!.json()['odata.error'].message.value,
      /^The operation could not be completed within the permitted time\./,
    );
  });

  test('internalError with probability 0.5: the same seed replays the same faults', async () => {
    const created = await insert('frandom', 'r0');
    const outcomes = async () =>
      (await statuses(Array.from({ length: 20 }, () => () => read('frandom', 'r0')))).join('');
    // The insert itself was subject to the rule too: start both runs from the seed.
    const put = () => faults({ method: 'PUT', body: rules });
    assert.equal((await put()).status, 200);
    const first = await outcomes();
    assert.equal((await put()).status, 200);
    const second = await outcomes();
    assert.equal(first, second);
    const failures = (first.match(/500/g) ?? []).length;
    assert.ok(failures >= 1 && failures <= 19, first);
    assert.ok([201, 500].includes(created.status));
    const failed = await (async () => {
      for (;;) {
        const res = await read('frandom', 'r0');
        if (res.status === 500) return res;
      }
    })();
    assert.equal(errorCode(failed), 'InternalError');
  });

  test('latency: a point read of fslow answers after at least 400 ms, and correctly', async () => {
    assert.equal((await insert('fslow', 'r0')).status, 201);
    const started = performance.now();
    const res = await read('fslow', 'r0');
    assert.equal(res.status, 200, describeResponse(res));
    assert.ok(performance.now() - started >= 400);
  });

  test('connectionReset: a delete on freset is dropped unanswered and not executed', async () => {
    assert.equal((await insert('freset', 'r0')).status, 201);
    await assert.rejects(
      send(server.port, { method: 'DELETE', path: entityPath('freset', 'p', 'r0'), headers: { 'If-Match': '*' } }),
      (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET' || /socket hang up/.test(error.message),
    );
    assert.equal((await read('freset', 'r0')).status, 200);
  });

  test('answerLost: the insert into flost commits but its answer is lost; the retry finds it there', async () => {
    await assert.rejects(
      insert('flost', 'r0'),
      (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET' || /socket hang up/.test(error.message),
    );
    assert.equal((await read('flost', 'r0')).status, 200);
    const retry = await insert('flost', 'r0'); // the rule's limit of 1 is spent
    assert.equal(errorCode(retry), 'EntityAlreadyExists');
  });

  test('a batch is matched by the table its body addresses', async () => {
    const batch = (table: string, rowKey: string) =>
      tableClient(server, table)
        .submitTransaction([['create', { partitionKey: 'p', rowKey }]])
        .then(
          () => 202,
          (error: { statusCode?: number }) => error.statusCode,
        );
    assert.equal(await batch('fbatch', 'a'), 202);
    assert.equal(await batch('fbatch', 'b'), 503);
    assert.equal(await batch('fother', 'batched'), 202);
    assert.equal((await read('fbatch', 'b')).status, 404);
  });

  test('every fault is counted in the metrics and logged', async () => {
    const text = await scrape(server.port);
    assert.equal(sample(text, 'cerulean_faults_injected_total', { kind: 'serverBusy', operation: 'InsertEntity' }), 3);
    assert.equal(
      sample(text, 'cerulean_faults_injected_total', { kind: 'operationTimedOut', operation: 'QueryEntity' }),
      2,
    );
    assert.equal(
      sample(text, 'cerulean_faults_injected_total', { kind: 'connectionReset', operation: 'DeleteEntity' }),
      1,
    );
    assert.equal(sample(text, 'cerulean_faults_injected_total', { kind: 'answerLost', operation: 'InsertEntity' }), 1);
    assert.equal(sample(text, 'cerulean_faults_injected_total', { kind: 'latency', operation: 'QueryEntity' }), 1);
    assert.equal(
      sample(text, 'cerulean_faults_injected_total', { kind: 'serverBusy', operation: 'EntityGroupTransaction' }),
      1,
    );
    assert.equal(sample(text, 'cerulean_requests_total', { operation: 'DeleteEntity', status: 'dropped' }), 1);
    assert.match(server.output().stderr, /fault injected: connectionReset on DeleteEntity freset \(rule 4\)/);
    assert.match(server.output().stderr, /fault injected: latency 400 ms on QueryEntity fslow \(rule 3\)/);
    assert.match(server.output().stderr, /fault injected: serverBusy on EntityGroupTransaction fbatch \(rule 6\)/);
  });

  test('/_faults needs an account key; shows, replaces and clears the rules', async () => {
    const anonymous = await faults({ method: 'GET', auth: 'none' });
    assert.equal(anonymous.status, 403, describeResponse(anonymous));
    assert.equal(errorCode(anonymous), 'AuthenticationFailed');
    const badKey = await faults({
      method: 'GET',
      auth: { scheme: 'SharedKey', key: Buffer.alloc(64, 1).toString('base64') },
    });
    assert.equal(badKey.status, 403);

    const shown = await faults({ method: 'GET', auth: { scheme: 'SharedKey' } });
    assert.equal(shown.status, 200, describeResponse(shown));
    const document = shown.json();
    assert.equal(document.seed, 7);
    // Counters restarted with the last PUT: 20 reads of frandom, then reads until one failed.
    assert.equal(document.rules[2].kind, 'internalError');
    assert.ok(document.rules[2].matched >= 21 && document.rules[2].fired >= 1, JSON.stringify(document.rules[2]));

    for (const bad of [
      '{',
      { rules: [{ kind: 'explode', every: 1 }] },
      { rules: [{ kind: 'latency', every: 1 }] },
      { rules: [{ kind: 'serverBusy' }] },
    ]) {
      const res = await faults({ method: 'PUT', body: bad });
      assert.equal(res.status, 400, describeResponse(res));
      assert.equal(errorCode(res), 'InvalidInput');
    }
    const cleared = await faults({ method: 'DELETE' });
    assert.deepEqual(cleared.json().rules, []);
    assert.deepEqual(
      await statuses(Array.from({ length: 4 }, (_, i) => () => insert('fbusy', `after${i}`))),
      Array(4).fill(201),
    );
  });
});
