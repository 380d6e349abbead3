// Durability across close and reopen (StoreUnderTest.reopen), for engines that keep data: every
// acknowledged table, entity, version and setting is there again, and versions keep increasing.
import assert from 'node:assert/strict';
import type { ConformanceCase } from '../suite.js';
import { commitOk, del, edm, props, put } from '../support.js';
import { assertSameSnapshot, snapshot } from './seed.js';

export const durabilityCases: readonly ConformanceCase[] = [
  {
    name: 'after reopening: every acknowledged table, entity, version and setting, and later versions',
    async run(context) {
      const t = await context.table();
      const doomed = await context.table();
      const { store } = context;
      await commitOk(
        store,
        t,
        Array.from({ length: 30 }, (_, i) =>
          put('p', `r${i}`, props({ i: edm.int64(BigInt(i) - 15n), d: edm.double(i / 3) })),
        ),
      );
      const last = await commitOk(store, t, [del('p', 'r0')]);
      await store.putSettings(t.account, [{ key: { scope: 'table', table: t.name }, value: '[acl]' }]);
      await store.putSettings(t.account, [{ key: { scope: 'account', name: 'cors' }, value: '<Cors/>' }]);
      await store.deleteTable(doomed.account, doomed.name);
      const before = await snapshot(store, t);

      const reopened = await context.reopen();
      assert.deepEqual(await reopened.getTable(t.account, t.name.toUpperCase()), t);
      assert.equal(await reopened.getTable(doomed.account, doomed.name), undefined, 'a deleted table stays deleted');
      assertSameSnapshot(await snapshot(reopened, t), before, 'entities after reopening');
      assert.equal(await reopened.getSetting(t.account, { scope: 'table', table: t.name }), '[acl]');
      assert.equal(await reopened.getSetting(t.account, { scope: 'account', name: 'cors' }), '<Cors/>');
      const next = await commitOk(reopened, t, [put('p', 'r1')]);
      assert.ok(next > last, `the clock resumes after the last version: ${next} > ${last}`);
    },
  },
];
