// Microsoft Entra ID bearer tokens through the real server (Azure REST: authorize-with-azure-active-directory), over
// plain HTTP with raw
// requests (the SDK's own TokenCredential flow needs HTTPS: tests/system/front-door/https.test.ts). Tokens are
// signed here with node:crypto; the server trusts only the keys its --oauth-* files name.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { uniqueTableName } from '../../helpers/sdk.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const issuer = `https://sts.windows.net/${tenant}/`;
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });

const base64url = (value: object | Buffer) =>
  (Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value))).toString('base64url');

function jwt(alg: 'RS256' | 'PS256' | 'ES256', key: KeyObject, claims: object, kid?: string): string {
  const input = `${base64url({ alg, typ: 'JWT', ...(kid && { kid }) })}.${base64url(claims)}`;
  const signature =
    alg === 'ES256'
      ? sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : alg === 'PS256'
        ? sign('sha256', Buffer.from(input), { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })
        : sign('sha256', Buffer.from(input), key);
  return `${input}.${base64url(signature)}`;
}

const seconds = () => Math.floor(Date.now() / 1000);
const claims = (extra: object = {}) => ({
  iss: issuer,
  aud: 'https://storage.azure.com',
  exp: seconds() + 3600,
  nbf: seconds() - 60,
  oid: '00000000-0000-0000-0000-000000000001',
  ...extra,
});

let dir: string;
let server: RunningServer;

before(async () => {
  dir = makeTempDir('cerulean-bearer-');
  const jwks = {
    keys: [
      { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa', use: 'sig' },
      { ...ec.publicKey.export({ format: 'jwk' }), kid: 'ec' },
    ],
  };
  writeFileSync(join(dir, 'keys.jwks'), JSON.stringify(jwks));
  writeFileSync(join(dir, 'keys.pem'), ec.publicKey.export({ type: 'spki', format: 'pem' }));
  server = await startServer({
    inMemory: true,
    args: ['--oauth-jwks', join(dir, 'keys.jwks'), '--oauth-issuer', issuer],
  });
});
after(async () => {
  await server.stop();
  removeDir(dir);
});

const bearer = (
  token: string,
  request: { method: string; path: string; body?: object | string; headers?: Record<string, string> },
  port = server.port,
) => send(port, { ...request, headers: { ...request.headers, Authorization: `Bearer ${token}` } });

function assertRefused(res: RawResponse, detail?: RegExp, tenantId = tenant): void {
  assert.equal(res.status, 401, describeResponse(res));
  assert.equal(res.headers['x-ms-error-code'], 'InvalidAuthenticationInfo');
  assert.equal(
    res.headers['www-authenticate'],
    `Bearer authorization_uri=https://login.microsoftonline.com/${tenantId}/oauth2/authorize resource_id=https://storage.azure.com`,
  );
  // Service operations answer in XML, which carries the detail.
  if (detail !== undefined)
    assert.match(/<AuthenticationErrorDetail>(.*)<\/AuthenticationErrorDetail>/s.exec(res.text)?.[1] ?? '', detail);
}

describe('a verified token acts for the account', () => {
  test('RS256, PS256 and ES256 tokens: tables, entities, batches, ACLs, service properties', async () => {
    const table = uniqueTableName('jwt');
    const rs = jwt('RS256', rsa.privateKey, claims(), 'rsa');
    const ps = jwt('PS256', rsa.privateKey, claims(), 'rsa');
    const es = jwt('ES256', ec.privateKey, claims(), 'ec');
    assert.equal(
      (await bearer(rs, { method: 'POST', path: devPath('Tables'), body: { TableName: table } })).status,
      201,
    );
    assert.equal(
      (await bearer(ps, { method: 'POST', path: devPath(table), body: { PartitionKey: 'p', RowKey: '1' } })).status,
      201,
    );
    const read = await bearer(es, { method: 'GET', path: devPath(`${table}(PartitionKey='p',RowKey='1')`) });
    assert.equal(read.status, 200, describeResponse(read));
    const acl = await bearer(rs, { method: 'GET', path: devPath(`${table}?comp=acl`) });
    assert.equal(acl.status, 200, describeResponse(acl));
    const properties = await bearer(es, { method: 'GET', path: devPath('?restype=service&comp=properties') });
    assert.equal(properties.status, 200, describeResponse(properties));
    assert.equal((await bearer(rs, { method: 'DELETE', path: devPath(`Tables('${table}')`) })).status, 204);
  });

  test('a token creates, reads and deletes a blob container; a forged one is refused there too', async () => {
    const port = Number(new URL(server.blobUrl ?? assert.fail('no blob endpoint')).port);
    const token = jwt('RS256', rsa.privateKey, claims(), 'rsa');
    const headers = { 'x-ms-version': '2021-12-02' };
    const path = devPath(`${uniqueTableName('jwt').toLowerCase()}?restype=container`);
    assert.equal((await bearer(token, { method: 'PUT', path, headers }, port)).status, 201);
    const read = await bearer(token, { method: 'GET', path, headers }, port);
    assert.equal(read.status, 200, describeResponse(read));
    const forged = jwt('RS256', stranger.privateKey, claims(), 'rsa');
    assertRefused(await bearer(forged, { method: 'GET', path, headers }, port));
    assert.equal((await bearer(token, { method: 'DELETE', path, headers }, port)).status, 202);
  });

  test('a token without kid is tried against every key; an array audience with the slash form passes', async () => {
    const token = jwt('RS256', rsa.privateKey, claims({ aud: ['https://example', 'https://storage.azure.com/'] }));
    assert.equal((await bearer(token, { method: 'GET', path: devPath('Tables') })).status, 200);
  });
});

describe('audiences', () => {
  test("the account-scoped URL of the request's service, with or without a slash; not another's", async () => {
    const queuePort = Number(new URL(server.queueUrl ?? assert.fail('no queue endpoint')).port);
    const blobPort = Number(new URL(server.blobUrl ?? assert.fail('no blob endpoint')).port);
    const headers = { 'x-ms-version': '2021-12-02' };
    const services: [string, number, string][] = [
      ['table', server.port, devPath('Tables')],
      ['queue', queuePort, devPath('?comp=list')],
      ['blob', blobPort, devPath('?comp=list')],
    ];
    for (const [service, port, path] of services) {
      const own = `https://devstoreaccount1.${service}.core.windows.net`;
      for (const aud of [own, `${own}/`, 'https://storage.azure.com', 'https://storage.azure.com/']) {
        const res = await bearer(
          jwt('RS256', rsa.privateKey, claims({ aud }), 'rsa'),
          { method: 'GET', path, headers },
          port,
        );
        assert.equal(res.status, 200, `${aud} on ${service}: ${describeResponse(res)}`);
      }
      const other = service === 'queue' ? 'blob' : 'queue';
      for (const aud of [
        `https://devstoreaccount1.${other}.core.windows.net`,
        `https://other.${service}.core.windows.net`,
      ]) {
        const res = await bearer(
          jwt('RS256', rsa.privateKey, claims({ aud }), 'rsa'),
          { method: 'GET', path, headers },
          port,
        );
        assertRefused(res, service === 'table' ? undefined : /Audience/);
      }
    }
  });
});

describe('a token that does not verify is 401 InvalidAuthenticationInfo with a challenge', () => {
  test('forged signatures and algorithms', async () => {
    const good = jwt('RS256', rsa.privateKey, claims(), 'rsa');
    const [header, , signature] = good.split('.');
    const cases: [string, string][] = [
      ['a key the server does not know', jwt('RS256', stranger.privateKey, claims(), 'rsa')],
      ['a payload swapped under a valid signature', `${header}.${base64url(claims({ oid: 'admin' }))}.${signature}`],
      ['alg none', `${base64url({ alg: 'none' })}.${base64url(claims())}.`],
      ['HS256', `${base64url({ alg: 'HS256' })}.${base64url(claims())}.${base64url(Buffer.alloc(32))}`],
      ['not a JWT', 'hello'],
    ];
    for (const [name, token] of cases) {
      const res = await bearer(token, { method: 'GET', path: devPath('?restype=service&comp=properties') });
      assertRefused(res, /validation failed|not supported|not a JSON Web Token/);
      assert.match(res.headers['content-type'] ?? '', /xml/, name);
    }
  });

  test('claims: expired, not yet valid, another issuer, another audience, no exp', async () => {
    const cases: [object, RegExp][] = [
      [claims({ exp: seconds() - 3600 }), /expired/],
      [claims({ nbf: seconds() + 3600 }), /not yet valid/],
      [claims({ iss: 'https://sts.windows.net/00000000-0000-0000-0000-000000000000/' }), /Issuer/],
      [claims({ aud: 'https://cosmos.azure.com' }), /Audience/],
      [claims({ exp: undefined }), /exp/],
    ];
    for (const [payload, detail] of cases) {
      const res = await bearer(jwt('ES256', ec.privateKey, payload, 'ec'), {
        method: 'GET',
        path: devPath('?restype=service&comp=properties'),
      });
      assertRefused(res, detail);
    }
  });

  test('JSON operations answer with a JSON body', async () => {
    const res = await bearer(jwt('RS256', stranger.privateKey, claims()), { method: 'GET', path: devPath('Tables') });
    assertRefused(res);
    assert.equal(res.json()['odata.error'].code, 'InvalidAuthenticationInfo');
  });

  test('the Authorization header wins over SAS parameters in the URL', async () => {
    const res = await bearer('not-a-token', {
      method: 'GET',
      path: `${devPath('Tables')}?sv=2019-02-02&ss=t&srt=s&sp=l&se=2099-01-01&sig=x`,
    });
    assertRefused(res);
  });
});

describe('configuration', () => {
  test('without --oauth-* flags bearer tokens are refused, challenge for the common tenant', async () => {
    const plain = await startServer({ inMemory: true });
    try {
      const res = await bearer(
        jwt('RS256', rsa.privateKey, claims(), 'rsa'),
        { method: 'GET', path: devPath('Tables') },
        plain.port,
      );
      assertRefused(res, undefined, 'common');
    } finally {
      await plain.stop();
    }
  });

  test('PEM keys and audiences from the environment', async () => {
    const pem = await startServer({
      inMemory: true,
      env: { CERULEAN_OAUTH_PEM: join(dir, 'keys.pem'), CERULEAN_OAUTH_AUDIENCE: 'api://cerulean' },
    });
    try {
      const token = (aud: string, iss = 'https://any.example/') => jwt('ES256', ec.privateKey, claims({ aud, iss }));
      assert.equal(
        (await bearer(token('api://cerulean'), { method: 'GET', path: devPath('Tables') }, pem.port)).status,
        200,
      );
      assertRefused(
        await bearer(token('https://storage.azure.com'), { method: 'GET', path: devPath('Tables') }, pem.port),
        undefined,
        'common',
      );
      // Audiences the operator names are the only ones: the account-scoped URL is not added.
      assertRefused(
        await bearer(
          token('https://devstoreaccount1.table.core.windows.net'),
          { method: 'GET', path: devPath('Tables') },
          pem.port,
        ),
        undefined,
        'common',
      );
      const rsaToken = jwt('RS256', rsa.privateKey, claims({ aud: 'api://cerulean' }));
      assertRefused(await bearer(rsaToken, { method: 'GET', path: devPath('Tables') }, pem.port), undefined, 'common');
    } finally {
      await pem.stop();
    }
  });

  test('an issuer naming its tenant by domain name: the challenge names that tenant', async () => {
    const named = await startServer({
      inMemory: true,
      args: [
        '--oauth-jwks',
        join(dir, 'keys.jwks'),
        '--oauth-issuer',
        'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0',
      ],
    });
    try {
      const res = await bearer(
        jwt('RS256', stranger.privateKey, claims(), 'rsa'),
        { method: 'GET', path: devPath('Tables') },
        named.port,
      );
      assertRefused(res, undefined, 'contoso.onmicrosoft.com');
    } finally {
      await named.stop();
    }
  });

  test('bad flags or key files stop the server at startup', async () => {
    writeFileSync(join(dir, 'broken.jwks'), '{"keys": 1}');
    const cases: [string[], RegExp][] = [
      [['--oauth-issuer', issuer], /--oauth-issuer and --oauth-audience need --oauth-jwks or --oauth-pem/],
      [['--oauth-jwks', join(dir, 'missing.jwks')], /cannot read/],
      [['--oauth-jwks', join(dir, 'broken.jwks')], /no "keys" array/],
      [['--oauth-pem', join(dir, 'broken.jwks')], /no PEM block/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(startServer({ inMemory: true, args }), message);
    }
  });
});
