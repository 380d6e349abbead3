// The queue service under Cerulean's own observation: metrics count its operations under their
// Storage Analytics names, fault rules pick them by name and queue, the throttle admits messages
// against a bucket per queue, CORS follows the queue service's own properties, and Entra ID
// bearer tokens act for the account as on the table endpoint.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { send } from '../../helpers/http.js';
import { sample, scrape } from '../../helpers/metrics.js';
import { assertQueueError, messageBody, queueSend, uniqueQueueName } from '../../helpers/queue.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

describe('metrics and faults see queue operation names', () => {
  let server: RunningServer;
  let dir: string;
  before(async () => {
    dir = makeTempDir();
    const file = join(dir, 'faults.json');
    writeFileSync(file, JSON.stringify({ rules: [{ kind: 'serverBusy', operation: 'PeekMessages', every: 1 }] }));
    server = await startServer({ inMemory: true, args: ['--faults', file] });
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('PutMessage and GetMessages are counted by name; PeekMessages is faulted by name', async () => {
    const queue = uniqueQueueName();
    assert.equal((await queueSend(server, { method: 'PUT', target: queue })).status, 201);
    assert.equal(
      (await queueSend(server, { method: 'POST', target: `${queue}/messages`, body: messageBody('m') })).status,
      201,
    );
    assert.equal((await queueSend(server, { method: 'GET', target: `${queue}/messages` })).status, 200);
    assertQueueError(
      await queueSend(server, { method: 'GET', target: `${queue}/messages?peekonly=true` }),
      503,
      'ServerBusy',
    );
    const text = await scrape(server.port);
    assert.equal(sample(text, 'cerulean_requests_total', { operation: 'CreateQueue', status: '201' }), 1);
    assert.equal(sample(text, 'cerulean_requests_total', { operation: 'PutMessage', status: '201' }), 1);
    assert.equal(sample(text, 'cerulean_requests_total', { operation: 'GetMessages', status: '200' }), 1);
    assert.equal(sample(text, 'cerulean_requests_total', { operation: 'PeekMessages', status: '503' }), 1);
  });
});

describe('--throttle: a bucket per queue', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, args: ['--throttle', 'partition=1,account=100000'] });
  });
  after(async () => {
    await server?.stop();
  });

  test('a get of 32 from a full bucket passes and leaves the queue in debt; another queue is free', async () => {
    const [busy, other] = [uniqueQueueName('busy'), uniqueQueueName('other')];
    for (const queue of [busy, other])
      assert.equal((await queueSend(server, { method: 'PUT', target: queue })).status, 201);
    assert.equal((await queueSend(server, { method: 'GET', target: `${busy}/messages?numofmessages=32` })).status, 200);
    // 31 messages of debt at 1 a second: the next message operation on this queue is refused.
    assertQueueError(
      await queueSend(server, { method: 'GET', target: `${busy}/messages?peekonly=true` }),
      503,
      'ServerBusy',
    );
    assert.equal((await queueSend(server, { method: 'GET', target: `${other}/messages?peekonly=true` })).status, 200);
  });
});

describe('CORS from the queue service properties', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true });
  });
  after(async () => {
    await server?.stop();
  });

  test("a preflight follows the queue service's rules, not the table service's", async () => {
    const preflight = () =>
      queueSend(server, {
        method: 'OPTIONS',
        target: 'q1/messages',
        headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'POST' },
        auth: 'none',
      });
    assert.equal((await preflight()).status, 403);
    const rules =
      '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule>' +
      '<AllowedOrigins>http://app.test</AllowedOrigins><AllowedMethods>POST,GET</AllowedMethods>' +
      '<MaxAgeInSeconds>30</MaxAgeInSeconds><ExposedHeaders>*</ExposedHeaders><AllowedHeaders>*</AllowedHeaders>' +
      '</CorsRule></Cors></StorageServiceProperties>';
    const set = await queueSend(server, { method: 'PUT', target: '?restype=service&comp=properties', body: rules });
    assert.equal(set.status, 202, set.text);
    const allowed = await preflight();
    assert.equal(allowed.status, 200);
    assert.equal(allowed.headers['access-control-allow-origin'], 'http://app.test');
    const queueProperties = await queueSend(server, { method: 'GET', target: '?restype=service&comp=properties' });
    assert.match(queueProperties.text, /<AllowedOrigins>http:\/\/app\.test<\/AllowedOrigins>/);
    const tableSide = await send(server.port, {
      method: 'GET',
      path: '/devstoreaccount1/?restype=service&comp=properties',
    });
    assert.doesNotMatch(tableSide.text, /app\.test/, 'the table service keeps its own properties');
  });
});

describe('Entra ID bearer tokens on the queue endpoint', () => {
  let server: RunningServer;
  let dir: string;
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const issuer = 'https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/';
  before(async () => {
    dir = makeTempDir('cerulean-queue-bearer-');
    writeFileSync(join(dir, 'key.pem'), key.publicKey.export({ type: 'spki', format: 'pem' }));
    server = await startServer({
      inMemory: true,
      args: ['--oauth-pem', join(dir, 'key.pem'), '--oauth-issuer', issuer],
    });
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  function token(signer = key.privateKey): string {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: issuer, aud: 'https://storage.azure.com', exp: now + 3600, nbf: now - 60 };
    const input = `${part({ alg: 'ES256', typ: 'JWT' })}.${part(claims)}`;
    const signature = sign('sha256', Buffer.from(input), { key: signer, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }

  test('a verified token creates a queue and puts a message; a forged one is 401 in XML', async () => {
    const queue = uniqueQueueName('jwt');
    const headers = { Authorization: `Bearer ${token()}` };
    assert.equal((await queueSend(server, { method: 'PUT', target: queue, headers, auth: 'none' })).status, 201);
    const put = await queueSend(server, {
      method: 'POST',
      target: `${queue}/messages`,
      body: messageBody('m'),
      headers,
      auth: 'none',
    });
    assert.equal(put.status, 201, put.text);
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const forged = { Authorization: `Bearer ${token(stranger)}` };
    const refused = await queueSend(server, {
      method: 'GET',
      target: `${queue}/messages`,
      headers: forged,
      auth: 'none',
    });
    assertQueueError(refused, 401, 'InvalidAuthenticationInfo');
  });
});
