// Tables (TableStore.createTable, getTable, deleteTable, listTables): names unique per account in any
// case, kept in the case of creation, listed in lower-cased name order from `fromLower` with a
// limit; deleting a table deletes its entities.
import assert from 'node:assert/strict';
import type { ConformanceCase } from '../suite.js';
import { absent, assertSameProperties, commitOk, edm, props, put, version, walk } from '../support.js';
import { read } from './seed.js';

export const tableCases: readonly ConformanceCase[] = [
  {
    name: 'table names are case-insensitive: creating Abc then ABC reports exists',
    async run({ store, account }) {
      const a = account();
      assert.equal(await store.createTable(a, 'Abc'), 'created');
      assert.equal(await store.createTable(a, 'ABC'), 'exists');
      assert.equal(await store.createTable(a, 'abc'), 'exists');
      assert.equal(await store.createTable(account(), 'abc'), 'created', 'another account has its own names');
      assert.deepEqual(await store.listTables(a, undefined, 10), [{ account: a, name: 'Abc' }], 'one table');
    },
  },
  {
    name: 'getTable in any case returns the name as created',
    async run({ store, account }) {
      const a = account();
      await store.createTable(a, 'MixedCase');
      // The first lookup in another case than the creation's: a cache keyed by the first lookup must not leak its case.
      for (const name of ['mIXEDcASE', 'mixedcase', 'MIXEDCASE', 'MixedCase']) {
        assert.deepEqual(await store.getTable(a, name), { account: a, name: 'MixedCase' }, name);
      }
      assert.equal(await store.getTable(a, 'MixedCases'), undefined);
      assert.equal(await store.getTable(account(), 'MixedCase'), undefined, 'another account');
    },
  },
  {
    name: 'getTableEntity and commitToTable find the table in any case and act as getTable, then getEntity or commit',
    async run({ store, account }) {
      const a = account();
      await store.createTable(a, 'OneCall');
      const table = { account: a, name: 'OneCall' };
      const first = await store.commitToTable(a, 'oNEcALL', [put('p', 'r', props({ n: edm.int32(1) }), absent)]);
      assert.deepEqual(first.table, table, 'the name as created');
      assert.equal(first.result.ok, true);
      const stamp = first.result.ok ? first.result.timestamp : 0n;
      const read = await store.getTableEntity(a, 'ONECALL', 'p', 'r');
      assert.deepEqual(read?.table, table);
      assert.equal(read?.entity?.timestamp, stamp);
      assertSameProperties(read!.entity!.properties, props({ n: edm.int32(1) }), 'the entity written');
      const missingRow = await store.getTableEntity(a, 'onecall', 'p', 'other');
      assert.deepEqual(missingRow, { table, entity: undefined }, 'a table without that entity');
      const failed = await store.commitToTable(a, 'OneCall', [put('p', 'r', props(), absent)]);
      assert.deepEqual(
        failed,
        { table, result: { ok: false, index: 0, failure: 'exists' } },
        'conditions as commit checks them',
      );
      const stale = await store.commitToTable(a, 'OneCall', [put('p', 'r', props(), version(stamp - 1n))]);
      assert.deepEqual(stale.result, { ok: false, index: 0, failure: 'versionMismatch' });
      assert.equal((await store.getEntity(table, 'p', 'r'))?.timestamp, stamp, 'failed writes wrote nothing');
      assert.equal(await store.getTableEntity(a, 'NoSuchTable', 'p', 'r'), undefined);
      assert.equal(await store.getTableEntity(account(), 'OneCall', 'p', 'r'), undefined, 'another account');
      assert.deepEqual(await store.commitToTable(a, 'NoSuchTable', [put('p', 'r')]), {
        table: undefined,
        result: { ok: false, index: 0, failure: 'tableNotFound' },
      });
      assert.equal(await store.deleteTable(a, 'OneCall'), true);
      assert.equal(await store.getTableEntity(a, 'OneCall', 'p', 'r'), undefined, 'a deleted table');
      assert.equal(
        (await store.commitToTable(a, 'OneCall', [put('p', 'r')])).table,
        undefined,
        'a deleted table takes no writes',
      );
    },
  },
  {
    name: 'deleteTable in another case deletes it; deleting again reports false',
    async run({ store, account }) {
      const a = account();
      await store.createTable(a, 'Doomed');
      assert.equal(await store.deleteTable(a, 'dOOMED'), true);
      assert.equal(await store.getTable(a, 'Doomed'), undefined);
      assert.equal(await store.deleteTable(a, 'Doomed'), false);
      assert.equal(await store.createTable(a, 'DOOMED'), 'created', 'the name is free again, in a new case');
      assert.deepEqual(await store.getTable(a, 'doomed'), { account: a, name: 'DOOMED' });
    },
  },
  {
    name: 'listTables orders by lower-cased name, from fromLower inclusive, up to limit',
    async run({ store, account }) {
      const a = account();
      const names = ['Zeta', 'alpha', 'Beta', 'beta2', 'ALPHA3', 't10', 't2', 'T1', 'gamma'];
      for (const name of names) await store.createTable(a, name);
      await store.createTable(account(), 'aaa'); // another account's table never shows
      const ordered = ['alpha', 'ALPHA3', 'Beta', 'beta2', 'gamma', 'T1', 't10', 't2', 'Zeta'];
      const list = async (from: string | undefined, limit: number) =>
        (await store.listTables(a, from, limit)).map((t) => t.name);
      assert.deepEqual(await list(undefined, 100), ordered);
      for (const t of await store.listTables(a, undefined, 100)) assert.equal(t.account, a);
      assert.deepEqual(await list(undefined, 3), ordered.slice(0, 3), 'limit');
      assert.deepEqual(await list('beta', 100), ordered.slice(2), 'fromLower is inclusive');
      assert.deepEqual(await list('beta1', 2), ['beta2', 'gamma'], 'fromLower between names');
      assert.deepEqual(await list('t1', 100), ['T1', 't10', 't2', 'Zeta']);
      assert.deepEqual(await list('zz', 100), [], 'past the last name');
      assert.deepEqual(await list('', 1), ['alpha']);
      // Walking with the next lower-cased name, as Query Tables continues, visits every table once.
      const walked: string[] = [];
      for (let from: string | undefined; ;) {
        const page = await store.listTables(a, from, 3);
        walked.push(...page.slice(0, 2).map((t) => t.name));
        if (page.length < 3) {
          walked.push(...page.slice(2).map((t) => t.name));
          break;
        }
        from = page[2]!.name.toLowerCase();
      }
      assert.deepEqual(walked, ordered);
    },
  },
  {
    name: 'entity operations find a table by its name in any case',
    async run({ store, account }) {
      const a = account();
      await store.createTable(a, 'CasedTable');
      const upper = { account: a, name: 'CASEDTABLE' };
      await commitOk(store, upper, [put('p', 'r', props({ v: edm.int32(1) }))]);
      assert.ok(await read(store, { account: a, name: 'casedtable' }, 'p', 'r'));
      assert.equal((await walk(store, { account: a, name: 'CasedTable' }, {})).entities.length, 1);
    },
  },
  {
    name: 'deleting a table deletes its entities; a table re-created under the name starts empty',
    async run({ store, table }) {
      const t = await table();
      await commitOk(
        store,
        t,
        Array.from({ length: 50 }, (_, i) => put('p', `r${i}`, props({ i: edm.int32(i) }))),
      );
      assert.equal(await store.deleteTable(t.account, t.name), true);
      assert.equal(await store.getEntity(t, 'p', 'r1'), undefined, 'a read of the deleted table');
      const gone = await store.scan(t, {}, { conditions: [], limit: 10 });
      assert.deepEqual([gone.entities, gone.next], [[], undefined], 'a scan of the deleted table');
      assert.deepEqual(await store.commit(t, [put('p', 'r1')]), { ok: false, index: 0, failure: 'tableNotFound' });
      assert.equal(await store.createTable(t.account, t.name), 'created');
      assert.deepEqual((await walk(store, t, {})).entities, [], 'the new table is empty');
      assert.equal(await store.getEntity(t, 'p', 'r1'), undefined);
    },
  },
];
