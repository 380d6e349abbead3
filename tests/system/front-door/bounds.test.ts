// Bounded resources: requests beyond --max-requests are refused at once with
// 503 ServerBusy instead of queueing, and the server serves again when the load is gone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, describeResponse, devPath, send } from '../../helpers/http.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

describe('requests in flight', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, args: ['--port', '0', '--in-memory', '--max-requests', '2'] });
  });
  after(() => server.stop());

  test('past --max-requests a request gets 503 ServerBusy, and the server recovers', async () => {
    // Two requests that stay in flight while their bodies trickle in, a byte every 100 ms; the
    // third goes out once the server answered both with 100 Continue (it is handling them).
    const continued: Promise<void>[] = [];
    const slow = ['SlowOne', 'SlowTwo'].map((name) => {
      let inFlight: () => void = () => {};
      continued.push(new Promise((resolve) => (inFlight = resolve)));
      return send(server.port, {
        method: 'POST',
        path: devPath('Tables'),
        headers: { Prefer: 'return-no-content' },
        body: { TableName: name },
        chunkBytes: 1,
        chunkDelayMs: 100,
        onContinue: () => inFlight(),
      });
    });
    await Promise.all(continued);
    const refused = await send(server.port, { method: 'GET', path: devPath('Tables') });
    assertError(refused, 503, 'ServerBusy');

    for (const response of await Promise.all(slow)) assert.equal(response.status, 204, describeResponse(response));
    const served = await send(server.port, { method: 'GET', path: devPath('Tables') });
    assert.equal(served.status, 200, describeResponse(served));
  });

  test('--max-requests must be a positive whole number', async () => {
    await assert.rejects(startServer({ inMemory: true, args: ['--port', '0', '--in-memory', '--max-requests', '0'] }));
  });
});
