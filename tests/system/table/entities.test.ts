// Entity operations (Azure REST: payload-format-for-table-service-operations, addressing-table-service-resources,
// merge-entity, operations-on-entities; docs/protocol-notes.md) through raw HTTP and the SDK.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RestError } from '@azure/data-tables';
import { startServer, type RunningServer } from '../../helpers/server.js';
import {
  assertError,
  describeResponse,
  devPath,
  entityPath,
  pythonKeyLiteral,
  send,
  type RawRequest,
} from '../../helpers/http.js';
import { etagTicks, etagTimestamp, isoTicks, memberSet } from '../../helpers/odata.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';

const accept = {
  none: 'application/json;odata=nometadata',
  minimal: 'application/json;odata=minimalmetadata',
  full: 'application/json;odata=fullmetadata',
};

describe('entities', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  const call = (req: RawRequest) => send(server.port, req);

  async function newTable(prefix = 'e'): Promise<string> {
    const name = uniqueTableName(prefix);
    const res = await call({
      method: 'POST',
      path: devPath('Tables'),
      body: { TableName: name },
      headers: { Prefer: 'return-no-content' },
    });
    assert.equal(res.status, 204, describeResponse(res));
    return name;
  }

  const insert = (table: string, body: object | string, headers: RawRequest['headers'] = {}) =>
    call({ method: 'POST', path: devPath(table), body, headers });

  const read = (table: string, pk = 'p', rk = 'r', headers: RawRequest['headers'] = {}) =>
    call({ method: 'GET', path: entityPath(table, pk, rk), headers });

  const write = (
    method: string,
    table: string,
    body: object,
    headers: RawRequest['headers'] = {},
    pk = 'p',
    rk = 'r',
  ) => call({ method, path: entityPath(table, pk, rk), body, headers });

  /** The stored entity in nometadata form (no odata members, no annotations). */
  async function stored(table: string, pk = 'p', rk = 'r'): Promise<Record<string, unknown> | undefined> {
    const res = await read(table, pk, rk, { Accept: accept.none });
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, describeResponse(res));
    return res.json();
  }

  function customProps(entity: Record<string, unknown> | undefined): Record<string, unknown> {
    assert.ok(entity, 'entity must exist');
    const { PartitionKey: _pk, RowKey: _rk, Timestamp: _ts, ...rest } = entity;
    return rest;
  }

  describe('insert and the Prefer header', () => {
    test('no Prefer → 201 with the entity, Timestamp and odata.etag; ETag header = odata.etag; no Preference-Applied', async () => {
      const table = await newTable();
      const res = await insert(table, { PartitionKey: 'p', RowKey: 'r', a: 'x' });
      assert.equal(res.status, 201, describeResponse(res));
      const body = res.json();
      assert.equal(body.PartitionKey, 'p');
      assert.equal(body.RowKey, 'r');
      assert.equal(body.a, 'x');
      assert.equal(typeof body.Timestamp, 'string');
      assert.equal(body['odata.etag'], res.headers.etag);
      assert.equal(etagTimestamp(String(body['odata.etag'])), body.Timestamp);
      assert.equal(res.headers['preference-applied'], undefined);
      assert.match(String(res.headers['content-type']), /^application\/json/);
    });

    test('return-no-content → 204 + Preference-Applied, ETag, Location, DataServiceId', async () => {
      const table = await newTable();
      const res = await insert(table, { PartitionKey: 'p', RowKey: 'r' }, { Prefer: 'return-no-content' });
      assert.equal(res.status, 204, describeResponse(res));
      assert.equal(res.body.length, 0);
      assert.equal(res.headers['preference-applied'], 'return-no-content');
      assert.match(String(res.headers.etag), /^W\/"datetime'.+'"$/);
      const location = String(res.headers.location);
      assert.ok(location.endsWith(`${table}(PartitionKey='p',RowKey='r')`), location);
      assert.equal(res.headers.dataserviceid, location);
    });

    test('return-content → 201 + Preference-Applied', async () => {
      const table = await newTable();
      const res = await insert(table, { PartitionKey: 'p', RowKey: 'r', n: 1 }, { Prefer: 'return-content' });
      assert.equal(res.status, 201, describeResponse(res));
      assert.equal(res.headers['preference-applied'], 'return-content');
      assert.equal(res.json().n, 1);
    });

    test('duplicate insert → 409 EntityAlreadyExists and the original is kept', async () => {
      const table = await newTable();
      await insert(table, { PartitionKey: 'p', RowKey: 'r', v: 1 });
      assertError(await insert(table, { PartitionKey: 'p', RowKey: 'r', v: 2 }), 409, 'EntityAlreadyExists');
      assert.equal((await stored(table))?.v, 1);
    });

    test('keys are case-sensitive: p/r and P/R are different entities', async () => {
      const table = await newTable();
      assert.equal((await insert(table, { PartitionKey: 'p', RowKey: 'r' })).status, 201);
      assert.equal((await insert(table, { PartitionKey: 'P', RowKey: 'R' })).status, 201);
    });

    test('the table name in the path is case-insensitive', async () => {
      const table = await newTable('Case');
      assert.equal((await insert(table.toUpperCase(), { PartitionKey: 'p', RowKey: 'r', v: 1 })).status, 201);
      assert.equal((await stored(table.toLowerCase()))?.v, 1);
    });

    test('missing table → 404 TableNotFound for insert, read, query, update, merge, delete', async () => {
      const table = uniqueTableName('nope');
      assertError(await insert(table, { PartitionKey: 'p', RowKey: 'r' }), 404, 'TableNotFound');
      assertError(await read(table), 404, 'TableNotFound');
      assertError(await call({ method: 'GET', path: devPath(`${table}()`) }), 404, 'TableNotFound');
      assertError(await write('PUT', table, { PartitionKey: 'p', RowKey: 'r' }), 404, 'TableNotFound');
      assertError(await write('MERGE', table, { PartitionKey: 'p', RowKey: 'r' }), 404, 'TableNotFound');
      assertError(
        await call({ method: 'DELETE', path: entityPath(table, 'p', 'r'), headers: { 'If-Match': '*' } }),
        404,
        'TableNotFound',
      );
    });
  });

  describe('point read', () => {
    test('200 with ETag header equal to odata.etag; missing → 404 ResourceNotFound', async () => {
      const table = await newTable();
      const inserted = await insert(table, { PartitionKey: 'p', RowKey: 'r', a: 1 }, { Prefer: 'return-no-content' });
      const res = await read(table);
      assert.equal(res.status, 200, describeResponse(res));
      assert.equal(res.headers.etag, res.json()['odata.etag']);
      assert.equal(res.headers.etag, inserted.headers.etag);
      assertError(await read(table, 'p', 'other'), 404, 'ResourceNotFound');
    });
  });

  describe('update, merge, delete', () => {
    async function seeded(): Promise<{ table: string; etag: string }> {
      const table = await newTable();
      const res = await insert(
        table,
        { PartitionKey: 'p', RowKey: 'r', keep: 'k', drop: 'd' },
        { Prefer: 'return-no-content' },
      );
      assert.equal(res.status, 204, describeResponse(res));
      return { table, etag: String(res.headers.etag) };
    }

    test('PUT with If-Match replaces: removed properties are gone, new ETag', async () => {
      const { table, etag } = await seeded();
      const res = await write(
        'PUT',
        table,
        { PartitionKey: 'p', RowKey: 'r', keep: 'k2', added: 1 },
        { 'If-Match': etag },
      );
      assert.equal(res.status, 204, describeResponse(res));
      assert.notEqual(res.headers.etag, etag);
      assert.deepEqual(customProps(await stored(table)), { keep: 'k2', added: 1 });
    });

    for (const [label, method, extra] of [
      ['MERGE', 'MERGE', {}],
      ['PATCH', 'PATCH', {}],
      ['POST + X-HTTP-Method: MERGE', 'POST', { 'X-HTTP-Method': 'MERGE' }],
    ] as const) {
      test(`merge via ${label} keeps other properties and returns a new ETag`, async () => {
        const { table, etag } = await seeded();
        const res = await write(
          method,
          table,
          { PartitionKey: 'p', RowKey: 'r', keep: 'k2', added: 1 },
          { 'If-Match': etag, ...extra },
        );
        assert.equal(res.status, 204, describeResponse(res));
        assert.notEqual(res.headers.etag, etag);
        assert.deepEqual(customProps(await stored(table)), { keep: 'k2', drop: 'd', added: 1 });
      });

      test(`merge via ${label} with a stale If-Match → 412, without If-Match on a missing entity → creates it`, async () => {
        const { table, etag } = await seeded();
        await write('PUT', table, { PartitionKey: 'p', RowKey: 'r', v: 1 }, { 'If-Match': '*' });
        assertError(
          await write(method, table, { PartitionKey: 'p', RowKey: 'r', v: 2 }, { 'If-Match': etag, ...extra }),
          412,
          'UpdateConditionNotSatisfied',
        );
        assert.equal((await stored(table))?.v, 1);
        const upsert = await write(method, table, { PartitionKey: 'p', RowKey: 'new', v: 3 }, { ...extra }, 'p', 'new');
        assert.equal(upsert.status, 204, describeResponse(upsert));
        assert.deepEqual(customProps(await stored(table, 'p', 'new')), { v: 3 });
      });
    }

    test('X-HTTP-Method on a non-POST → 400 XMethodNotUsingPost; unknown value → 400 XMethodIncorrectValue', async () => {
      const { table } = await seeded();
      assertError(
        await write('PUT', table, { PartitionKey: 'p', RowKey: 'r' }, { 'X-HTTP-Method': 'MERGE' }),
        400,
        'XMethodNotUsingPost',
      );
      assertError(
        await write('POST', table, { PartitionKey: 'p', RowKey: 'r' }, { 'X-HTTP-Method': 'FROB' }),
        400,
        'XMethodIncorrectValue',
      );
      assert.deepEqual(customProps(await stored(table)), { keep: 'k', drop: 'd' }, 'rejected requests change nothing');
    });

    test('stale If-Match → 412 UpdateConditionNotSatisfied on PUT and DELETE', async () => {
      const { table, etag } = await seeded();
      const fresh = await write('MERGE', table, { PartitionKey: 'p', RowKey: 'r', n: 1 }, { 'If-Match': etag });
      assert.equal(fresh.status, 204);
      assertError(
        await write('PUT', table, { PartitionKey: 'p', RowKey: 'r' }, { 'If-Match': etag }),
        412,
        'UpdateConditionNotSatisfied',
      );
      assertError(
        await call({ method: 'DELETE', path: entityPath(table, 'p', 'r'), headers: { 'If-Match': etag } }),
        412,
        'UpdateConditionNotSatisfied',
      );
      assert.equal((await stored(table))?.n, 1);
    });

    test('If-Match on a missing entity → 404 and nothing is created (PUT, MERGE, DELETE)', async () => {
      const table = await newTable();
      for (const method of ['PUT', 'MERGE', 'PATCH']) {
        for (const ifMatch of ['*', `W/"datetime'2020-01-01T00%3A00%3A00Z'"`]) {
          const res = await write(method, table, { PartitionKey: 'p', RowKey: 'r', v: 1 }, { 'If-Match': ifMatch });
          assert.equal(res.status, 404, `${method} If-Match ${ifMatch}: ${describeResponse(res)}`);
        }
      }
      assertError(
        await call({ method: 'DELETE', path: entityPath(table, 'p', 'r'), headers: { 'If-Match': '*' } }),
        404,
        'ResourceNotFound',
      );
      assert.equal(await stored(table), undefined);
    });

    test('PUT without If-Match is insert-or-replace', async () => {
      const table = await newTable();
      const created = await write('PUT', table, { PartitionKey: 'p', RowKey: 'r', a: 1, b: 2 });
      assert.equal(created.status, 204, describeResponse(created));
      assert.match(String(created.headers.etag), /^W\/"datetime/);
      const replaced = await write('PUT', table, { PartitionKey: 'p', RowKey: 'r', c: 3 });
      assert.equal(replaced.status, 204, describeResponse(replaced));
      assert.deepEqual(customProps(await stored(table)), { c: 3 });
    });

    test('MERGE without If-Match is insert-or-merge', async () => {
      const table = await newTable();
      assert.equal((await write('MERGE', table, { PartitionKey: 'p', RowKey: 'r', a: 1 })).status, 204);
      assert.equal((await write('MERGE', table, { PartitionKey: 'p', RowKey: 'r', b: 2 })).status, 204);
      assert.deepEqual(customProps(await stored(table)), { a: 1, b: 2 });
    });

    test('a merge may change the type of a property', async () => {
      const table = await newTable();
      await insert(table, { PartitionKey: 'p', RowKey: 'r', v: 1 });
      await write('MERGE', table, { PartitionKey: 'p', RowKey: 'r', v: 'text' }, { 'If-Match': '*' });
      assert.equal((await stored(table))?.v, 'text');
    });

    test('DELETE with If-Match: * or the current ETag → 204 without ETag; without If-Match → 400', async () => {
      const { table, etag } = await seeded();
      const noIfMatch = await call({ method: 'DELETE', path: entityPath(table, 'p', 'r') });
      assert.equal(noIfMatch.status, 400, describeResponse(noIfMatch));
      assert.ok(await stored(table), 'a rejected delete must not delete');
      const byEtag = await call({ method: 'DELETE', path: entityPath(table, 'p', 'r'), headers: { 'If-Match': etag } });
      assert.equal(byEtag.status, 204, describeResponse(byEtag));
      assert.equal(byEtag.headers.etag, undefined);
      assert.equal(await stored(table), undefined);
      await insert(table, { PartitionKey: 'p', RowKey: 'r' });
      const star = await call({ method: 'DELETE', path: entityPath(table, 'p', 'r'), headers: { 'If-Match': '*' } });
      assert.equal(star.status, 204, describeResponse(star));
      assert.equal(await stored(table), undefined);
    });
  });

  describe('SDK entity operations', () => {
    test('createEntity, upsertEntity Replace/Merge, updateEntity Replace/Merge with etag, deleteEntity', async () => {
      const client = tableClient(server, uniqueTableName('sdk'));
      await client.createTable();
      await client.createEntity({ partitionKey: 'p', rowKey: 'r', a: 1, b: 'x' });
      await client.upsertEntity({ partitionKey: 'p', rowKey: 'r', c: true }, 'Merge');
      assert.deepEqual(customProps(await stored(client.tableName)), { a: 1, b: 'x', c: true });
      await client.upsertEntity({ partitionKey: 'p', rowKey: 'r', d: 2 }, 'Replace');
      assert.deepEqual(customProps(await stored(client.tableName)), { d: 2 });
      await client.upsertEntity({ partitionKey: 'p', rowKey: 'u', e: 1 }, 'Replace');
      await client.upsertEntity({ partitionKey: 'p', rowKey: 'm', e: 2 }, 'Merge');

      const current = await client.getEntity('p', 'r');
      const replaced = await client.updateEntity({ partitionKey: 'p', rowKey: 'r', f: 3 }, 'Replace', {
        etag: current.etag,
      });
      assert.notEqual(replaced.etag, current.etag);
      await assert.rejects(
        client.updateEntity({ partitionKey: 'p', rowKey: 'r', g: 4 }, 'Merge', { etag: current.etag }),
        (e: unknown) => e instanceof RestError && e.statusCode === 412,
      );
      await client.updateEntity({ partitionKey: 'p', rowKey: 'r', g: 4 }, 'Merge', { etag: replaced.etag! });
      assert.deepEqual(customProps(await stored(client.tableName)), { f: 3, g: 4 });
      await assert.rejects(
        client.deleteEntity('p', 'r', { etag: replaced.etag! }),
        (e: unknown) => e instanceof RestError && e.statusCode === 412,
      );
      await client.deleteEntity('p', 'r');
      await assert.rejects(client.getEntity('p', 'r'), (e: unknown) => e instanceof RestError && e.statusCode === 404);
      const rest: string[] = [];
      for await (const e of client.listEntities()) rest.push(e.rowKey!);
      assert.deepEqual(rest, ['m', 'u']);
    });
  });

  describe('common response headers', () => {
    test('x-ms-request-id, x-ms-version (echoed), Date and x-ms-client-request-id on success and error responses', async () => {
      const table = await newTable();
      const headers = { 'x-ms-version': '2021-12-02', 'x-ms-client-request-id': 'client-id-123 with spaces' };
      const requests: RawRequest[] = [
        { method: 'POST', path: devPath(table), body: { PartitionKey: 'p', RowKey: 'r' } },
        { method: 'POST', path: devPath(table), body: { PartitionKey: 'p', RowKey: 'r' } },
        { method: 'GET', path: entityPath(table, 'p', 'r') },
        { method: 'GET', path: entityPath(table, 'p', 'zz') },
        { method: 'GET', path: devPath(`${table}()`) },
        {
          method: 'PUT',
          path: entityPath(table, 'p', 'r'),
          body: { PartitionKey: 'p', RowKey: 'r' },
          headers: { 'If-Match': '*' },
        },
        { method: 'PATCH', path: entityPath(table, 'p', 'r'), body: {}, headers: { 'If-Match': '*' } },
        { method: 'DELETE', path: entityPath(table, 'p', 'r'), headers: { 'If-Match': '*' } },
        { method: 'GET', path: devPath('Tables') },
        { method: 'POST', path: devPath('Tables'), body: { TableName: table } },
        { method: 'GET', path: devPath('Tables'), auth: 'none' },
        { method: 'POST', path: devPath(table), body: '{bad json' },
      ];
      const requestIds = new Set<string>();
      for (const req of requests) {
        const res = await call({ ...req, headers: { ...headers, ...req.headers } });
        const what = `${req.method} ${req.path} → ${res.status}`;
        const requestId = res.headers['x-ms-request-id'];
        assert.ok(typeof requestId === 'string' && requestId.length > 0, `${what}: x-ms-request-id`);
        requestIds.add(requestId);
        assert.equal(res.headers['x-ms-version'], '2021-12-02', `${what}: x-ms-version`);
        assert.ok(!Number.isNaN(Date.parse(String(res.headers.date))), `${what}: Date`);
        assert.equal(
          res.headers['x-ms-client-request-id'],
          headers['x-ms-client-request-id'],
          `${what}: client request id`,
        );
      }
      assert.equal(requestIds.size, requests.length, 'request ids must be unique');
    });
  });

  describe('ETag and Timestamp', () => {
    test('50 rapid updates of one entity: every ETag distinct and strictly increasing, Timestamp matches', async () => {
      const table = await newTable();
      const first = await insert(table, { PartitionKey: 'p', RowKey: 'r', n: 0 }, { Prefer: 'return-no-content' });
      let etag = String(first.headers.etag);
      const ticks = [etagTicks(etag)];
      for (let n = 1; n <= 50; n++) {
        const method = n % 2 === 0 ? 'PUT' : 'MERGE';
        const res = await write(method, table, { PartitionKey: 'p', RowKey: 'r', n }, { 'If-Match': etag });
        assert.equal(res.status, 204, `update ${n}: ${describeResponse(res)}`);
        etag = String(res.headers.etag);
        ticks.push(etagTicks(etag));
      }
      for (let i = 1; i < ticks.length; i++)
        assert.ok(ticks[i]! > ticks[i - 1]!, `ETag ${i} must be later than ETag ${i - 1}`);
      const final = await read(table);
      assert.equal(final.headers.etag, etag);
      assert.equal(isoTicks(final.json().Timestamp), ticks.at(-1));
      assert.equal(final.json().n, 50);
    });

    test('concurrent merges of one entity all get distinct ETags', async () => {
      const table = await newTable();
      await insert(table, { PartitionKey: 'p', RowKey: 'r' });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          write('MERGE', table, { PartitionKey: 'p', RowKey: 'r', [`m${i}`]: i }, { 'If-Match': '*' }),
        ),
      );
      for (const res of results) assert.equal(res.status, 204, describeResponse(res));
      assert.equal(new Set(results.map((r) => r.headers.etag)).size, 20);
      assert.equal(Object.keys(customProps(await stored(table))).length, 20);
    });
  });

  describe('metadata levels', () => {
    const typed = {
      PartitionKey: 'p',
      RowKey: 'r',
      s: 'text',
      i32: 5,
      dbl: 3.5,
      bool: true,
      i64: '1234567890123',
      'i64@odata.type': 'Edm.Int64',
      dt: '2020-01-02T03:04:05.1234567Z',
      'dt@odata.type': 'Edm.DateTime',
      guid: '12345678-1234-5678-1234-567812345678',
      'guid@odata.type': 'Edm.Guid',
      bin: 'AQI=',
      'bin@odata.type': 'Edm.Binary',
    };
    const plainMembers = ['PartitionKey', 'RowKey', 'Timestamp', 's', 'i32', 'dbl', 'bool', 'i64', 'dt', 'guid', 'bin'];
    const annotated = ['i64@odata.type', 'dt@odata.type', 'guid@odata.type', 'bin@odata.type'];
    let table: string;
    before(async () => {
      table = await newTable('meta');
      const res = await insert(table, typed);
      assert.equal(res.status, 201, describeResponse(res));
    });

    function assertNone(entity: Record<string, unknown>): void {
      assert.deepEqual(memberSet(entity), [...plainMembers].sort());
      assert.equal(entity.i64, '1234567890123');
    }
    function assertMinimal(entity: Record<string, unknown>, withMetadata = true): void {
      const expected = [...plainMembers, ...annotated, 'odata.etag', ...(withMetadata ? ['odata.metadata'] : [])];
      assert.deepEqual(memberSet(entity), expected.sort());
      assert.equal(entity['i64@odata.type'], 'Edm.Int64');
      assert.equal(entity['dt@odata.type'], 'Edm.DateTime');
      assert.equal(entity['guid@odata.type'], 'Edm.Guid');
      assert.equal(entity['bin@odata.type'], 'Edm.Binary');
    }
    function assertFull(entity: Record<string, unknown>): void {
      for (const m of ['odata.type', 'odata.id', 'odata.etag', 'odata.editLink', ...plainMembers, ...annotated]) {
        assert.ok(m in entity, `full metadata must have ${m}`);
      }
      assert.equal(entity['odata.type'], `devstoreaccount1.${table}`);
      assert.equal(entity['odata.editLink'], `${table}(PartitionKey='p',RowKey='r')`);
      assert.ok(String(entity['odata.id']).endsWith(`${table}(PartitionKey='p',RowKey='r')`));
      assert.equal(entity['Timestamp@odata.type'], 'Edm.DateTime');
      assert.equal(entity['s@odata.type'], undefined, 'strings are never annotated');
      for (const name of Object.keys(entity)) {
        if (name.startsWith('odata.')) continue;
        const base = name.endsWith('@odata.type') ? name.slice(0, -'@odata.type'.length) : name;
        assert.ok(plainMembers.includes(base), `unexpected member ${name}`);
      }
    }

    const getWith = (headers: RawRequest['headers'], query = '') =>
      call({ method: 'GET', path: entityPath(table, 'p', 'r') + query, headers });
    const format = (level: keyof typeof accept) => `?$format=${encodeURIComponent(accept[level])}`;

    test('Accept: nometadata → no odata members, no annotations', async () => {
      const res = await getWith({ Accept: accept.none });
      assert.equal(res.status, 200, describeResponse(res));
      assertNone(res.json());
    });

    test('Accept: minimalmetadata → odata.metadata, odata.etag, annotations for Int64/DateTime/Guid/Binary only', async () => {
      assertMinimal((await getWith({ Accept: accept.minimal })).json());
    });

    test('Accept: application/json, */* or no Accept → minimal metadata', async () => {
      for (const value of ['application/json', '*/*', undefined]) {
        assertMinimal((await getWith({ Accept: value })).json());
      }
    });

    test('Accept: fullmetadata → odata.type/id/editLink and Timestamp@odata.type', async () => {
      assertFull((await getWith({ Accept: accept.full })).json());
    });

    test('$format wins over Accept', async () => {
      assertFull((await getWith({ Accept: accept.none }, format('full'))).json());
      assertNone((await getWith({ Accept: accept.full }, format('none'))).json());
      assertMinimal((await getWith({ Accept: accept.none }, format('minimal'))).json());
    });

    test('query responses follow the same levels', async () => {
      const q = (headers: RawRequest['headers'], query = '') =>
        call({ method: 'GET', path: devPath(`${table}()${query}`), headers });
      const none = (await q({ Accept: accept.none })).json();
      assert.deepEqual(memberSet(none), ['value']);
      assertNone(none.value[0]);
      const minimal = (await q({ Accept: accept.none }, format('minimal'))).json();
      assert.ok(String(minimal['odata.metadata']).endsWith(`$metadata#${table}`));
      assertMinimal(minimal.value[0], false);
      assertFull((await q({ Accept: accept.full })).json().value[0]);
    });

    test('the insert echo honours the metadata level too', async () => {
      const other = await newTable('echo');
      const res = await insert(other, typed, { Accept: accept.none });
      assert.equal(res.status, 201, describeResponse(res));
      assertNone(res.json());
    });
  });

  describe('request body rules', () => {
    test('odata.* members and Timestamp in request bodies are ignored (insert and update)', async () => {
      const table = await newTable();
      const noise = {
        'odata.metadata': 'http://x/$metadata#t/@Element',
        'odata.type': 'acct.t',
        'odata.id': "http://x/t(PartitionKey='p',RowKey='r')",
        'odata.etag': 'W/"datetime\'2000-01-01T00%3A00%3A00Z\'"',
        'odata.editLink': "t(PartitionKey='p',RowKey='r')",
        Timestamp: '2000-01-01T00:00:00Z',
        'Timestamp@odata.type': 'Edm.DateTime',
      };
      const startedMs = Date.now();
      const res = await insert(table, { PartitionKey: 'p', RowKey: 'r', a: 1, ...noise });
      assert.equal(res.status, 201, describeResponse(res));
      let entity = await stored(table);
      assert.deepEqual(customProps(entity), { a: 1 });
      assert.ok(Date.parse(String(entity?.Timestamp)) >= startedMs - 60_000, 'Timestamp is set by the server');
      const put = await write('PUT', table, { PartitionKey: 'p', RowKey: 'r', b: 2, ...noise }, { 'If-Match': '*' });
      assert.equal(put.status, 204, describeResponse(put));
      entity = await stored(table);
      assert.deepEqual(customProps(entity), { b: 2 });
      assert.ok(Date.parse(String(entity?.Timestamp)) >= startedMs - 60_000);
    });

    test('Edm.String annotations on PartitionKey and RowKey are accepted (Python sends them)', async () => {
      const table = await newTable();
      const res = await insert(table, {
        PartitionKey: 'p',
        'PartitionKey@odata.type': 'Edm.String',
        RowKey: 'r',
        'RowKey@odata.type': 'Edm.String',
        s: 'v',
        's@odata.type': 'Edm.String',
      });
      assert.equal(res.status, 201, describeResponse(res));
      assert.deepEqual(customProps(await stored(table)), { s: 'v' });
    });

    test('null properties: not stored on insert, ignored by merge, dropped by replace', async () => {
      const table = await newTable();
      await insert(table, { PartitionKey: 'p', RowKey: 'r', a: null, b: 1, c: 'c' });
      assert.deepEqual(customProps(await stored(table)), { b: 1, c: 'c' });
      await write('MERGE', table, { PartitionKey: 'p', RowKey: 'r', b: null, d: 2 }, { 'If-Match': '*' });
      assert.deepEqual(customProps(await stored(table)), { b: 1, c: 'c', d: 2 });
      await write('PUT', table, { PartitionKey: 'p', RowKey: 'r', c: null, e: 3 }, { 'If-Match': '*' });
      assert.deepEqual(customProps(await stored(table)), { e: 3 });
    });

    test('duplicate property names → 400 DuplicatePropertiesSpecified (insert, update, merge)', async () => {
      const table = await newTable();
      assertError(
        await insert(table, '{"PartitionKey":"p","RowKey":"r","a":1,"a":2}'),
        400,
        'DuplicatePropertiesSpecified',
      );
      assertError(
        await insert(table, '{"PartitionKey":"p","RowKey":"r","PartitionKey":"q"}'),
        400,
        'DuplicatePropertiesSpecified',
      );
      assert.equal(await stored(table), undefined);
      await insert(table, { PartitionKey: 'p', RowKey: 'r' });
      for (const method of ['PUT', 'MERGE']) {
        const res = await call({
          method,
          path: entityPath(table, 'p', 'r'),
          body: '{"PartitionKey":"p","RowKey":"r","b":"x","b":"y"}',
          headers: { 'If-Match': '*' },
        });
        assertError(res, 400, 'DuplicatePropertiesSpecified');
      }
      const caseOnly = await insert(table, '{"PartitionKey":"p","RowKey":"case","a":1,"A":2}');
      assert.equal(caseOnly.status, 201, 'names differing only in case are different properties');
      assert.deepEqual(customProps(await stored(table, 'p', 'case')), { a: 1, A: 2 });
    });
  });

  describe('key literals in URLs', () => {
    const keys: Array<[string, string]> = [
      ["p'1", "r'x"],
      ["it's (x), ok", 'a b%c&d+e=f'],
      ["''", "'"],
      ['caf\u00e9 \u{1F600}', '\u00a0'],
    ];

    test("quotes doubled (JS style 'p''1') and percent-encoded (Python style p%27%271) both address the entity", async () => {
      const client = tableClient(server, await newTable('keys'));
      for (const [pk, rk] of keys) {
        await client.createEntity({ partitionKey: pk, rowKey: rk, v: `${pk}|${rk}` });
        for (const literal of [undefined, pythonKeyLiteral]) {
          const res = await call({ method: 'GET', path: entityPath(client.tableName, pk, rk, literal) });
          assert.equal(res.status, 200, `${pk}/${rk}: ${describeResponse(res)}`);
          assert.equal(res.json().PartitionKey, pk);
          assert.equal(res.json().RowKey, rk);
        }
        assert.equal((await client.getEntity<{ v: string }>(pk, rk)).v, `${pk}|${rk}`);
      }
      for (const [pk, rk] of keys) {
        const res = await call({
          method: 'DELETE',
          path: entityPath(client.tableName, pk, rk, pythonKeyLiteral),
          headers: { 'If-Match': '*' },
        });
        assert.equal(res.status, 204, `${pk}/${rk}: ${describeResponse(res)}`);
      }
      const left: unknown[] = [];
      for await (const e of client.listEntities()) left.push(e);
      assert.deepEqual(left, []);
    });

    test("Location of an insert doubles quotes: (PartitionKey='p''1',RowKey='r''x')", async () => {
      const table = await newTable();
      const res = await insert(table, { PartitionKey: "p'1", RowKey: "r'x" }, { Prefer: 'return-no-content' });
      assert.equal(res.status, 204, describeResponse(res));
      assert.ok(
        String(res.headers.location).endsWith(`${table}(PartitionKey='p''1',RowKey='r''x')`),
        String(res.headers.location),
      );
    });

    test("empty keys '' work for insert, point read, update and delete", async () => {
      const table = await newTable();
      const inserted = await insert(table, { PartitionKey: '', RowKey: '', v: 1 });
      assert.equal(inserted.status, 201, describeResponse(inserted));
      const got = await read(table, '', '');
      assert.equal(got.status, 200, describeResponse(got));
      assert.equal(got.json().PartitionKey, '');
      assert.equal(got.json().v, 1);
      assert.equal(
        (await write('MERGE', table, { PartitionKey: '', RowKey: '', w: 2 }, { 'If-Match': '*' }, '', '')).status,
        204,
      );
      assert.deepEqual(customProps(await stored(table, '', '')), { v: 1, w: 2 });
      const deleted = await call({ method: 'DELETE', path: entityPath(table, '', ''), headers: { 'If-Match': '*' } });
      assert.equal(deleted.status, 204, describeResponse(deleted));
      assert.equal(await stored(table, '', ''), undefined);
    });

    test('an SDK client with empty keys round-trips', async () => {
      const client = tableClient(server, await newTable('sdkempty'));
      await client.createEntity({ partitionKey: '', rowKey: '', v: 'e' });
      assert.equal((await client.getEntity<{ v: string }>('', '')).v, 'e');
      await client.deleteEntity('', '');
    });
  });
});
