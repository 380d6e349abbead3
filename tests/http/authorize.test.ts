import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign as signWith } from 'node:crypto';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import { devAccountKey, devAccountName, type Account } from '../../src/http/accounts.js';
import { sharedKeyLiteStringToSign, sign } from '../../src/http/auth.js';
import { authorize, type AuthorizeRequest } from '../../src/http/authorize.js';
import { BearerVerifier, defaultAudiences } from '../../src/http/bearer.js';
import { sasNeeds, serviceSasStringToSign, type SasParams } from '../../src/http/sas.js';

const key = Buffer.from(devAccountKey, 'base64');
const account: Account = { name: devAccountName, keys: [key] };
const now = Date.parse('2026-11-21T04:16:36Z');
const date = new Date(now).toUTCString();
const rawPath = `/${devAccountName}/Orders()`;

function request(overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  return {
    method: 'GET',
    rawPath,
    rawQuery: '',
    query: new URLSearchParams(overrides.rawQuery ?? ''),
    headers: {},
    account,
    pathStyle: true,
    resourceName: 'Orders',
    clientIp: '127.0.0.1',
    https: false,
    now,
    ...overrides,
  };
}

const liteSignature = sign(sharedKeyLiteStringToSign(date, `/${devAccountName}${rawPath}`), key);
const sharedKey = { 'x-ms-date': date, authorization: `SharedKeyLite ${devAccountName}:${liteSignature}` };
const noPolicies = { bearer: undefined, lookupPolicy: async () => undefined };

function sas(params: SasParams): string {
  const full = { sv: '2019-02-02', tn: 'Orders', se: '2031-01-01T00:00:00Z', ...params };
  const signature = sign(serviceSasStringToSign(full, devAccountName), key);
  return new URLSearchParams({ ...full, sig: signature } as Record<string, string>).toString();
}

function refused(action: () => unknown, code: ErrorCode): void {
  assert.throws(action, (error: unknown) => error instanceof StorageError && error.code === code);
}

async function rejects(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof StorageError && error.code === code);
}

describe('authorize: which scheme', () => {
  test('Shared Key acts as the owner: no limits', async () => {
    const access = await authorize(request({ headers: sharedKey }), noPolicies);
    access.require(sasNeeds.deleteTable);
    access.requireKey({ partitionKey: 'z', rowKey: 'z' });
    assert.equal(access.keyRange, undefined);
  });

  test('no credentials at all fail as Shared Key would', () =>
    rejects(authorize(request(), noPolicies), 'AuthenticationFailed'));

  test('an Authorization header wins over a SAS in the query', async () => {
    const headers = { ...sharedKey, authorization: `SharedKeyLite ${devAccountName}:${'A'.repeat(43)}=` };
    await rejects(authorize(request({ headers, rawQuery: sas({ sp: 'r' }) }), noPolicies), 'AuthenticationFailed');
  });

  test('Bearer without a verifier, and a token that does not verify, are InvalidAuthenticationInfo', async () => {
    const headers = { authorization: 'Bearer abc.def.ghi' };
    await rejects(authorize(request({ headers }), noPolicies), 'InvalidAuthenticationInfo');
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const bearer = new BearerVerifier({
      keys: [{ key: pair.publicKey }],
      issuers: undefined,
      audiences: defaultAudiences,
    });
    await rejects(authorize(request({ headers }), { ...noPolicies, bearer }), 'InvalidAuthenticationInfo');
    const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const input = `${segment({ alg: 'ES256' })}.${segment({ aud: defaultAudiences[0], exp: now / 1000 + 60 })}`;
    const signature = signWith('sha256', Buffer.from(input), { key: pair.privateKey, dsaEncoding: 'ieee-p1363' });
    const token = `${input}.${signature.toString('base64url')}`;
    const access = await authorize(request({ headers: { authorization: `Bearer ${token}` } }), {
      ...noPolicies,
      bearer,
    });
    assert.equal(access.keyRange, undefined);
  });
});

describe('authorize: what a service SAS allows', () => {
  test('permissions per operation and only its own table', async () => {
    const access = await authorize(request({ rawQuery: sas({ sp: 'ra' }) }), noPolicies);
    access.require(sasNeeds.queryEntities, 'orders');
    access.require(sasNeeds.insertEntity, 'ORDERS');
    refused(() => access.require(sasNeeds.upsertEntity, 'Orders'), 'AuthorizationPermissionMismatch');
    refused(() => access.require(sasNeeds.queryTables), 'AuthorizationPermissionMismatch');
    refused(() => access.require(sasNeeds.queryEntities, 'Other'), 'AuthorizationFailure');
  });

  test('the key range: exposed for queries, enforced per key', async () => {
    const access = await authorize(request({ rawQuery: sas({ sp: 'r', spk: 'b', srk: '2', epk: 'c' }) }), noPolicies);
    assert.deepEqual(access.keyRange, {
      lower: { partitionKey: 'b', rowKey: '2', inclusive: true },
      upper: { partitionKey: 'c', inclusive: true },
    });
    access.requireKey({ partitionKey: 'b', rowKey: '2' });
    access.requireKey({ partitionKey: 'c', rowKey: 'zzz' });
    refused(() => access.requireKey({ partitionKey: 'b', rowKey: '1' }), 'AuthorizationFailure');
    refused(() => access.requireKey({ partitionKey: 'ca', rowKey: '' }), 'AuthorizationFailure');
  });

  test('a stored policy is looked up for the account and table of the token', async () => {
    const asked: string[] = [];
    const lookupPolicy = async (name: string, table: string, id: string) => {
      asked.push(`${name}/${table}/${id}`);
      return { permission: 'r', expiry: '2031-01-01T00:00:00.0000000Z' };
    };
    const full = { sv: '2019-02-02', tn: 'Orders', si: 'pol' };
    const rawQuery = new URLSearchParams({
      ...full,
      sig: sign(serviceSasStringToSign(full, devAccountName), key),
    }).toString();
    const access = await authorize(request({ rawQuery }), { bearer: undefined, lookupPolicy });
    access.require(sasNeeds.queryEntities, 'Orders');
    assert.deepEqual(asked, [`${devAccountName}/Orders/pol`]);
  });
});
