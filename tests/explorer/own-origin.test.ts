// The explorer across the service ports (docs/explorer.md "Across the service ports"), over raw
// HTTP: endpoints.json names each service's port, the page's CSP lets it reach those ports and no
// other, the blob port serves no explorer, and a request whose Origin is the table or queue
// listener gets CORS without any account CORS rule, while every other Origin (the blob port's
// too) is answered as before (here: no rules, no grant).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { send } from '../helpers/http.js';
import { assertQueueError, queuePort, queueSend } from '../helpers/queue.js';
import { startServer, type RunningServer } from '../helpers/server.js';

describe('explorer: the other services of this server', () => {
  let server: RunningServer;
  let tableOrigin: string;
  const blobPort = (): number => Number(new URL(server.blobUrl!).port);
  before(async () => {
    server = await startServer({ inMemory: true });
    tableOrigin = `http://127.0.0.1:${server.port}`;
    assert.ok(server.blobUrl, 'the server printed no blob endpoint');
  });
  after(() => server.stop());

  const preflight = (origin: string) =>
    queueSend(server, {
      method: 'OPTIONS',
      target: '?comp=list',
      auth: 'none',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization,x-ms-date,x-ms-version',
      },
    });

  test('endpoints.json names the port of each service, on the table and queue listeners', async () => {
    for (const port of [server.port, queuePort(server)]) {
      const response = await send(port, { method: 'GET', path: '/_explorer/endpoints.json', auth: 'none' });
      assert.equal(response.status, 200);
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
      const services = response.json().services as { service: string; port: number }[];
      assert.deepEqual(Object.fromEntries(services.map((s) => [s.service, s.port])), {
        table: server.port,
        queue: queuePort(server),
        blob: blobPort(),
      });
    }
  });

  test('the blob port serves no explorer: its pages are whatever was uploaded', async () => {
    const response = await send(blobPort(), { method: 'GET', path: '/_explorer/', auth: 'none' });
    assert.equal(response.status, 404);
    assert.equal(response.headers['content-security-policy'], undefined);
    assert.doesNotMatch(response.text, /Cerulean explorer/);
  });

  test("the page's CSP connects to this server's ports on the host it was loaded from, nothing else", async () => {
    const response = await send(server.port, { method: 'GET', path: '/_explorer/', auth: 'none' });
    const connect = /connect-src ([^;]*)/.exec(String(response.headers['content-security-policy']))?.[1];
    const sources = new Set(connect?.split(' '));
    const ports = [server.port, queuePort(server), blobPort()];
    assert.deepEqual(sources, new Set(["'self'", ...ports.map((port) => `http://127.0.0.1:${port}`)]));
    const bad = await send(server.port, {
      method: 'GET',
      path: '/_explorer/',
      auth: 'none',
      headers: { Host: 'evil;script-src *' },
    });
    assert.match(String(bad.headers['content-security-policy']), /connect-src 'self';/);
  });

  test("a preflight from the explorer's origin is granted without CORS rules", async () => {
    const response = await preflight(tableOrigin);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers['access-control-allow-origin'], tableOrigin);
    assert.equal(response.headers['access-control-allow-methods'], 'GET');
    assert.equal(response.headers['access-control-allow-headers'], 'authorization,x-ms-date,x-ms-version');
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
  });

  test('a preflight from any other origin is refused as before (no CORS rules)', async () => {
    const foreign = [
      'http://evil.example',
      `http://localhost:${server.port}`, // another host name than the request's
      `https://127.0.0.1:${server.port}`, // another scheme
      'http://127.0.0.1:1', // a port that is not this server's
      `http://127.0.0.1:${blobPort()}`, // the blob port serves user content, not the explorer
      'null',
    ];
    for (const origin of foreign) {
      const response = await preflight(origin);
      assertQueueError(response, 403, 'CorsPreflightFailure');
      assert.equal(response.headers['access-control-allow-origin'], undefined, origin);
    }
  });

  test("an actual request from the explorer's origin can be read; from another origin it gets no grant", async () => {
    const own = await queueSend(server, { method: 'GET', target: '?comp=list', headers: { Origin: tableOrigin } });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.headers['access-control-allow-origin'], tableOrigin);
    assert.equal(own.headers['access-control-expose-headers'], '*');
    const foreign = await queueSend(server, {
      method: 'GET',
      target: '?comp=list',
      headers: { Origin: 'http://evil.example' },
    });
    assert.equal(foreign.status, 200, foreign.text);
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
    assert.equal(foreign.headers['access-control-expose-headers'], undefined);
  });

  test('account CORS rules still decide for other origins', async () => {
    const rules =
      '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule>' +
      '<AllowedOrigins>http://app.example</AllowedOrigins><AllowedMethods>GET</AllowedMethods>' +
      '<MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders>x-ms-*</ExposedHeaders>' +
      '<AllowedHeaders>*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>';
    const set = await queueSend(server, { method: 'PUT', target: '?restype=service&comp=properties', body: rules });
    assert.equal(set.status, 202, set.text);
    const app = await preflight('http://app.example');
    assert.equal(app.status, 200, app.text);
    assert.equal(app.headers['access-control-allow-origin'], 'http://app.example');
    assert.equal(app.headers['access-control-allow-credentials'], 'true');
    assertQueueError(await preflight('http://evil.example'), 403, 'CorsPreflightFailure');
    const own = await preflight(tableOrigin);
    assert.equal(own.headers['access-control-allow-origin'], tableOrigin);
  });
});
