// CORS through the real server (Azure REST: preflight-table-request): anonymous OPTIONS preflights answered from
// the account's rules, and Access-Control-* headers on actual cross-origin requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeResponse, devPath, errorCode, send } from '../../helpers/http.js';
import { serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const contoso = 'http://www.contoso.com';

let server: RunningServer;
let table: string;

before(async () => {
  server = await startServer({ inMemory: true });
  await serviceClient(server).setProperties({
    cors: [
      {
        allowedOrigins: `${contoso},http://www.fabrikam.com`,
        allowedMethods: 'GET,PUT,MERGE,POST,DELETE',
        allowedHeaders: 'x-ms-*,content-type,accept',
        exposedHeaders: 'x-ms-*',
        maxAgeInSeconds: 500,
      },
      { allowedOrigins: '*', allowedMethods: 'GET', allowedHeaders: '', exposedHeaders: '', maxAgeInSeconds: 60 },
    ],
  });
  const client = tableClient(server, uniqueTableName('cors'));
  await client.createTable();
  await client.createEntity({ partitionKey: 'p', rowKey: '1' });
  await client.createEntity({ partitionKey: 'p', rowKey: '2' });
  table = client.tableName;
});
after(async () => {
  await server.stop();
});

const preflight = (headers: Record<string, string>, path = devPath(`${table}()`)) =>
  send(server.port, { method: 'OPTIONS', path, headers, auth: 'none' });

describe('preflight (OPTIONS), anonymous', () => {
  test('an allowed origin, method and headers: 200 with the grant and no body', async () => {
    const res = await preflight({
      Origin: contoso,
      'Access-Control-Request-Method': 'PUT',
      'Access-Control-Request-Headers': 'content-type, x-ms-version, x-ms-date',
    });
    assert.equal(res.status, 200, describeResponse(res));
    assert.equal(res.headers['access-control-allow-origin'], contoso);
    assert.equal(res.headers['access-control-allow-methods'], 'PUT');
    assert.equal(res.headers['access-control-allow-headers'], 'content-type, x-ms-version, x-ms-date');
    assert.equal(res.headers['access-control-max-age'], '500');
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.body.length, 0);
  });

  test('on any resource: the service root, a table, the table collection, $batch', async () => {
    for (const path of [
      devPath('?restype=service&comp=properties'),
      devPath(table),
      devPath('Tables'),
      devPath('$batch'),
    ]) {
      const res = await preflight({ Origin: contoso, 'Access-Control-Request-Method': 'POST' }, path);
      assert.equal(res.status, 200, `${path}: ${describeResponse(res)}`);
    }
  });

  test('the * rule allows any origin for GET only', async () => {
    const get = await preflight({ Origin: 'http://anyone.example', 'Access-Control-Request-Method': 'GET' });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], '*');
    const put = await preflight({ Origin: 'http://anyone.example', 'Access-Control-Request-Method': 'PUT' });
    assert.equal(put.status, 403);
  });

  test('denied: unknown origin with another method, unlisted header, other account → 403 CorsPreflightFailure', async () => {
    const cases = [
      preflight({ Origin: 'http://evil.example', 'Access-Control-Request-Method': 'DELETE' }),
      preflight({ Origin: contoso, 'Access-Control-Request-Method': 'PATCH' }),
      preflight({
        Origin: contoso,
        'Access-Control-Request-Method': 'PUT',
        'Access-Control-Request-Headers': 'authorization',
      }),
      preflight({ Origin: contoso, 'Access-Control-Request-Method': 'GET' }, '/nosuchaccount/Tables'),
    ];
    for (const res of await Promise.all(cases)) {
      assert.equal(res.status, 403, describeResponse(res));
      assert.equal(res.headers['x-ms-error-code'], 'CorsPreflightFailure');
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.equal(errorCode(res), 'CorsPreflightFailure', 'the error body');
    }
  });

  test('missing Origin or Access-Control-Request-Method → 400', async () => {
    assert.equal((await preflight({ 'Access-Control-Request-Method': 'GET' })).status, 400);
    assert.equal((await preflight({ Origin: contoso })).status, 400);
  });

  test('credentials on a preflight are ignored', async () => {
    const res = await send(server.port, {
      method: 'OPTIONS',
      path: devPath(`${table}()`),
      headers: {
        Origin: contoso,
        'Access-Control-Request-Method': 'GET',
        Authorization: 'SharedKeyLite devstoreaccount1:garbage',
      },
    });
    assert.equal(res.status, 200);
  });
});

describe('actual cross-origin requests', () => {
  test('an allowed origin gets Allow-Origin, credentials and exposed headers, continuation included', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: devPath(`${table}()?$top=1`),
      headers: { Origin: contoso },
    });
    assert.equal(res.status, 200, describeResponse(res));
    assert.equal(res.headers['access-control-allow-origin'], contoso);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['vary'], 'Origin');
    const exposed = (res.headers['access-control-expose-headers'] as string).split(',');
    for (const name of [
      'x-ms-request-id',
      'x-ms-version',
      'x-ms-continuation-NextPartitionKey',
      'x-ms-continuation-NextRowKey',
    ]) {
      assert.ok(exposed.includes(name), `${name} in ${exposed.join(',')}`);
    }
  });

  test('errors carry the CORS headers too, so a browser can read them', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: devPath(`${table}(PartitionKey='p',RowKey='missing')`),
      headers: { Origin: contoso },
    });
    assert.equal(res.status, 404);
    assert.equal(res.headers['access-control-allow-origin'], contoso);
    const unauthenticated = await send(server.port, {
      method: 'GET',
      path: devPath('Tables'),
      headers: { Origin: contoso },
      auth: 'none',
    });
    assert.equal(unauthenticated.status, 403);
    assert.equal(unauthenticated.headers['access-control-allow-origin'], contoso);
  });

  test('a method only the * rule allows answers *; an origin no rule allows gets only Vary', async () => {
    const star = await send(server.port, {
      method: 'GET',
      path: devPath(`${table}()`),
      headers: { Origin: 'http://anyone.example' },
    });
    assert.equal(star.headers['access-control-allow-origin'], '*');
    const denied = await send(server.port, {
      method: 'DELETE',
      path: devPath(`${table}(PartitionKey='p',RowKey='2')`),
      headers: { Origin: 'http://evil.example', 'If-Match': '*' },
    });
    assert.equal(denied.status, 204);
    assert.equal(denied.headers['access-control-allow-origin'], undefined);
    assert.equal(denied.headers['vary'], 'Origin');
  });

  test('without an Origin header nothing changes', async () => {
    const res = await send(server.port, { method: 'GET', path: devPath(`${table}()`) });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['vary'], undefined);
  });

  test('after the rules are removed, preflights fail and responses carry no CORS headers', async () => {
    const client = serviceClient(server);
    const saved = (await client.getProperties()).cors;
    await client.setProperties({ cors: [] });
    try {
      assert.equal((await preflight({ Origin: contoso, 'Access-Control-Request-Method': 'GET' })).status, 403);
      const res = await send(server.port, { method: 'GET', path: devPath(`${table}()`), headers: { Origin: contoso } });
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    } finally {
      await client.setProperties({ cors: saved });
    }
  });
});
