// The server's log as it writes it (stderr of the process): what a client caused is one info or
// warn line, never an error with a stack; expected 503s (throttling, injected faults) are one warn
// line each with their cause. A database out of reach: tests/system/server/outage.test.ts.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';
import { freshTable } from '../../helpers/sdk.js';

/** The log lines (after the startup ones) that match `pattern`, once `count` of them are there (or 10 s passed). */
async function logLines(server: RunningServer, pattern: RegExp, count: number): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = server
      .output()
      .stderr.split('\n')
      .filter((line) => pattern.test(line));
    if (lines.length >= count || Date.now() > deadline) return lines;
    await sleep(20);
  }
}

/** No error-level line and no stack frame anywhere in the log. */
function assertNoErrorsOrStacks(server: RunningServer): void {
  const { stderr } = server.output();
  assert.doesNotMatch(stderr, / error /, stderr);
  assert.doesNotMatch(stderr, /\n\s+at /, stderr);
}

describe('a 501 the client caused', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true });
  });
  after(async () => {
    await server?.stop();
  });

  test('startswith in $filter: 501 NotImplemented, one info line, no error, no stack', async () => {
    const client = await freshTable(server, 'log');
    const filter = encodeURIComponent("startswith(RowKey,'r')");
    const res = await send(server.port, { method: 'GET', path: devPath(`${client.tableName}()?$filter=${filter}`) });
    assert.equal(res.status, 501, describeResponse(res));
    const lines = await logLines(server, /501 NotImplemented/, 1);
    assert.equal(lines.length, 1, server.output().stderr);
    assert.match(lines[0]!, /^\S+ info 501 NotImplemented answering GET \/devstoreaccount1\/\w+\(\)\?\$filter=/);
    assertNoErrorsOrStacks(server);
  });
});

describe('throttling (--throttle): each 503 is one warn line with the cause', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, args: ['--throttle', 'partition=1,account=1000'] });
  });
  after(async () => {
    await server?.stop();
  });

  test('inserts past the partition target: 503 ServerBusy, warn lines naming the throttle', async () => {
    const client = await freshTable(server, 'throttled');
    const responses: RawResponse[] = [];
    for (let i = 0; i < 5; i++) {
      responses.push(
        await send(server.port, {
          method: 'POST',
          path: devPath(client.tableName),
          body: { PartitionKey: 'p', RowKey: `r${i}` },
        }),
      );
    }
    const refused = responses.filter((res) => res.status === 503).length;
    assert.ok(refused >= 1, responses.map((res) => res.status).join(','));
    const lines = await logLines(server, /503 ServerBusy/, refused);
    assert.equal(lines.length, refused, server.output().stderr);
    for (const line of lines)
      assert.match(line, /^\S+ warn 503 ServerBusy answering POST \S+: throttled \(--throttle\)/);
    assertNoErrorsOrStacks(server);
  });
});

describe('injected faults (--faults): one warn line each', () => {
  let server: RunningServer;
  let dir: string;
  before(async () => {
    dir = makeTempDir();
    const faults = join(dir, 'faults.json');
    writeFileSync(faults, JSON.stringify({ rules: [{ kind: 'serverBusy', operation: 'InsertEntity', every: 1 }] }));
    server = await startServer({ inMemory: true, args: ['--faults', faults] });
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('a refused insert: 503, one warn line naming the fault, no error, no stack', async () => {
    const client = await freshTable(server, 'faulted');
    const res = await send(server.port, {
      method: 'POST',
      path: devPath(client.tableName),
      body: { PartitionKey: 'p', RowKey: 'r' },
    });
    assert.equal(res.status, 503, describeResponse(res));
    const lines = await logLines(server, /serverBusy|ServerBusy/, 1);
    assert.equal(lines.length, 1, server.output().stderr);
    assert.match(lines[0]!, /^\S+ warn fault injected: serverBusy on InsertEntity/);
    assertNoErrorsOrStacks(server);
  });
});
