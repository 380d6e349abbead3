// What is particular to the PostgreSQL engine, on a real PostgreSQL: UTF-16 key order at the
// edges whatever the database's collation, worst-case keys inside the B-tree entry limit, values
// jsonb cannot hold as they are, and two stores (two processes' views) over one database racing
// conditional writes, batches and table deletion.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../src/domain/edm.js';
import { encodeMinimalProperties, minimalJsonOf } from '../../src/table/wire/odata.js';
import type { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { CommitResult, TableInfo, Write } from '../../src/storage/table-store.js';
import {
  createDatabase,
  dropDatabase,
  onDatabase,
  openPostgresStore,
  postgresUnavailable,
  twoStoresForSuite,
} from '../helpers/postgres.js';

const account = 'devstoreaccount1';

function put(
  partitionKey: string,
  rowKey: string,
  value: EdmValue = { type: 'Edm.Int32', value: 1 },
  condition: Write['condition'] = { kind: 'none' },
): Write {
  return { partitionKey, rowKey, condition, action: { kind: 'put', properties: new Map([['v', value]]) } };
}

function properties(...entries: [string, EdmValue][]): Map<string, EdmValue> {
  return new Map(entries);
}

function merge(rowKey: string, incoming: Map<string, EdmValue>, condition: Write['condition']): Write {
  return { partitionKey: 'p', rowKey, condition, action: { kind: 'merge', properties: incoming } };
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
  const stores = twoStoresForSuite();
  let first: PostgresStore;
  let second: PostgresStore;
  before(() => ({ first, second } = stores));

  async function freshTable(name: string): Promise<TableInfo> {
    assert.equal(await first.createTable(account, name), 'created');
    return { account, name };
  }

  test('keys sort by UTF-16 code units, not by the collation or UTF-8 bytes; 1 KiB keys fit', async () => {
    const table = await freshTable('keyorder');
    const long = 'ᄀ'.repeat(1024); // 3 UTF-8 bytes each: 3 KiB as text, 2 KiB as UTF-16
    const keys = ['', '10', '2', 'B', '_', 'a', 'é', '\ue000', '\uffff', '\u{1f600}', '\u{10ffff}', long];
    assert.ok(
      (
        await first.commit(
          table,
          keys.map((key) => put('p', key)),
        )
      ).ok,
    );
    assert.ok((await first.commit(table, [put(long, long)])).ok);
    const expected = [...keys].sort(); // JavaScript compares UTF-16 code units
    assert.deepEqual(
      (await allKeys(first, table)).map(([partitionKey, rowKey]) =>
        partitionKey === 'p' ? rowKey : `pk:${rowKey === long}`,
      ),
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
    assert.ok(
      (
        await first.commit(
          table,
          values.map((value, i) => put('p', String(i), value)),
        )
      ).ok,
    );
    for (const [i, value] of values.entries()) {
      const read = (await second.getEntity(table, 'p', String(i)))!.properties.get('v')!;
      assert.equal(read.type, value.type);
      assert.ok(Object.is(read.value, value.value) || read.value === value.value, `${i}: ${String(read.value)}`);
    }
    // A string condition keeps an escaped string (it may satisfy the condition).
    const step = await first.scan(
      table,
      {},
      { conditions: [{ kind: 'string', property: 'v', operator: 'gt', value: 'a' }], limit: 100 },
    );
    assert.ok(step.entities.some((entity) => entity.rowKey === '0'));
  });

  test('a failing batch applies nothing and names its write; Timestamps strictly increase, also within one tick', async () => {
    const table = await freshTable('atomic');
    const created = await first.commit(table, [put('p', 'x')]);
    assert.ok(created.ok);
    const failed = await first.commit(table, [
      put('p', 'a'),
      put('p', 'b'),
      put('p', 'x', undefined, { kind: 'absent' }),
    ]);
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
          store.commit(
            table,
            round % 2 === 0
              ? [put('p', 'r', { type: 'Edm.Int32', value: i }, condition)]
              : [put('p', 'r', undefined, condition), put('p', `other${round}-${i}`)],
          ),
        ),
      );
      const winners = results.filter((result) => result.ok);
      assert.equal(
        winners.length,
        1,
        JSON.stringify(results, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
      );
      for (const result of results) if (!result.ok) assert.equal(result.failure, 'versionMismatch');
      current = winners[0]!;
    }
  });

  test('a table deleted by one store: the other writes nothing into it, its settings go with it', async () => {
    const table = await freshTable('deleted');
    assert.equal(
      await second.putSettings(account, [{ key: { scope: 'table', table: 'DELETED' }, value: '<acl/>' }]),
      'ok',
    );
    assert.equal(await first.getSetting(account, { scope: 'table', table: 'deleted' }), '<acl/>');
    const writes = Array.from({ length: 20 }, (_, i) => second.commit(table, [put('p', String(i))]));
    assert.equal(await first.deleteTable(account, 'Deleted'), true);
    const results = await Promise.all(writes);
    for (const result of results) assert.ok(result.ok || result.failure === 'tableNotFound');
    assert.equal(
      await second.putSettings(account, [{ key: { scope: 'table', table: 'deleted' }, value: '<acl/>' }]),
      'tableNotFound',
    );
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

  test('a lone merge computed in SQL: members replaced and added in order, annotations follow the new type, conditions hold', async () => {
    const table = await freshTable('mergesql');
    const stored = await first.commit(table, [
      {
        partitionKey: 'p',
        rowKey: 'r',
        condition: { kind: 'absent' },
        action: {
          kind: 'put',
          properties: properties(
            ['a', { type: 'Edm.Int64', value: 5n }],
            ['b', { type: 'Edm.String', value: 'x' }],
            ['c', { type: 'Edm.DateTime', value: 1n }],
          ),
        },
      },
    ]);
    assert.ok(stored.ok);
    const incoming = properties(
      ['b', { type: 'Edm.Int32', value: 7 }],
      ['a', { type: 'Edm.String', value: 'y' }],
      ['d', { type: 'Edm.Double', value: -0 }],
      ['e', { type: 'Edm.String', value: 'nul\u0000' }],
    );
    const merged = await second.commit(table, [merge('r', incoming, { kind: 'version', timestamp: stored.timestamp })]);
    assert.ok(merged.ok && merged.timestamp > stored.timestamp);
    assert.equal(await rowHasStoredText(table, 'r'), false, 'the merge ran in SQL (it leaves no stored JSON text)');
    const entity = await first.getEntity(table, 'p', 'r');
    assert.deepEqual(entity?.timestamp, merged.timestamp);
    assert.deepEqual(
      entity?.properties,
      properties(
        ['a', { type: 'Edm.String', value: 'y' }],
        ['b', { type: 'Edm.Int32', value: 7 }],
        ['c', { type: 'Edm.DateTime', value: 1n }],
        ['d', { type: 'Edm.Double', value: -0 }],
        ['e', { type: 'Edm.String', value: 'nul\u0000' }],
      ),
    );
    assert.ok(Object.is(entity!.properties.get('d')!.value, -0));
    // Conditions: a stale version, a missing entity, a missing table.
    assert.deepEqual(
      await first.commit(table, [merge('r', incoming, { kind: 'version', timestamp: stored.timestamp })]),
      { ok: false, index: 0, failure: 'versionMismatch' },
    );
    assert.deepEqual(await first.commit(table, [merge('absent', incoming, { kind: 'present' })]), {
      ok: false,
      index: 0,
      failure: 'notFound',
    });
    assert.deepEqual(
      await first.commit({ account, name: 'nosuchtable' }, [merge('r', incoming, { kind: 'present' })]),
      { ok: false, index: 0, failure: 'tableNotFound' },
    );
  });

  test('a lone merge computed in SQL into an entity of one property (stored without an order member)', async () => {
    const table = await freshTable('mergeorder');
    // It gains the others after it.
    assert.ok((await first.commit(table, [put('p', 'one', { type: 'Edm.Int32', value: 1 })])).ok);
    assert.ok(
      (
        await second.commit(table, [
          merge(
            'one',
            properties(['z', { type: 'Edm.Boolean', value: true }], ['v', { type: 'Edm.Int32', value: 2 }]),
            { kind: 'present' },
          ),
        ])
      ).ok,
    );
    assert.deepEqual(
      [...(await first.getEntity(table, 'p', 'one'))!.properties],
      [
        ['v', { type: 'Edm.Int32', value: 2 }],
        ['z', { type: 'Edm.Boolean', value: true }],
      ],
    );
  });

  test('a lone merge computed in SQL: the entity limits hold after the merge', async () => {
    const table = await freshTable('mergelimits');
    // 252 properties, 1 MiB (a string counts 2 bytes a UTF-16 code unit).
    const wide = new Map(
      Array.from({ length: 250 }, (_, i): [string, EdmValue] => [`p${i}`, { type: 'Edm.Int32', value: i }]),
    );
    assert.ok(
      (
        await first.commit(table, [
          { partitionKey: 'p', rowKey: 'wide', condition: { kind: 'none' }, action: { kind: 'put', properties: wide } },
        ])
      ).ok,
    );
    const three = properties(
      ['x1', { type: 'Edm.Int32', value: 1 }],
      ['x2', { type: 'Edm.Int32', value: 1 }],
      ['x3', { type: 'Edm.Int32', value: 1 }],
    );
    assert.deepEqual(await second.commit(table, [merge('wide', three, { kind: 'present' })]), {
      ok: false,
      index: 0,
      failure: 'tooManyProperties',
    });
    assert.ok(
      (
        await second.commit(table, [
          merge('wide', properties(['x1', { type: 'Edm.Int32', value: 1 }], ['x2', { type: 'Edm.Int32', value: 1 }]), {
            kind: 'present',
          }),
        ])
      ).ok,
    );
    assert.equal((await first.getEntity(table, 'p', 'wide'))!.properties.size, 252);
    const big = properties(['s', { type: 'Edm.String', value: 'a'.repeat(520_000) }]);
    assert.ok(
      (
        await first.commit(table, [
          { partitionKey: 'p', rowKey: 'big', condition: { kind: 'none' }, action: { kind: 'put', properties: big } },
        ])
      ).ok,
    );
    assert.deepEqual(
      await second.commit(table, [
        merge('big', properties(['t', { type: 'Edm.String', value: 'b'.repeat(5_000) }]), { kind: 'present' }),
      ]),
      {
        ok: false,
        index: 0,
        failure: 'entityTooLarge',
      },
    );
    assert.ok(
      (
        await second.commit(table, [
          merge('big', properties(['t', { type: 'Edm.String', value: 'b'.repeat(100) }]), { kind: 'present' }),
        ])
      ).ok,
    );
  });

  test('one call finds the table and reads or commits: the stored name, a missing table, failures', async () => {
    assert.equal(await first.createTable(account, 'MixedCase'), 'created');
    assert.deepEqual(await second.getTableEntity(account, 'mixedcase', 'p', 'r'), {
      table: { account, name: 'MixedCase' },
      entity: undefined,
    });
    const insert = put('p', 'r', { type: 'Edm.Int32', value: 3 }, { kind: 'absent' });
    const committed = await second.commitToTable(account, 'MIXEDCASE', [insert]);
    assert.deepEqual(committed.table, { account, name: 'MixedCase' });
    assert.ok(committed.result.ok);
    const read = await first.getTableEntity(account, 'mixedCASE', 'p', 'r');
    assert.equal(read?.table.name, 'MixedCase');
    assert.equal(read?.entity?.timestamp, committed.result.timestamp);
    assert.deepEqual(read?.entity?.properties, new Map([['v', { type: 'Edm.Int32', value: 3 }]]));
    assert.equal(read?.entity?.json, '{"v":3}');
    const again = await first.commitToTable(account, 'mixedcase', [insert]);
    assert.deepEqual(again, {
      table: { account, name: 'MixedCase' },
      result: { ok: false, index: 0, failure: 'exists' },
    });
    const merged = await first.commitToTable(account, 'mixedcase', [
      {
        partitionKey: 'p',
        rowKey: 'r',
        condition: { kind: 'version', timestamp: committed.result.timestamp },
        action: { kind: 'merge', properties: new Map([['w', { type: 'Edm.Int32', value: 4 }]]) },
      },
    ]);
    assert.equal(merged.table?.name, 'MixedCase');
    assert.ok(merged.result.ok);
    assert.equal(await second.getTableEntity(account, 'missing', 'p', 'r'), undefined);
    assert.deepEqual(await second.commitToTable(account, 'missing', [insert]), {
      table: undefined,
      result: { ok: false, index: 0, failure: 'tableNotFound' },
    });
  });

  test('a database of schema version 1 is migrated in place; its rows, without the stored JSON text, read back the same', async () => {
    const url = await createDatabase();
    try {
      const old = await openPostgresStore({ url });
      const table = { account, name: 'legacy' };
      assert.equal(await old.createTable(account, table.name), 'created');
      const properties = new Map<string, EdmValue>([
        ['n', { type: 'Edm.Int64', value: -5n }],
        ['s', { type: 'Edm.String', value: 'surrogate \ud800 alone' }],
        ['d', { type: 'Edm.Double', value: 2 }],
      ]);
      const written = await old.commit(table, [
        { partitionKey: 'p', rowKey: 'r', condition: { kind: 'none' }, action: { kind: 'put', properties } },
      ]);
      assert.ok(written.ok);
      await old.close();
      // What version 1 left behind: no doc column, no queue or blob tables, schema_version 1.
      await onDatabase(url, async (client) => {
        await client.query('ALTER TABLE cerulean.entities DROP COLUMN doc');
        await client.query('DROP TABLE cerulean.messages, cerulean.queues');
        await client.query(
          'DROP TABLE cerulean.blob_reclaim_candidates, cerulean.blob_staged, cerulean.blob_blocks, ' +
            'cerulean.blob_pages, cerulean.blob_tags, cerulean.blob_chunks, cerulean.blob_contents, ' +
            'cerulean.blobs, cerulean.blob_containers',
        );
        await client.query('DROP FUNCTION cerulean.blob_released(), cerulean.blob_restaged()');
        await client.query('DELETE FROM cerulean.schema_version WHERE version > 1');
      });
      const upgraded = await openPostgresStore({ url });
      try {
        const entity = await upgraded.getEntity(table, 'p', 'r');
        assert.equal(entity?.timestamp, written.timestamp);
        assert.deepEqual(entity?.properties, properties);
        assert.equal(entity?.json, undefined, 'a version 1 row has no stored JSON text to splice');
        const step = await upgraded.scan(table, {}, { conditions: [], limit: 10 });
        assert.deepEqual(
          step.entities.map((scanned) => scanned.properties),
          [properties],
        );
        assert.ok(
          (
            await upgraded.commit(table, [
              { partitionKey: 'p', rowKey: 'r', condition: { kind: 'present' }, action: { kind: 'put', properties } },
            ])
          ).ok,
        );
        const json = (await upgraded.getEntity(table, 'p', 'r'))?.json;
        assert.equal(minimalJsonOf(json ?? ''), encodeMinimalProperties(properties));
      } finally {
        await upgraded.close();
      }
    } finally {
      await dropDatabase(url);
    }
  });

  async function rowHasStoredText(table: TableInfo, rowKey: string): Promise<boolean> {
    return onDatabase(stores.url, async (client) => {
      const { rows } = await client.query<{ has: boolean }>(
        `SELECT e.doc IS NOT NULL AS has FROM cerulean.entities e JOIN cerulean.tables t ON t.id = e.table_id WHERE t.name_lower = $1 AND e.rk = $2`,
        [table.name.toLowerCase(), Buffer.from(rowKey, 'utf16le').swap16()],
      );
      return rows[0]!.has;
    });
  }
});
