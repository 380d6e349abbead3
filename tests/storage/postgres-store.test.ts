// What is particular to the PostgreSQL engine, on a real PostgreSQL: UTF-16 key order at the
// edges whatever the database's collation, worst-case keys inside the B-tree entry limit, values
// jsonb cannot hold as they are, and two stores (two processes' views) over one database racing
// conditional writes, batches and table deletion.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../src/domain/edm.js';
import type { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { CommitResult, TableInfo, Write } from '../../src/storage/store.js';
import { createDatabase, dropDatabase, openPostgresStore, postgresUnavailable } from '../helpers/postgres.js';

const account = 'devstoreaccount1';

function put(partitionKey: string, rowKey: string, value: EdmValue = { type: 'Edm.Int32', value: 1 }, condition: Write['condition'] = { kind: 'none' }): Write {
  return { partitionKey, rowKey, condition, action: { kind: 'put', properties: new Map([['v', value]]) } };
}

async function allKeys(store: PostgresStore, table: TableInfo): Promise<[string, string][]> {
  const keys: [string, string][] = [];
  let range = {};
  for (;;) {
    const step = await store.scan(table, range, { conditions: [], limit: 1000 });
    keys.push(...step.entities.map((entity): [string, string] => [entity.partitionKey, entity.rowKey]));
    if (step.next === undefined) return keys;
    range = { lower: step.next };
  }
}

describe('the PostgreSQL store', { skip: postgresUnavailable() }, () => {
  let database: string;
  let first: PostgresStore;
  let second: PostgresStore;
  before(async () => {
    database = await createDatabase();
    first = await openPostgresStore({ url: database });
    second = await openPostgresStore({ url: database });
  });
  after(async () => {
    await Promise.all([first?.close(), second?.close()]);
    if (database !== undefined) await dropDatabase(database);
  });

  async function freshTable(name: string): Promise<TableInfo> {
    assert.equal(await first.createTable(account, name), 'created');
    return { account, name };
  }

  test('keys sort by UTF-16 code units, not by the collation or UTF-8 bytes; 1 KiB keys fit', async () => {
    const table = await freshTable('keyorder');
    const long = 'ᄀ'.repeat(1024); // 3 UTF-8 bytes each: 3 KiB as text, 2 KiB as UTF-16
    const keys = ['', '10', '2', 'B', '_', 'a', 'é', '\ue000', '\uffff', '\u{1f600}', '\u{10ffff}', long];
    assert.ok((await first.commit(table, keys.map((key) => put('p', key)))).ok);
    assert.ok((await first.commit(table, [put(long, long)])).ok);
    const expected = [...keys].sort(); // JavaScript compares UTF-16 code units
    assert.deepEqual(
      (await allKeys(first, table)).map(([partitionKey, rowKey]) => (partitionKey === 'p' ? rowKey : `pk:${rowKey === long}`)),
      [...expected, 'pk:true'],
    );
  });

  test('strings with U+0000 or unpaired surrogates, the Double -0 and large numbers round-trip exactly', async () => {
    const table = await freshTable('escapes');
    const values: EdmValue[] = [
      { type: 'Edm.String', value: 'a\u0000b' },
      { type: 'Edm.String', value: 'lone \ud800 high' },
      { type: 'Edm.String', value: 'lone \udc00 low' },
      { type: 'Edm.String', value: '{"@utf16":"x"}' },
      { type: 'Edm.Double', value: -0 },
      { type: 'Edm.Double', value: 1e308 },
      { type: 'Edm.Double', value: 5e-324 },
      { type: 'Edm.Int64', value: -(2n ** 63n) },
    ];
    assert.ok((await first.commit(table, values.map((value, i) => put('p', String(i), value)))).ok);
    for (const [i, value] of values.entries()) {
      const read = (await second.getEntity(table, 'p', String(i)))!.properties.get('v')!;
      assert.equal(read.type, value.type);
      assert.ok(Object.is(read.value, value.value) || read.value === value.value, `${i}: ${String(read.value)}`);
    }
    // A string condition keeps an escaped string (it may satisfy the condition).
    const step = await first.scan(table, {}, { conditions: [{ kind: 'string', property: 'v', operator: 'gt', value: 'a' }], limit: 100 });
    assert.ok(step.entities.some((entity) => entity.rowKey === '0'));
  });

  test('a failing batch applies nothing and names its write; Timestamps strictly increase, also within one tick', async () => {
    const table = await freshTable('atomic');
    const created = await first.commit(table, [put('p', 'x')]);
    assert.ok(created.ok);
    const failed = await first.commit(table, [put('p', 'a'), put('p', 'b'), put('p', 'x', undefined, { kind: 'absent' })]);
    assert.deepEqual(failed, { ok: false, index: 2, failure: 'exists' });
    assert.equal(await first.getEntity(table, 'p', 'a'), undefined);
    let last = created.timestamp;
    for (let i = 0; i < 20; i++) {
      const store = i % 2 === 0 ? first : second;
      const result = await store.commit(table, [put('p', 'x', { type: 'Edm.Int32', value: i })]);
      assert.ok(result.ok && result.timestamp > last, `rewrite ${i} not later`);
      last = result.timestamp;
    }
  });

  test('two stores race version-conditional writes: exactly one wins each round', async () => {
    const table = await freshTable('race');
    let current = await first.commit(table, [put('p', 'r')]);
    for (let round = 0; round < 10; round++) {
      assert.ok(current.ok);
      const condition = { kind: 'version', timestamp: current.timestamp } as const;
      const results: CommitResult[] = await Promise.all(
        [first, second, first, second].map((store, i) =>
          // Lone writes and batches take different paths: race both.
          store.commit(table, round % 2 === 0 ? [put('p', 'r', { type: 'Edm.Int32', value: i }, condition)] : [put('p', 'r', undefined, condition), put('p', `other${round}-${i}`)]),
        ),
      );
      const winners = results.filter((result) => result.ok);
      assert.equal(winners.length, 1, JSON.stringify(results, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
      for (const result of results) if (!result.ok) assert.equal(result.failure, 'versionMismatch');
      current = winners[0]!;
    }
  });

  test('a table deleted by one store: the other writes nothing into it, its settings go with it', async () => {
    const table = await freshTable('deleted');
    assert.equal(await second.putSettings(account, [{ key: { scope: 'table', table: 'DELETED' }, value: '<acl/>' }]), 'ok');
    assert.equal(await first.getSetting(account, { scope: 'table', table: 'deleted' }), '<acl/>');
    const writes = Array.from({ length: 20 }, (_, i) => second.commit(table, [put('p', String(i))]));
    assert.equal(await first.deleteTable(account, 'Deleted'), true);
    const results = await Promise.all(writes);
    for (const result of results) assert.ok(result.ok || result.failure === 'tableNotFound');
    assert.equal(await second.putSettings(account, [{ key: { scope: 'table', table: 'deleted' }, value: '<acl/>' }]), 'tableNotFound');
    assert.deepEqual(await second.commit(table, [put('p', 'late')]), { ok: false, index: 0, failure: 'tableNotFound' });
    await second.createTable(account, 'deleted');
    assert.deepEqual(await allKeys(first, table), []);
    assert.equal(await first.getSetting(account, { scope: 'table', table: 'deleted' }), undefined);
  });

  test('tables list by lower-cased name; names differing in case are one table', async () => {
    for (const name of ['Zeta', 'alpha', 'Beta']) await first.createTable(account, name);
    assert.equal(await second.createTable(account, 'ALPHA'), 'exists');
    const names = (await second.listTables(account, 'alpha', 3)).map((table) => table.name);
    assert.deepEqual(names, ['alpha', 'atomic', 'Beta']);
  });
});
