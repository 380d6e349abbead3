// Table operations (Azure REST: operations-on-tables, understanding-the-table-service-data-model,
// query-timeout-and-pagination) through raw HTTP and the SDK.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { assertError, describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { serviceClient, uniqueTableName } from '../../helpers/sdk.js';

describe('tables', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  const create = (name: string, headers: Record<string, string> = {}) =>
    send(server.port, { method: 'POST', path: devPath('Tables'), headers, body: { TableName: name } });
  const remove = (name: string) => send(server.port, { method: 'DELETE', path: devPath(`Tables('${name}')`) });
  const getOne = (name: string) => send(server.port, { method: 'GET', path: devPath(`Tables('${name}')`) });
  const query = (params: string) => send(server.port, { method: 'GET', path: devPath(`Tables?${params}`) });
  const names = (res: RawResponse): string[] => res.json().value.map((t: { TableName: string }) => t.TableName);
  const filterParam = (filter: string) => `$filter=${encodeURIComponent(filter)}`;

  test('create without Prefer → 201 with body and Location, no Preference-Applied', async () => {
    const name = uniqueTableName('Create');
    const res = await create(name);
    assert.equal(res.status, 201, describeResponse(res));
    assert.equal(res.json().TableName, name);
    assert.match(res.json()['odata.metadata'], /\$metadata#Tables\/@Element$/);
    assert.ok(String(res.headers.location).endsWith(`Tables('${name}')`), String(res.headers.location));
    assert.equal(res.headers['preference-applied'], undefined);
    assert.match(String(res.headers['content-type']), /^application\/json/);
  });

  test('create with Prefer: return-no-content → 204 + Preference-Applied, empty body', async () => {
    const name = uniqueTableName();
    const res = await create(name, { Prefer: 'return-no-content' });
    assert.equal(res.status, 204, describeResponse(res));
    assert.equal(res.headers['preference-applied'], 'return-no-content');
    assert.equal(res.body.length, 0);
    assert.ok(String(res.headers.location).endsWith(`Tables('${name}')`));
  });

  test('create with Prefer: return-content → 201 + Preference-Applied', async () => {
    const name = uniqueTableName();
    const res = await create(name, { Prefer: 'return-content' });
    assert.equal(res.status, 201, describeResponse(res));
    assert.equal(res.headers['preference-applied'], 'return-content');
    assert.equal(res.json().TableName, name);
  });

  test('create with an unknown Prefer value behaves as no Prefer', async () => {
    const res = await create(uniqueTableName(), { Prefer: 'return-something' });
    assert.equal(res.status, 201, describeResponse(res));
    assert.equal(res.headers['preference-applied'], undefined);
  });

  test('duplicate name in any case → 409 TableAlreadyExists; the SDK swallows it', async () => {
    const name = uniqueTableName('Dup');
    assert.equal((await create(name)).status, 201);
    assertError(await create(name), 409, 'TableAlreadyExists');
    assertError(await create(name.toUpperCase()), 409, 'TableAlreadyExists');
    assertError(await create(name.toLowerCase()), 409, 'TableAlreadyExists');
    await serviceClient(server).createTable(name.toLowerCase());
  });

  test('listing preserves the case used at creation', async () => {
    const name = `MiXeD${uniqueTableName('Case')}`;
    assert.equal((await create(name)).status, 201);
    const res = await query(filterParam(`TableName eq '${name}'`));
    assert.equal(res.status, 200, describeResponse(res));
    assert.deepEqual(names(res), [name]);
    const one = await getOne(name.toLowerCase());
    assert.equal(one.json().TableName, name);
  });

  test('delete → 204; deleting again → 404 TableNotFound; any case deletes', async () => {
    const name = uniqueTableName('Del');
    await create(name);
    const res = await remove(name.toUpperCase());
    assert.equal(res.status, 204, describeResponse(res));
    assert.equal(res.body.length, 0);
    assertError(await remove(name), 404, 'TableNotFound');
    assertError(await getOne(name), 404, 'TableNotFound');
  });

  test("GET Tables('name') → 200 with the table; missing → 404 TableNotFound", async () => {
    const name = uniqueTableName('One');
    await create(name);
    const res = await getOne(name);
    assert.equal(res.status, 200, describeResponse(res));
    assert.equal(res.json().TableName, name);
    assertError(await getOne(uniqueTableName('missing')), 404, 'TableNotFound');
  });

  test('create, delete, create the same name immediately', async () => {
    const name = uniqueTableName('Again');
    for (let round = 0; round < 3; round++) {
      assert.equal((await create(name)).status, 201, `round ${round}`);
      assert.equal((await remove(name)).status, 204, `round ${round}`);
    }
    assert.equal((await create(name)).status, 201);
  });

  test('a re-created table starts empty', async () => {
    const name = uniqueTableName('Empty');
    await create(name);
    await send(server.port, { method: 'POST', path: devPath(name), body: { PartitionKey: 'p', RowKey: 'r' } });
    await remove(name);
    await create(name);
    const res = await send(server.port, { method: 'GET', path: devPath(`${name}()`) });
    assert.deepEqual(res.json().value, []);
  });

  test('invalid names → 400 InvalidResourceName; the edges of the rule are accepted', async () => {
    const invalid = [
      'ab',
      'a'.repeat(64),
      '1abc',
      'ab-c',
      'ab_c',
      'ab c',
      'tables',
      'Tables',
      'TABLES',
      'abc\u00e9',
      '',
    ];
    for (const name of invalid) {
      assertError(await create(name), 400, 'InvalidResourceName');
    }
    for (const name of ['abc', `Z${'9'.repeat(62)}`]) {
      const res = await create(name);
      assert.equal(res.status, 201, `${name}: ${describeResponse(res)}`);
    }
  });

  test('create with a malformed or incomplete body → 400', async () => {
    for (const body of ['{"TableName":', '{}', '{"TableName":5}', '[]', 'TableName=abc']) {
      const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body });
      assert.equal(res.status, 400, `${body}: ${describeResponse(res)}`);
    }
  });

  describe('listing', () => {
    const prefix = uniqueTableName('L');
    // Ordinal order would be B…, C…, a…, d…; case-insensitive order is a…, B…, C…, d….
    const suffixes = ['Bravo', 'dEcho', 'Charlie', 'alpha', 'Delta2'];
    const all = suffixes.map((s) => prefix + s);
    const inPrefix = filterParam(`TableName ge '${prefix}' and TableName lt '${prefix}~'`);

    before(async () => {
      for (const name of all) assert.equal((await create(name)).status, 201);
    });

    test('tables come back ordered case-insensitively', async () => {
      const res = await query(inPrefix);
      assert.equal(res.status, 200, describeResponse(res));
      const expected = [...all].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
      assert.deepEqual(names(res), expected);
      assert.equal(res.headers['x-ms-continuation-nexttablename'], undefined);
    });

    test('$top pages with x-ms-continuation-NextTableName, absent on the last page', async () => {
      const seen: string[] = [];
      let token: string | undefined;
      const pageSizes: number[] = [];
      do {
        const res = await query(`${inPrefix}&$top=2${token ? `&NextTableName=${encodeURIComponent(token)}` : ''}`);
        assert.equal(res.status, 200, describeResponse(res));
        pageSizes.push(names(res).length);
        seen.push(...names(res));
        token = res.headers['x-ms-continuation-nexttablename'] as string | undefined;
        assert.ok(token === undefined || token.length > 0, 'continuation header must never be empty');
      } while (token !== undefined && pageSizes.length < 10);
      assert.deepEqual(pageSizes, [2, 2, 1]);
      assert.deepEqual(new Set(seen), new Set(all));
      assert.equal(seen.length, all.length);
    });

    test('SDK listTables().byPage({ maxPageSize }) walks every page', async () => {
      const pages: string[][] = [];
      const iterator = serviceClient(server)
        .listTables({ queryOptions: { filter: `TableName ge '${prefix}' and TableName lt '${prefix}~'` } })
        .byPage({ maxPageSize: 2 });
      for await (const page of iterator) pages.push(page.map((t) => t.name!));
      assert.deepEqual(
        pages.map((p) => p.length),
        [2, 2, 1],
      );
      assert.deepEqual(pages.flat().sort(), [...all].sort());
    });

    test('$filter on TableName: eq, ne, gt, ge, lt, le, and, or', async () => {
      const [bravo, dEcho, charlie, alpha] = all as [string, string, string, string, string];
      const cases: Array<[string, string[]]> = [
        [`TableName eq '${charlie}'`, [charlie]],
        [`TableName eq '${charlie.toLowerCase()}'`, []],
        [
          `TableName ge '${prefix}' and TableName lt '${prefix}~' and TableName ne '${charlie}'`,
          all.filter((n) => n !== charlie),
        ],
        [`TableName gt '${bravo}' and TableName le '${charlie}'`, [charlie]],
        [`TableName ge '${bravo}' and TableName lt '${charlie}'`, [bravo]],
        [`TableName eq '${alpha}' or TableName eq '${dEcho}'`, [alpha, dEcho]],
        [`(TableName eq '${alpha}' or TableName eq '${dEcho}') and TableName ne '${alpha}'`, [dEcho]],
      ];
      for (const [filter, expected] of cases) {
        const res = await query(filterParam(filter));
        assert.equal(res.status, 200, `${filter}: ${describeResponse(res)}`);
        assert.deepEqual(new Set(names(res)), new Set(expected), filter);
      }
    });

    test('three metadata levels on Query Tables', async () => {
      const filter = filterParam(`TableName eq '${all[0]}'`);
      const none = await send(server.port, {
        method: 'GET',
        path: devPath(`Tables?${filter}`),
        headers: { Accept: 'application/json;odata=nometadata' },
      });
      assert.deepEqual(none.json(), { value: [{ TableName: all[0] }] });
      const full = await query(`${filter}&$format=${encodeURIComponent('application/json;odata=fullmetadata')}`);
      const entry = full.json().value[0];
      assert.equal(entry.TableName, all[0]);
      assert.equal(entry['odata.type'], 'devstoreaccount1.Tables');
      assert.ok(String(entry['odata.id']).endsWith(`Tables('${all[0]}')`));
      assert.equal(entry['odata.editLink'], `Tables('${all[0]}')`);
    });
  });
});
