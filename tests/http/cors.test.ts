import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { preflight, withCorsHeaders } from '../../src/http/cors.js';
import type { CorsRule } from '../../src/wire/service-properties-xml.js';

const contoso: CorsRule = {
  allowedOrigins: ['http://www.contoso.com', 'http://www.fabrikam.com'],
  allowedMethods: ['GET', 'PUT', 'MERGE'],
  allowedHeaders: ['x-ms-meta-target*', 'content-type'],
  exposedHeaders: ['x-ms-meta-*', 'x-ms-request-id', 'x-custom'],
  maxAgeInSeconds: 500,
};
const anyone: CorsRule = {
  allowedOrigins: ['*'],
  allowedMethods: ['GET'],
  allowedHeaders: ['*'],
  exposedHeaders: ['*'],
  maxAgeInSeconds: 5,
};

const request = (origin: string, method: string, headers?: string) => ({
  origin,
  'access-control-request-method': method,
  ...(headers !== undefined && { 'access-control-request-headers': headers }),
});

describe('preflight (Azure REST: preflight-table-request)', () => {
  test('a matching rule grants origin, method, headers, max age and credentials', () => {
    const reply = preflight([contoso], request('http://www.contoso.com', 'PUT', 'content-type, x-ms-meta-target-1'));
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.headers, {
      'Access-Control-Allow-Origin': 'http://www.contoso.com',
      'Access-Control-Allow-Methods': 'PUT',
      'Access-Control-Allow-Headers': 'content-type, x-ms-meta-target-1',
      'Access-Control-Max-Age': '500',
      'Access-Control-Allow-Credentials': 'true',
      Vary: 'Origin',
    });
    assert.equal(reply.body, undefined);
  });

  test('origins compare case-insensitively; a * rule answers *', () => {
    assert.equal(preflight([contoso], request('HTTP://WWW.CONTOSO.COM', 'GET')).status, 200);
    const reply = preflight([anyone], request('http://anywhere.example', 'GET', 'x-anything'));
    assert.equal(reply.headers?.['Access-Control-Allow-Origin'], '*');
  });

  test('the first rule that matches everything wins', () => {
    const reply = preflight([contoso, anyone], request('http://elsewhere', 'GET'));
    assert.equal(reply.headers?.['Access-Control-Max-Age'], '5');
  });

  const fails = (status: number, code: string) => (error: unknown) =>
    error instanceof StorageError && error.status === status && error.code === code;

  test('no rules, or no match on origin, method or any requested header → 403 CorsPreflightFailure', () => {
    const cases = [
      () => preflight([], request('http://www.contoso.com', 'GET')),
      () => preflight([contoso], request('http://evil.example', 'GET')),
      () => preflight([contoso], request('http://www.contoso.com', 'DELETE')),
      () => preflight([contoso], request('http://www.contoso.com', 'GET', 'content-type, x-ms-meta-other')),
    ];
    for (const attempt of cases) assert.throws(attempt, fails(403, 'CorsPreflightFailure'));
  });

  test('missing Origin or Access-Control-Request-Method → 400 InvalidHeaderValue', () => {
    assert.throws(
      () => preflight([anyone], { 'access-control-request-method': 'GET' }),
      fails(400, 'InvalidHeaderValue'),
    );
    assert.throws(() => preflight([anyone], { origin: 'http://a' }), fails(400, 'InvalidHeaderValue'));
    assert.throws(
      () => preflight([anyone], { origin: ' ', 'access-control-request-method': 'GET' }),
      fails(400, 'InvalidHeaderValue'),
    );
  });
});

describe('withCorsHeaders (actual requests)', () => {
  const reply = {
    status: 200,
    headers: {
      'Content-Type': 'application/json',
      'x-ms-continuation-NextPartitionKey': '1!4!YQ--',
      'x-ms-meta-a': '1',
    },
    body: '{}',
  };

  test('no Origin or no rules: the reply is unchanged', () => {
    assert.equal(withCorsHeaders([contoso], {}, 'GET', reply), reply);
    assert.equal(withCorsHeaders([], { origin: 'http://www.contoso.com' }, 'GET', reply), reply);
  });

  test('a matching origin and method: allow origin, credentials, Vary, exposed headers', () => {
    const decorated = withCorsHeaders([contoso], { origin: 'http://www.contoso.com' }, 'GET', reply);
    assert.equal(decorated.status, 200);
    assert.equal(decorated.body, '{}');
    const headers = decorated.headers!;
    assert.equal(headers['Access-Control-Allow-Origin'], 'http://www.contoso.com');
    assert.equal(headers['Access-Control-Allow-Credentials'], 'true');
    assert.equal(headers['Vary'], 'Origin');
    const exposed = headers['Access-Control-Expose-Headers']!.split(',');
    const standard = [
      'x-ms-request-id',
      'Server',
      'x-ms-version',
      'X-Content-Type-Options',
      'Cache-Control',
      'Date',
      'Content-Length',
      'Content-Type',
    ];
    assert.deepEqual(
      new Set(exposed),
      new Set([...standard, 'x-ms-continuation-NextPartitionKey', 'x-ms-meta-a', 'x-custom']),
    );
  });

  test('a * rule exposes every response header and answers *', () => {
    const decorated = withCorsHeaders([anyone], { origin: 'http://x' }, 'GET', reply);
    assert.equal(decorated.headers?.['Access-Control-Allow-Origin'], '*');
    assert.equal(decorated.headers?.['Access-Control-Allow-Credentials'], undefined);
    const exposed = decorated.headers!['Access-Control-Expose-Headers']!.split(',');
    for (const name of ['x-ms-request-id', 'Date', 'Content-Type', 'x-ms-continuation-NextPartitionKey'])
      assert.ok(exposed.includes(name), name);
  });

  test('a rule exposing nothing still exposes the x-ms-* headers, ETag and the standard ones; not others', () => {
    const quiet: CorsRule = { ...anyone, exposedHeaders: [] };
    const write = {
      status: 204,
      headers: { ETag: 'W/"x"', Location: 'http://l', 'Preference-Applied': 'return-no-content' },
    };
    const exposed = withCorsHeaders(
      [quiet],
      { origin: 'http://x', 'x-ms-client-request-id': 'c' },
      'GET',
      write,
    ).headers!['Access-Control-Expose-Headers']!.split(',');
    for (const name of ['x-ms-request-id', 'x-ms-client-request-id', 'x-ms-version', 'ETag', 'Date'])
      assert.ok(exposed.includes(name), name);
    for (const name of ['Location', 'Preference-Applied']) assert.ok(!exposed.includes(name), name);
  });

  test('no matching rule: only Vary: Origin', () => {
    const decorated = withCorsHeaders([contoso], { origin: 'http://evil.example' }, 'GET', reply);
    assert.deepEqual(decorated.headers, { ...reply.headers, Vary: 'Origin' });
    const wrongMethod = withCorsHeaders([contoso], { origin: 'http://www.contoso.com' }, 'DELETE', reply);
    assert.equal(wrongMethod.headers?.['Access-Control-Allow-Origin'], undefined);
  });
});
