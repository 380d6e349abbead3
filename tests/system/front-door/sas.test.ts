// Shared access signatures through the real server (Azure REST: create-service-sas, create-account-sas): SDK-generated
// tokens, every
// signed version, a permission × operation matrix for service and account SAS, key ranges at
// their exact edges, time windows, IP and protocol limits, tampering, and stored access policies.
// Tokens are signed here independently of src/http/sas.ts (checked against the spec's vectors).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  generateAccountSas,
  generateTableSas,
  type TableEntityResult,
  type TransactionAction,
} from '@azure/data-tables';
import { changesetBody, op, partError, readBatchResponse } from '../../helpers/batch.js';
import {
  describeResponse,
  devPath,
  errorCode,
  hmacBase64,
  send,
  type RawRequest,
  type RawResponse,
} from '../../helpers/http.js';
import { clientOptions, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';

const minute = 60_000;
const otherKey = Buffer.from('another key, not the account key').toString('base64');

/** ISO 8601 to the second, as the SDKs write SAS times. */
function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
const inAnHour = () => iso(Date.now() + 60 * minute);

type Fields = Record<string, string | undefined>;

function queryOf(params: Fields): string {
  return Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
}

/** Azure REST: create-service-sas: the string-to-sign of a service SAS. */
function serviceStringToSign(f: Fields): string {
  const sv = f['sv']!;
  const table = f['tn']!.toLowerCase();
  const resource = sv >= '2015-02-21' ? `/table/${devAccount}/${table}` : `/${devAccount}/${table}`;
  const ipAndProtocol = sv >= '2015-04-05' ? [f['sip'], f['spr']] : [];
  const fields = [
    f['sp'],
    f['st'],
    f['se'],
    resource,
    f['si'],
    ...ipAndProtocol,
    sv,
    f['spk'],
    f['srk'],
    f['epk'],
    f['erk'],
  ];
  return fields.map((field) => field ?? '').join('\n');
}

/** A service SAS query string; `se` defaults to an hour from now unless a policy is named. */
function serviceSas(fields: Fields, key = devKey): string {
  const f = { sv: '2019-02-02', ...(fields['si'] === undefined && { se: inAnHour() }), ...fields };
  return queryOf({ ...f, sig: hmacBase64(key, serviceStringToSign(f)) });
}

/** Azure REST: create-account-sas, trailing newline included. */
function accountStringToSign(f: Fields): string {
  const fields = [devAccount, f['sp'], f['ss'], f['srt'], f['st'], f['se'], f['sip'], f['spr'], f['sv']];
  if (f['sv']! >= '2020-12-06') fields.push(f['ses']);
  return `${fields.map((field) => field ?? '').join('\n')}\n`;
}

function accountSas(fields: Fields, key = devKey): string {
  const f = { sv: '2019-02-02', ss: 't', se: inAnHour(), ...fields };
  return queryOf({ ...f, sig: hmacBase64(key, accountStringToSign(f)) });
}

let server: RunningServer;

/** A request carrying `token` instead of a Shared Key signature. */
function sasRequest(token: string, request: Omit<RawRequest, 'auth'>): Promise<RawResponse> {
  const path = `${request.path}${request.path.includes('?') ? '&' : '?'}${token}`;
  return send(server.port, { ...request, path, auth: 'none' });
}

function entityResource(table: string, pk: string, rk: string): string {
  const literal = (key: string) => encodeURIComponent(key.replaceAll("'", "''"));
  return `${table}(PartitionKey='${literal(pk)}',RowKey='${literal(rk)}')`;
}

function assertRefused(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, describeResponse(res));
  assert.equal(res.headers['x-ms-error-code'], code, describeResponse(res));
  const bodyCode = res.headers['content-type']?.includes('xml')
    ? /<Code>([^<]*)<\/Code>/.exec(res.text)?.[1]
    : errorCode(res);
  assert.equal(bodyCode, code, describeResponse(res));
}

async function ownerTable(prefix: string): Promise<TableClient> {
  const client = tableClient(server, uniqueTableName(prefix));
  await client.createTable();
  return client;
}

before(async () => {
  server = await startServer({ inMemory: true });
});
after(async () => {
  await server.stop();
});

describe('the test signer matches the spec vectors (Azure REST: create-service-sas, create-account-sas)', () => {
  test('service SAS, Python and JS', () => {
    const python = { sv: '2019-02-02', tn: 'PyTable', sp: 'ra', se: '2031-01-01T00:00:00Z', spk: 'a', epk: 'z' };
    assert.equal(hmacBase64(devKey, serviceStringToSign(python)), 'Qq1nytgryYvOkjYTuOpMb4VoHZfqRZoiHnbWdA2fq5o=');
    const js = { sv: '2019-02-02', tn: 'JsTable', sp: 'ra', se: '2031-01-01T00:00:00Z' };
    assert.equal(hmacBase64(devKey, serviceStringToSign(js)), 'PzXcCsCxb/DkoaT2AGNYjOQeLOj7pYkN24LyHqewalg=');
  });

  test('account SAS, JS and Python', () => {
    const base = { sv: '2019-02-02', ss: 't', sp: 'rwl', se: '2031-01-01T00:00:00Z' };
    assert.equal(
      hmacBase64(devKey, accountStringToSign({ ...base, srt: 'sco' })),
      'C/n8MoEWBZecAWTVgOtCXoZr4lkzUJE6fkIEIhKB6rs=',
    );
    assert.equal(
      hmacBase64(devKey, accountStringToSign({ ...base, srt: 'so' })),
      'JZWQO/BDgQVyV361qBfn/yuHo2Es6EfG4Gm+WPb5tBo=',
    );
  });
});

describe('SDK flows', () => {
  const credential = new AzureNamedKeyCredential(devAccount, devKey);

  test('generateTableSas + AzureSASCredential: insert, read, query, update, delete, transaction', async () => {
    const table = await ownerTable('sdk');
    const sas = generateTableSas(table.tableName, credential, {
      permissions: { query: true, add: true, update: true, delete: true },
      expiresOn: new Date(Date.now() + 60 * minute),
    });
    const client = new TableClient(server.url, table.tableName, new AzureSASCredential(sas), clientOptions);
    await client.createEntity({ partitionKey: 'p', rowKey: '1', v: 1 });
    assert.equal((await client.getEntity<{ v: number }>('p', '1')).v, 1);
    await client.updateEntity({ partitionKey: 'p', rowKey: '1', v: 2 }, 'Merge');
    await client.upsertEntity({ partitionKey: 'p', rowKey: '2', v: 3 }, 'Replace');
    await client.submitTransaction([
      ['create', { partitionKey: 'p', rowKey: '3' }],
      ['upsert', { partitionKey: 'p', rowKey: '4' }, 'Merge'],
      ['delete', { partitionKey: 'p', rowKey: '2' }],
    ]);
    const keys: string[] = [];
    for await (const entity of client.listEntities()) keys.push(entity.rowKey!);
    assert.deepEqual(keys, ['1', '3', '4']);
    await client.deleteEntity('p', '1');
    await assert.rejects(client.getEntity('p', '1'), (error: { statusCode?: number }) => error.statusCode === 404);
  });

  test('a SAS URL without a credential works too', async () => {
    const table = await ownerTable('sdkurl');
    await table.createEntity({ partitionKey: 'p', rowKey: '1' });
    const sas = generateTableSas(table.tableName, credential, { permissions: { query: true } });
    const client = new TableClient(`${server.url}?${sas}`, table.tableName, clientOptions);
    assert.equal((await client.getEntity('p', '1')).rowKey, '1');
    await assert.rejects(
      client.createEntity({ partitionKey: 'p', rowKey: '2' }),
      (error: { statusCode?: number }) => error.statusCode === 403,
    );
  });

  test('read-only table SAS: reads work, every write is 403', async () => {
    const table = await ownerTable('sdkro');
    await table.createEntity({ partitionKey: 'p', rowKey: '1' });
    const sas = generateTableSas(table.tableName, credential, { permissions: { query: true } });
    const client = new TableClient(server.url, table.tableName, new AzureSASCredential(sas), clientOptions);
    assert.equal((await client.getEntity('p', '1')).rowKey, '1');
    const forbidden = (error: { statusCode?: number }) => error.statusCode === 403;
    await assert.rejects(client.createEntity({ partitionKey: 'p', rowKey: '2' }), forbidden);
    await assert.rejects(client.upsertEntity({ partitionKey: 'p', rowKey: '1' }), forbidden);
    await assert.rejects(client.deleteEntity('p', '1'), forbidden);
    await assert.rejects(client.submitTransaction([['create', { partitionKey: 'p', rowKey: '3' }]]), forbidden);
    await assert.rejects(client.deleteTable(), forbidden);
  });

  test('generateAccountSas: tables and entities of the account', async () => {
    const sas = generateAccountSas(credential, {
      // The JS SDK has no 'c': creating a table with 'w' is what it relies on (Azure REST: create-account-sas).
      permissions: { query: true, write: true, delete: true, list: true, add: true, update: true },
      resourceTypes: 'sco',
      expiresOn: new Date(Date.now() + 60 * minute),
    });
    const name = uniqueTableName('acct');
    const service = new TableServiceClient(server.url, new AzureSASCredential(sas), clientOptions);
    await service.createTable(name);
    const names: string[] = [];
    for await (const table of service.listTables()) names.push(table.name!);
    assert.ok(names.includes(name));
    const client = new TableClient(server.url, name, new AzureSASCredential(sas), clientOptions);
    await client.createEntity({ partitionKey: 'p', rowKey: '1' });
    assert.equal((await client.getEntity('p', '1')).rowKey, '1');
    await client.submitTransaction([['upsert', { partitionKey: 'p', rowKey: '2' }]]);
    await service.getProperties();
    await service.deleteTable(name);
  });

  test('the default account SAS (rl, sco) lists tables but cannot create one', async () => {
    const sas = generateAccountSas(credential);
    const service = new TableServiceClient(server.url, new AzureSASCredential(sas), clientOptions);
    for await (const table of service.listTables()) assert.ok(table.name);
    await assert.rejects(
      service.createTable(uniqueTableName('no')),
      (error: { statusCode?: number }) => error.statusCode === 403,
    );
  });

  test('AzureSASCredential.update swaps the token in place', async () => {
    const table = await ownerTable('rot');
    const readOnly = generateTableSas(table.tableName, credential, { permissions: { query: true } });
    const sasCredential = new AzureSASCredential(readOnly);
    const client = new TableClient(server.url, table.tableName, sasCredential, clientOptions);
    await assert.rejects(client.createEntity({ partitionKey: 'p', rowKey: '1' }));
    sasCredential.update(generateTableSas(table.tableName, credential, { permissions: { add: true } }));
    await client.createEntity({ partitionKey: 'p', rowKey: '1' });
  });
});

describe('every signed version (Azure REST: create-service-sas, create-account-sas)', () => {
  let table: string;
  before(async () => {
    const client = await ownerTable('ver');
    table = client.tableName;
    await client.createEntity({ partitionKey: 'p', rowKey: 'r' });
  });

  for (const sv of [
    '2013-08-15',
    '2015-02-21',
    '2015-04-05',
    '2017-07-29',
    '2018-03-28',
    '2019-02-02',
    '2020-12-06',
    '2021-12-02',
  ]) {
    test(`service SAS sv=${sv}: accepted as signed, refused when tampered`, async () => {
      const token = serviceSas({ sv, tn: table, sp: 'r' });
      const res = await sasRequest(token, { method: 'GET', path: devPath(entityResource(table, 'p', 'r')) });
      assert.equal(res.status, 200, describeResponse(res));
      const tampered = token.replace('sp=r', 'sp=raud');
      assertRefused(
        await sasRequest(tampered, { method: 'GET', path: devPath(`${table}()`) }),
        403,
        'AuthenticationFailed',
      );
    });
  }

  for (const sv of ['2015-04-05', '2019-02-02', '2020-12-06']) {
    test(`account SAS sv=${sv}`, async () => {
      const token = accountSas({ sv, srt: 'o', sp: 'r' });
      const res = await sasRequest(token, { method: 'GET', path: devPath(`${table}()`) });
      assert.equal(res.status, 200, describeResponse(res));
    });
  }
});

// -- permission × operation matrices -----------------------------------------------------------

interface Operation {
  readonly name: string;
  /** Service SAS letters needed (Azure REST: create-service-sas); undefined = a service SAS may never do it. */
  readonly service: string | undefined;
  /** Account SAS: the resource type and any one of these permission strings (Azure REST: create-account-sas). */
  readonly srt: string;
  readonly account: readonly string[];
  readonly success: number;
  /** Builds the request against `table`, after making whatever it needs exist. */
  readonly prepare: (table: string, id: string) => Promise<Omit<RawRequest, 'auth'>>;
}

/** Creates or replaces an entity with Shared Key. */
async function ownerUpsert(table: string, pk: string, rk: string, properties: object = {}): Promise<void> {
  const res = await send(server.port, {
    method: 'PUT',
    path: devPath(entityResource(table, pk, rk)),
    body: properties,
  });
  assert.equal(res.status, 204, describeResponse(res));
}

async function ownerCreateTable(name: string): Promise<void> {
  const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: name } });
  assert.equal(res.status, 201, describeResponse(res));
}

const existing =
  (method: string, extra: Partial<RawRequest> = {}) =>
  async (table: string, id: string): Promise<Omit<RawRequest, 'auth'>> => {
    await ownerUpsert(table, 'm', id);
    return { method, path: devPath(entityResource(table, 'm', id)), ...extra };
  };

const serviceProperties =
  '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version><Delete>false</Delete>' +
  '<Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging></StorageServiceProperties>';

const operations: Operation[] = [
  {
    name: 'query entities',
    service: 'r',
    srt: 'o',
    account: ['r'],
    success: 200,
    prepare: async (t) => ({ method: 'GET', path: devPath(`${t}()`) }),
  },
  { name: 'get entity', service: 'r', srt: 'o', account: ['r'], success: 200, prepare: existing('GET') },
  {
    name: 'insert entity',
    service: 'a',
    srt: 'o',
    account: ['a'],
    success: 201,
    prepare: async (t, id) => ({ method: 'POST', path: devPath(t), body: { PartitionKey: 'm', RowKey: `new-${id}` } }),
  },
  {
    name: 'update entity',
    service: 'u',
    srt: 'o',
    account: ['u'],
    success: 204,
    prepare: existing('PUT', { body: { v: 1 }, headers: { 'If-Match': '*' } }),
  },
  {
    name: 'merge entity',
    service: 'u',
    srt: 'o',
    account: ['u'],
    success: 204,
    prepare: existing('MERGE', { body: { v: 1 }, headers: { 'If-Match': '*' } }),
  },
  {
    name: 'insert or replace',
    service: 'au',
    srt: 'o',
    account: ['au'],
    success: 204,
    prepare: existing('PUT', { body: { v: 1 } }),
  },
  {
    name: 'insert or merge',
    service: 'au',
    srt: 'o',
    account: ['au'],
    success: 204,
    prepare: existing('MERGE', { body: { v: 1 } }),
  },
  {
    name: 'delete entity',
    service: 'd',
    srt: 'o',
    account: ['d'],
    success: 204,
    prepare: existing('DELETE', { headers: { 'If-Match': '*' } }),
  },
  {
    name: 'batch insert',
    service: 'a',
    srt: 'o',
    account: ['a'],
    success: 202,
    prepare: async (t, id) => {
      const batch = changesetBody([op.insert(`${server.url}/${t}`, { PartitionKey: 'm', RowKey: `batch-${id}` })]);
      return {
        method: 'POST',
        path: devPath('$batch'),
        body: batch.body,
        headers: { 'Content-Type': batch.contentType, Accept: 'application/json', DataServiceVersion: '3.0;' },
      };
    },
  },
  {
    name: 'query tables',
    service: undefined,
    srt: 's',
    account: ['l'],
    success: 200,
    prepare: async () => ({ method: 'GET', path: devPath('Tables') }),
  },
  {
    name: 'create table',
    service: undefined,
    srt: 'c',
    account: ['c', 'w'],
    success: 201,
    prepare: async (_t, id) => ({
      method: 'POST',
      path: devPath('Tables'),
      body: { TableName: `made${id.replace(/[^a-z0-9]/gi, '')}` },
    }),
  },
  {
    name: 'delete table',
    service: undefined,
    srt: 'c',
    account: ['d'],
    success: 204,
    prepare: async (_t, id) => {
      const name = `gone${id.replace(/[^a-z0-9]/gi, '')}`;
      await ownerCreateTable(name);
      return { method: 'DELETE', path: devPath(`Tables('${name}')`) };
    },
  },
  {
    name: 'get table ACL',
    service: undefined,
    srt: 'c',
    account: ['r'],
    success: 200,
    prepare: async (t) => ({ method: 'GET', path: devPath(`${t}?comp=acl`) }),
  },
  {
    name: 'set table ACL',
    service: undefined,
    srt: 'c',
    account: ['w'],
    success: 204,
    prepare: async (t) => ({
      method: 'PUT',
      path: devPath(`${t}?comp=acl`),
      body: '<SignedIdentifiers />',
      headers: { 'Content-Type': 'application/xml' },
    }),
  },
  {
    name: 'get service properties',
    service: undefined,
    srt: 's',
    account: ['r'],
    success: 200,
    prepare: async () => ({ method: 'GET', path: devPath('?restype=service&comp=properties') }),
  },
  {
    name: 'set service properties',
    service: undefined,
    srt: 's',
    account: ['w'],
    success: 202,
    prepare: async () => ({
      method: 'PUT',
      path: devPath('?restype=service&comp=properties'),
      body: serviceProperties,
      headers: { 'Content-Type': 'application/xml' },
    }),
  },
  {
    name: 'get service stats',
    service: undefined,
    srt: 's',
    account: ['r'],
    success: 200,
    prepare: async () => ({ method: 'GET', path: devPath('?restype=service&comp=stats') }),
  },
];

/** A batch's status: its only operation's when that failed, else the batch's own. */
function effectiveStatus(res: RawResponse): { status: number; code: string | undefined } {
  const multipart = res.headers['content-type']?.startsWith('multipart/') ?? false;
  const part = multipart ? readBatchResponse(res).parts[0]! : undefined;
  if (part === undefined || part.status < 400)
    return { status: res.status, code: res.headers['x-ms-error-code'] as string | undefined };
  return { status: part.status, code: partError(part).code };
}

const hasAll = (granted: string, needed: string) => [...needed].every((letter) => granted.includes(letter));

describe('permission × operation matrix: service SAS (Azure REST: create-service-sas)', () => {
  const permissionSets = ['r', 'a', 'u', 'd', 'ra', 'au', 'ud', 'raud'];
  let table: string;
  before(async () => {
    table = (await ownerTable('svcmx')).tableName;
  });

  for (const operation of operations) {
    test(operation.name, async () => {
      const failures: string[] = [];
      for (const sp of permissionSets) {
        const id = `s${sp}${operation.name.replace(/ /g, '')}`;
        const request = await operation.prepare(table, id);
        const res = await sasRequest(serviceSas({ tn: table, sp }), request);
        const { status, code } = effectiveStatus(res);
        const allowed = operation.service !== undefined && hasAll(sp, operation.service);
        const expected = allowed ? `${operation.success}` : '403 AuthorizationPermissionMismatch';
        const actual = status >= 400 ? `${status} ${code}` : `${status}`;
        if (actual !== expected)
          failures.push(`sp=${sp}: expected ${expected}, got ${actual}: ${describeResponse(res)}`);
      }
      assert.deepEqual(failures, []);
    });
  }
});

describe('permission × operation matrix: account SAS (Azure REST: create-account-sas)', () => {
  const resourceTypes = ['s', 'c', 'o', 'sco'];
  const permissionSets = ['r', 'w', 'd', 'l', 'a', 'c', 'u', 'au', 'rwdlacup'];
  let table: string;
  before(async () => {
    table = (await ownerTable('acctmx')).tableName;
  });

  for (const operation of operations) {
    test(operation.name, async () => {
      const failures: string[] = [];
      for (const srt of resourceTypes) {
        for (const sp of permissionSets) {
          const id = `a${srt}${sp}${operation.name.replace(/ /g, '')}`;
          const request = await operation.prepare(table, id);
          const res = await sasRequest(accountSas({ srt, sp }), request);
          const { status, code } = effectiveStatus(res);
          const typeOk = srt.includes(operation.srt);
          const permissionOk = operation.account.some((letters) => hasAll(sp, letters));
          const expected = !typeOk
            ? '403 AuthorizationResourceTypeMismatch'
            : permissionOk
              ? `${operation.success}`
              : '403 AuthorizationPermissionMismatch';
          const actual = status >= 400 ? `${status} ${code}` : `${status}`;
          if (actual !== expected) failures.push(`srt=${srt} sp=${sp}: expected ${expected}, got ${actual}`);
        }
      }
      assert.deepEqual(failures, []);
    });
  }

  test('an account SAS without the table service is AuthorizationServiceMismatch', async () => {
    assertRefused(
      await sasRequest(accountSas({ ss: 'bq', srt: 'sco', sp: 'rl' }), { method: 'GET', path: devPath('Tables') }),
      403,
      'AuthorizationServiceMismatch',
    );
  });
});

// -- key ranges ----------------------------------------------------------------------------------

interface Range {
  readonly spk?: string;
  readonly srk?: string;
  readonly epk?: string;
  readonly erk?: string;
}

/** Azure REST: create-service-sas's table, written out independently of the server. */
function inRange(range: Range, pk: string, rk: string): boolean {
  if (range.spk !== undefined) {
    if (pk < range.spk) return false;
    if (range.srk !== undefined && pk === range.spk && rk < range.srk) return false;
  }
  if (range.epk !== undefined) {
    if (pk > range.epk) return false;
    if (range.erk !== undefined && pk === range.epk && rk > range.erk) return false;
  }
  return true;
}

const partitions = ['', 'a', 'b', 'c', 'd'];
const rows = ['', '1', '2', '3'];
const grid = partitions.flatMap((pk) => rows.map((rk) => [pk, rk] as const));

const ranges: [string, Range][] = [
  ['PK only, two partitions', { spk: 'b', epk: 'c' }],
  ['PK only, one partition', { spk: 'b', epk: 'b' }],
  ['PK+RK on both ends', { spk: 'b', srk: '2', epk: 'c', erk: '2' }],
  ['PK+RK, one entity', { spk: 'b', srk: '2', epk: 'b', erk: '2' }],
  ['lower bound only, with RK', { spk: 'c', srk: '1' }],
  ['upper bound only, with RK', { epk: 'b', erk: '1' }],
  ['empty-string bounds', { spk: '', srk: '1', epk: 'a', erk: '' }],
];

describe('key ranges are enforced on every operation (Azure REST: create-service-sas)', () => {
  let table: TableClient;
  before(async () => {
    table = await ownerTable('range');
    for (const [pk, rk] of grid) await ownerUpsert(table.tableName, pk, rk, { v: `${pk}/${rk}` });
  });

  for (const [name, range] of ranges) {
    describe(name, () => {
      const expected = grid.filter(([pk, rk]) => inRange(range, pk, rk)).map(([pk, rk]) => `${pk}/${rk}`);
      const token = () => serviceSas({ tn: table.tableName, sp: 'raud', ...range });
      // The SDK drops empty bounds from the URL (while signing them), so those get our own token.
      const sdkToken = () =>
        generateTableSas(table.tableName, new AzureNamedKeyCredential(devAccount, devKey), {
          permissions: { query: true, add: true, update: true, delete: true },
          startPartitionKey: range.spk,
          startRowKey: range.srk,
          endPartitionKey: range.epk,
          endRowKey: range.erk,
        });
      const hasEmptyBound = Object.values(range).includes('');
      const client = () =>
        new TableClient(
          server.url,
          table.tableName,
          new AzureSASCredential(hasEmptyBound ? token() : sdkToken()),
          clientOptions,
        );
      const keysOf = (entities: readonly TableEntityResult<object>[]) =>
        entities.map((e) => `${e.partitionKey}/${e.rowKey}`);

      test('a query returns exactly the range, whatever the filter', async () => {
        const all: TableEntityResult<object>[] = [];
        for await (const entity of client().listEntities()) all.push(entity);
        assert.deepEqual(keysOf(all), expected);
        const wide: TableEntityResult<object>[] = [];
        for await (const entity of client().listEntities({
          queryOptions: { filter: "PartitionKey ge '' or RowKey eq '2'" },
        }))
          wide.push(entity);
        assert.deepEqual(keysOf(wide), expected);
        const second: TableEntityResult<object>[] = [];
        for await (const entity of client().listEntities({ queryOptions: { filter: "RowKey eq '2'" } }))
          second.push(entity);
        assert.deepEqual(
          keysOf(second),
          expected.filter((key) => key.endsWith('/2')),
        );
      });

      test('paging one entity at a time never leaves the range', async () => {
        const seen: string[] = [];
        for await (const page of client().listEntities().byPage({ maxPageSize: 1 })) seen.push(...keysOf(page));
        assert.deepEqual(seen, expected);
      });

      test('point reads: inside 200 or 404; outside 403 whether or not the entity exists', async () => {
        const outsideBodies = new Set<string>();
        for (const [pk, rk] of [...grid, ['b', '15'], ['c', '25'], ['b', '0'], ['z', 'z']] as const) {
          const res = await sasRequest(token(), {
            method: 'GET',
            path: devPath(entityResource(table.tableName, pk, rk)),
          });
          const exists = grid.some(([p, r]) => p === pk && r === rk);
          if (inRange(range, pk, rk)) {
            assert.equal(res.status, exists ? 200 : 404, `${pk}/${rk}: ${describeResponse(res)}`);
          } else {
            assertRefused(res, 403, 'AuthorizationFailure');
            outsideBodies.add(res.text.replace(/RequestId:[^\n"]*|Time:[^\n"]*/g, ''));
          }
        }
        assert.ok(outsideBodies.size <= 1, `refusals differ: ${[...outsideBodies].join(' | ')}`);
      });

      test('writes: inside applied, outside refused and not applied', async () => {
        const tag = name.replace(/[^a-z]/gi, '');
        for (const [pk, rk] of grid) {
          const res = await sasRequest(token(), {
            method: 'MERGE',
            path: devPath(entityResource(table.tableName, pk, rk)),
            body: { tag },
          });
          if (inRange(range, pk, rk)) assert.equal(res.status, 204, `${pk}/${rk}: ${describeResponse(res)}`);
          else assertRefused(res, 403, 'AuthorizationFailure');
        }
        for (const entity of await listAll(table)) {
          const tagged = (entity as { tag?: string }).tag === tag;
          assert.equal(
            tagged,
            inRange(range, entity.partitionKey!, entity.rowKey!),
            `${entity.partitionKey}/${entity.rowKey}`,
          );
        }
      });

      test('insert and delete at the edges', async () => {
        for (const [pk, rk] of [
          ['b', '15'],
          ['b', '25'],
          ['c', '15'],
          ['c', '25'],
          ['a', 'z'],
          ['', '0'],
        ] as const) {
          const insert = await sasRequest(token(), {
            method: 'POST',
            path: devPath(table.tableName),
            body: { PartitionKey: pk, RowKey: rk },
          });
          const remove = await sasRequest(token(), {
            method: 'DELETE',
            path: devPath(entityResource(table.tableName, pk, rk)),
            headers: { 'If-Match': '*' },
          });
          if (inRange(range, pk, rk)) {
            assert.equal(insert.status, 201, `${pk}/${rk}: ${describeResponse(insert)}`);
            assert.equal(remove.status, 204, `${pk}/${rk}: ${describeResponse(remove)}`);
          } else {
            assertRefused(insert, 403, 'AuthorizationFailure');
            assertRefused(remove, 403, 'AuthorizationFailure');
          }
        }
        assert.equal((await listAll(table)).length, grid.length);
      });

      test('batches: all inside applies; one key outside refuses the whole change set', async () => {
        for (const pk of partitions) {
          const keys = rows.map((rk) => [pk, rk] as const);
          const inside = keys.filter(([p, r]) => inRange(range, p, r));
          const outside = keys.filter(([p, r]) => !inRange(range, p, r));
          if (inside.length > 0) {
            await client().submitTransaction(
              inside.map(([p, r]) => ['upsert', { partitionKey: p, rowKey: r, batch: 1 }, 'Merge']),
            );
          }
          if (outside.length > 0) {
            const mixed = [...inside, outside[0]!].map(([p, r]): TransactionAction => [
              'upsert',
              { partitionKey: p, rowKey: r, batch: 2 },
              'Merge',
            ]);
            await assert.rejects(
              client().submitTransaction(mixed),
              (error: { statusCode?: number }) => error.statusCode === 403,
            );
          }
        }
        for (const entity of await listAll(table)) {
          const batch = (entity as { batch?: number }).batch;
          assert.equal(
            batch,
            inRange(range, entity.partitionKey!, entity.rowKey!) ? 1 : undefined,
            `${entity.partitionKey}/${entity.rowKey}`,
          );
        }
        // Leave the grid as it was for the next range.
        for (const [pk, rk] of grid) await ownerUpsert(table.tableName, pk, rk, { v: `${pk}/${rk}` });
      });
    });
  }

  test("a row key bound without its partition key bound means the empty partition key (the JS SDK omits spk='')", async () => {
    const token = serviceSas({ tn: table.tableName, sp: 'r', srk: '1' });
    const res = await sasRequest(token, { method: 'GET', path: devPath(`${table.tableName}()`) });
    assert.equal(res.status, 200, describeResponse(res));
    for (const entity of (res.json() as { value: { PartitionKey: string; RowKey: string }[] }).value) {
      assert.ok(
        entity.PartitionKey > '' || entity.RowKey >= '1',
        `${entity.PartitionKey}/${entity.RowKey} is outside the range`,
      );
    }
  });
});

async function listAll(table: TableClient): Promise<TableEntityResult<object>[]> {
  const all: TableEntityResult<object>[] = [];
  for await (const entity of table.listEntities()) all.push(entity);
  return all;
}

// -- validity ----------------------------------------------------------------------------------------

describe('time window (Azure REST: create-service-sas step 3)', () => {
  let table: string;
  before(async () => {
    table = (await ownerTable('time')).tableName;
  });
  const query = (token: string) => sasRequest(token, { method: 'GET', path: devPath(`${table}()`) });

  // The service answers 403 AuthenticationFailed for a SAS outside its time window and allows no
  // clock skew; the detail texts are checked in blob-sas.test.ts (JSON errors carry none).
  test('expired is AuthenticationFailed; a minute past expiry too', async () => {
    const se = iso(Date.now() - 10 * minute);
    const res = await query(serviceSas({ tn: table, sp: 'r', se }));
    assertRefused(res, 403, 'AuthenticationFailed');
    assertRefused(
      await query(serviceSas({ tn: table, sp: 'r', se: iso(Date.now() - minute) })),
      403,
      'AuthenticationFailed',
    );
  });

  test('not yet valid is AuthenticationFailed; a minute early too', async () => {
    const res = await query(serviceSas({ tn: table, sp: 'r', st: iso(Date.now() + 10 * minute) }));
    assertRefused(res, 403, 'AuthenticationFailed');
    assertRefused(
      await query(serviceSas({ tn: table, sp: 'r', st: iso(Date.now() + minute) })),
      403,
      'AuthenticationFailed',
    );
  });

  test('date-only and minute-precision times', async () => {
    assert.equal((await query(serviceSas({ tn: table, sp: 'r', st: '2020-01-01', se: '2099-12-31' }))).status, 200);
    assert.equal((await query(serviceSas({ tn: table, sp: 'r', se: '2099-12-31T23:59Z' }))).status, 200);
  });

  test('account SAS too; an XML operation answers in XML', async () => {
    assertRefused(
      await query(accountSas({ srt: 'o', sp: 'r', se: iso(Date.now() - 10 * minute) })),
      403,
      'AuthenticationFailed',
    );
    const res = await sasRequest(accountSas({ srt: 's', sp: 'r', st: iso(Date.now() + 10 * minute) }), {
      method: 'GET',
      path: devPath('?restype=service&comp=properties'),
    });
    assertRefused(res, 403, 'AuthenticationFailed');
    assert.match(res.headers['content-type'] ?? '', /application\/xml/);
  });
});

describe('source IP and protocol (Azure REST: create-service-sas steps 4-5)', () => {
  let table: string;
  before(async () => {
    table = (await ownerTable('ip')).tableName;
  });
  const query = (token: string) => sasRequest(token, { method: 'GET', path: devPath(`${table}()`) });

  test('sip: the client address, or a range holding it, passes', async () => {
    assert.equal((await query(serviceSas({ tn: table, sp: 'r', sip: '127.0.0.1' }))).status, 200);
    assert.equal((await query(serviceSas({ tn: table, sp: 'r', sip: '127.0.0.0-127.0.0.255' }))).status, 200);
    assert.equal((await query(accountSas({ srt: 'o', sp: 'r', sip: '127.0.0.1-127.0.0.1' }))).status, 200);
  });

  test('sip: another address or range is AuthorizationSourceIPMismatch', async () => {
    assertRefused(
      await query(serviceSas({ tn: table, sp: 'r', sip: '10.0.0.1' })),
      403,
      'AuthorizationSourceIPMismatch',
    );
    assertRefused(
      await query(serviceSas({ tn: table, sp: 'r', sip: '127.0.0.2-127.0.0.255' })),
      403,
      'AuthorizationSourceIPMismatch',
    );
    assertRefused(
      await query(accountSas({ srt: 'o', sp: 'r', sip: '192.168.0.0-192.168.255.255' })),
      403,
      'AuthorizationSourceIPMismatch',
    );
  });

  test('spr=https over HTTP is AuthorizationProtocolMismatch; https,http passes', async () => {
    assertRefused(await query(serviceSas({ tn: table, sp: 'r', spr: 'https' })), 403, 'AuthorizationProtocolMismatch');
    assertRefused(await query(accountSas({ srt: 'o', sp: 'r', spr: 'https' })), 403, 'AuthorizationProtocolMismatch');
    assert.equal((await query(serviceSas({ tn: table, sp: 'r', spr: 'https,http' }))).status, 200);
  });
});

describe('tampering is AuthenticationFailed and reveals no signature (Azure REST: create-service-sas step 2)', () => {
  let table: string;
  let otherTable: string;
  before(async () => {
    table = (await ownerTable('tamper')).tableName;
    otherTable = (await ownerTable('tamper')).tableName;
    await ownerUpsert(table, 'a', '1');
  });

  /** Replaces one parameter of a signed token, keeping its signature. */
  function edit(token: string, name: string, value: string | undefined): string {
    const params = new URLSearchParams(token);
    if (value === undefined) params.delete(name);
    else params.set(name, value);
    return params.toString();
  }

  test('widening permissions, keys, time or table, or a flipped or foreign signature', async () => {
    const base = serviceSas({ tn: table, sp: 'r', spk: 'a', epk: 'a' });
    const signature = new URLSearchParams(base).get('sig')!;
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    const tokens: [string, string][] = [
      ['sp widened', edit(base, 'sp', 'raud')],
      ['epk widened', edit(base, 'epk', 'z')],
      ['spk dropped', edit(base, 'spk', undefined)],
      ['se extended', edit(base, 'se', '2099-01-01T00:00:00Z')],
      ['tn changed', edit(base, 'tn', otherTable)],
      ['sig flipped', edit(base, 'sig', flipped)],
      ['another key', serviceSas({ tn: table, sp: 'r', spk: 'a', epk: 'a' }, otherKey)],
      ['sig garbage', edit(base, 'sig', '%%%')],
    ];
    for (const [name, token] of tokens) {
      const res = await sasRequest(token, { method: 'GET', path: devPath(entityResource(table, 'a', '1')) });
      assertRefused(res, 403, 'AuthenticationFailed');
      // The signature the server computed for the tampered fields must not appear anywhere.
      const fields = Object.fromEntries(new URLSearchParams(token));
      const wanted = hmacBase64(devKey, serviceStringToSign(fields));
      const everything = res.text + JSON.stringify(res.headers);
      assert.ok(
        !everything.includes(wanted) && !everything.includes(encodeURIComponent(wanted)),
        `${name} leaks the signature`,
      );
    }
  });

  test('account SAS: widened resource types or permissions', async () => {
    const base = accountSas({ srt: 'o', sp: 'r' });
    for (const token of [edit(base, 'srt', 'sco'), edit(base, 'sp', 'rwdlacup'), edit(base, 'ss', 'bqtf')]) {
      assertRefused(await sasRequest(token, { method: 'GET', path: devPath('Tables') }), 403, 'AuthenticationFailed');
    }
  });

  test('a valid token for another table is AuthorizationFailure', async () => {
    const token = serviceSas({ tn: otherTable, sp: 'r' });
    assertRefused(
      await sasRequest(token, { method: 'GET', path: devPath(entityResource(table, 'a', '1')) }),
      403,
      'AuthorizationFailure',
    );
  });

  test('a token without sig is not a SAS: Shared Key fails', async () => {
    const token = edit(serviceSas({ tn: table, sp: 'r' }), 'sig', undefined);
    assertRefused(await sasRequest(token, { method: 'GET', path: devPath(`${table}()`) }), 403, 'AuthenticationFailed');
  });
});

describe('stored access policies (Azure REST: create-service-sas): changes apply at once', () => {
  let table: TableClient;
  before(async () => {
    table = await ownerTable('policy');
    await table.createEntity({ partitionKey: 'p', rowKey: '1' });
  });
  const read = (token: string) =>
    sasRequest(token, { method: 'GET', path: devPath(entityResource(table.tableName, 'p', '1')) });
  const insert = (token: string, rk: string) =>
    sasRequest(token, { method: 'POST', path: devPath(table.tableName), body: { PartitionKey: 'p', RowKey: rk } });
  const setPolicy = (permission: string | undefined, start?: Date, expiry = new Date(Date.now() + 60 * minute)) =>
    table.setAccessPolicy([{ id: 'pol', accessPolicy: { permission, start, expiry } }]);

  test('the policy fills in sp, st and se; changing it changes the token; removing it revokes it', async () => {
    await setPolicy('r');
    const token = serviceSas({ tn: table.tableName, si: 'pol' });
    assert.equal((await read(token)).status, 200);
    assertRefused(await insert(token, '2'), 403, 'AuthorizationPermissionMismatch');

    await setPolicy('ra');
    assert.equal((await insert(token, '2')).status, 201);

    await table.setAccessPolicy([]);
    assertRefused(await read(token), 403, 'AuthorizationFailure');

    await setPolicy('r');
    assert.equal((await read(token)).status, 200);

    // Outside the policy's time window: as for any SAS, AuthenticationFailed.
    await setPolicy('r', undefined, new Date(Date.now() - 60 * minute));
    assertRefused(await read(token), 403, 'AuthenticationFailed');

    await setPolicy('r', new Date(Date.now() + 60 * minute), new Date(Date.now() + 120 * minute));
    assertRefused(await read(token), 403, 'AuthenticationFailed');
  });

  test('the URL may supply what the policy leaves out; a field in both is a 400', async () => {
    await table.setAccessPolicy([{ id: 'pol', accessPolicy: { expiry: new Date(Date.now() + 60 * minute) } }]);
    assert.equal((await read(serviceSas({ tn: table.tableName, si: 'pol', sp: 'r' }))).status, 200);
    await setPolicy('r');
    const res = await read(serviceSas({ tn: table.tableName, si: 'pol', sp: 'r' }));
    assert.equal(res.status, 400, describeResponse(res));
  });

  test('SDK generateTableSas with an identifier', async () => {
    await setPolicy('r');
    const sas = generateTableSas(table.tableName, new AzureNamedKeyCredential(devAccount, devKey), {
      identifier: 'pol',
    });
    const client = new TableClient(server.url, table.tableName, new AzureSASCredential(sas), clientOptions);
    assert.equal((await client.getEntity('p', '1')).rowKey, '1');
  });

  test('an unknown policy, or one of a deleted and recreated table, is AuthorizationFailure', async () => {
    await setPolicy('r');
    const token = serviceSas({ tn: table.tableName, si: 'pol' });
    assertRefused(await read(serviceSas({ tn: table.tableName, si: 'nope' })), 403, 'AuthorizationFailure');
    await table.deleteTable();
    await table.createTable();
    await table.createEntity({ partitionKey: 'p', rowKey: '1' });
    assertRefused(await read(token), 403, 'AuthorizationFailure');
  });
});
