// U+0000 in what a request hands the store, on every engine: PostgreSQL text cannot hold it
// (SQLSTATE 22021), so the PostgreSQL engine must encode or route around it, and answer as the
// SQLite engine does: a string property with a NUL is found by a filter whose literal has one, a
// NUL literal on a table without matches finds nothing, and a NUL continuation of the table list
// is an ordinary bound. Raw HTTP, so that the literal reaches the server exactly.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeContinuation } from '../../../src/table/wire/continuation.js';
import { describeResponse, devPath, send } from '../../helpers/http.js';
import { uniqueTableName } from '../../helpers/sdk.js';
import { startServer, storeSetups, type RunningServer } from '../../helpers/server.js';

async function query(server: RunningServer, table: string, filter: string): Promise<string[]> {
  const res = await send(server.port, {
    method: 'GET',
    path: `${devPath(`${table}()`)}?$filter=${encodeURIComponent(filter)}`,
  });
  assert.equal(res.status, 200, `${filter}: ${describeResponse(res)}`);
  return (res.json().value as { RowKey: string }[]).map((entity) => entity.RowKey).sort();
}

for (const setup of storeSetups) {
  describe(`U+0000 in filter literals and continuations (${setup.label})`, () => {
    let server: RunningServer;
    let table: string;
    let empty: string;
    before(async () => {
      server = await startServer({ ...setup.options, args: ['--log-level', 'warn'] });
      table = uniqueTableName('nul');
      empty = uniqueTableName('nulempty');
      for (const name of [table, empty]) {
        const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: name } });
        assert.equal(res.status, 201, describeResponse(res));
      }
      for (const [rowKey, s] of [
        ['nul', 'a\u0000b'],
        ['plain', 'ab'],
        ['prefix', 'a'],
      ] as const) {
        const res = await send(server.port, {
          method: 'POST',
          path: devPath(table),
          body: { PartitionKey: 'p', RowKey: rowKey, s },
        });
        assert.equal(res.status, 201, describeResponse(res));
      }
    });
    after(async () => {
      await server?.stop();
    });

    test('an entity with a NUL in a string property is found by a filter with that literal', async () => {
      assert.deepEqual(await query(server, table, "s eq 'a\u0000b'"), ['nul']);
      assert.deepEqual(await query(server, table, "s ne 'a\u0000b'"), ['plain', 'prefix']);
      assert.deepEqual(await query(server, table, "s gt 'a\u0000'"), ['nul', 'plain']);
      assert.deepEqual(await query(server, table, "s lt 'a\u0000c'"), ['nul', 'prefix']);
      assert.deepEqual(await query(server, table, "s lt 'ab'"), ['nul', 'prefix']);
      assert.deepEqual(await query(server, table, "PartitionKey eq 'p' and s eq 'a\u0000b'"), ['nul']);
    });

    test('a NUL literal on a table without matches answers 200 with nothing', async () => {
      assert.deepEqual(await query(server, empty, "s eq 'a\u0000b'"), []);
    });

    test('a NextTableName with a NUL, and a TableName filter with one, are bounds like any other', async () => {
      const token = encodeURIComponent(encodeContinuation(`${table}\u0000`));
      const res = await send(server.port, { method: 'GET', path: `${devPath('Tables')}?NextTableName=${token}` });
      assert.equal(res.status, 200, describeResponse(res));
      const names = (res.json().value as { TableName: string }[]).map((entry) => entry.TableName);
      assert.ok(!names.includes(table), 'the bound is above the table it extends');
      assert.ok(
        names.every((name) => name.toLowerCase() > table.toLowerCase()),
        names.join(),
      );
      for (const filter of [
        `TableName eq '${table}\u0000'`,
        `TableName ge '${table}\u0000' and TableName le '${table}\u0000x'`,
      ]) {
        const filtered = await send(server.port, {
          method: 'GET',
          path: `${devPath('Tables')}?$filter=${encodeURIComponent(filter)}`,
        });
        assert.equal(filtered.status, 200, describeResponse(filtered));
        assert.deepEqual(filtered.json().value, []);
      }
    });
  });
}
