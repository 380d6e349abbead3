// Texts tools match on, through a real server process: the service's CORS preflight message, and
// the one line a server prints when its port is taken.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { assertError, devPath, send } from '../../helpers/http.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const binPath = fileURLToPath(new URL('../../../../bin/cerulean.js', import.meta.url));

let server: RunningServer;

before(async () => {
  server = await startServer({ inMemory: true });
});
after(async () => {
  await server?.stop();
});

describe('CORS preflight without a required header', () => {
  for (const headers of [{ 'Access-Control-Request-Method': 'GET' }, { Origin: 'http://www.contoso.com' }, {}]) {
    test(`${JSON.stringify(headers)}: 400 InvalidHeaderValue, "A required CORS header is not present."`, async () => {
      const res = await send(server.port, { method: 'OPTIONS', path: devPath('Tables'), headers, auth: 'none' });
      assertError(res, 400, 'InvalidHeaderValue');
      assert.equal(res.json()['odata.error'].message.value.split('\n')[0], 'A required CORS header is not present.');
    });
  }
});

describe('a port already in use', () => {
  test('one line naming the port and --port, exit status 1, no stack', async () => {
    const child = spawn(process.execPath, [binPath, '--in-memory', '--port', String(server.port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1, stderr);
    const lines = stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, stderr);
    assert.match(lines[0]!, new RegExp(`:${server.port} \\(--port\\): the port is already in use`));
    assert.doesNotMatch(stderr, /Unhandled|\n\s+at /);
  });
});
