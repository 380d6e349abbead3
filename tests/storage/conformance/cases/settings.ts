// Settings (TableStore.getSetting, TableStore.putSetting): account settings per account, table settings
// written only while their table exists and removed with it, case-insensitive like table names,
// and never inherited by a table re-created under the same name.
import assert from 'node:assert/strict';
import type { SettingKey } from '../../../../src/storage/table-store.js';
import type { ConformanceCase } from '../suite.js';

const account = (name: string): SettingKey => ({ scope: 'account', name });
const tableScope = (table: string): SettingKey => ({ scope: 'table', table });

export const settingCases: readonly ConformanceCase[] = [
  {
    name: 'account settings: put, get, replace, remove, each account its own',
    async run({ store, account: fresh }) {
      const [a, b] = [fresh(), fresh()];
      assert.equal(await store.getSetting(a, account('cors')), undefined);
      assert.equal(await store.putSettings(a, [{ key: account('cors'), value: '<Cors/>' }]), 'ok');
      assert.equal(await store.putSettings(a, [{ key: account('logging'), value: '{"x":1}' }]), 'ok');
      assert.equal(await store.getSetting(a, account('cors')), '<Cors/>');
      assert.equal(await store.getSetting(b, account('cors')), undefined, 'another account');
      assert.equal(await store.getSetting(a, account('Cors')), undefined, 'account setting names are exact');
      const large = `{"text":"${'\u{1f600}é'.repeat(20_000)}"}`;
      assert.equal(await store.putSettings(a, [{ key: account('cors'), value: large }]), 'ok');
      assert.equal(await store.getSetting(a, account('cors')), large, 'replaced, large and non-ASCII');
      assert.equal(await store.putSettings(a, [{ key: account('cors'), value: undefined }]), 'ok');
      assert.equal(await store.getSetting(a, account('cors')), undefined, 'removed');
      assert.equal(await store.getSetting(a, account('logging')), '{"x":1}', 'the other setting stays');
      assert.equal(
        await store.putSettings(a, [{ key: account('never'), value: undefined }]),
        'ok',
        'removing what is not there',
      );
      assert.equal(await store.putSettings(a, [{ key: account('empty'), value: '' }]), 'ok');
      assert.equal(await store.getSetting(a, account('empty')), '', 'an empty value is a value');
    },
  },
  {
    name: 'table settings are kept while the table exists, under its name in any case',
    async run({ store, table }) {
      const t = await table();
      assert.equal(await store.getSetting(t.account, tableScope(t.name)), undefined);
      assert.equal(await store.putSettings(t.account, [{ key: tableScope(t.name), value: '[1]' }]), 'ok');
      assert.equal(await store.getSetting(t.account, tableScope(t.name.toUpperCase())), '[1]', 'read in another case');
      assert.equal(await store.putSettings(t.account, [{ key: tableScope(t.name.toUpperCase()), value: '[2]' }]), 'ok');
      assert.equal(await store.getSetting(t.account, tableScope(t.name)), '[2]', 'one setting, whatever the case');
      assert.equal(await store.getSetting(`${t.account}x`, tableScope(t.name)), undefined, 'another account');
      assert.equal(
        await store.getSetting(t.account, account(t.name)),
        undefined,
        'the account scope is another namespace',
      );
      assert.equal(await store.putSettings(t.account, [{ key: tableScope(t.name), value: undefined }]), 'ok');
      assert.equal(await store.getSetting(t.account, tableScope(t.name)), undefined, 'removed');
    },
  },
  {
    name: 'putSetting on a missing table is tableNotFound and writes nothing',
    async run({ store, account: fresh }) {
      const a = fresh();
      assert.equal(await store.putSettings(a, [{ key: tableScope('missing'), value: '[1]' }]), 'tableNotFound');
      assert.equal(await store.putSettings(a, [{ key: tableScope('missing'), value: undefined }]), 'tableNotFound');
      assert.equal(await store.getSetting(a, tableScope('missing')), undefined);
      assert.equal(await store.createTable(a, 'missing'), 'created');
      assert.equal(await store.getSetting(a, tableScope('missing')), undefined, 'nothing was waiting for the table');
    },
  },
  {
    name: "a table's settings go with it; a table re-created under the name does not inherit them",
    async run({ store, table }) {
      const t = await table();
      const other = await table();
      await store.putSettings(t.account, [{ key: account('service'), value: 'kept' }]);
      assert.equal(await store.putSettings(t.account, [{ key: tableScope(t.name), value: '[policies]' }]), 'ok');
      assert.equal(await store.putSettings(other.account, [{ key: tableScope(other.name), value: '[other]' }]), 'ok');
      assert.equal(await store.deleteTable(t.account, t.name.toUpperCase()), true);
      assert.equal(await store.getSetting(t.account, tableScope(t.name)), undefined, 'gone with the table');
      assert.equal(
        await store.putSettings(t.account, [{ key: tableScope(t.name), value: '[late]' }]),
        'tableNotFound',
        'a deleted table takes no setting',
      );
      assert.equal(await store.createTable(t.account, t.name.toLowerCase()), 'created');
      assert.equal(
        await store.getSetting(t.account, tableScope(t.name)),
        undefined,
        'the new table starts without settings',
      );
      assert.equal(await store.getSetting(t.account, account('service')), 'kept', 'account settings stay');
      assert.equal(
        await store.getSetting(other.account, tableScope(other.name)),
        '[other]',
        "other tables' settings stay",
      );
    },
  },
  {
    name: 'a setting written while its table is being deleted never outlives the table',
    async run({ store, table }) {
      // Issued together, the store orders them: a setting written first is deleted with the table,
      // one written after finds no table. Either way nothing of the table remains.
      for (let i = 0; i < 10; i++) {
        const t = await table();
        const [put, deleted] = await Promise.all([
          store.putSettings(t.account, [{ key: tableScope(t.name), value: '[x]' }]),
          store.deleteTable(t.account, t.name),
        ]);
        assert.equal(deleted, true);
        assert.ok(put === 'ok' || put === 'tableNotFound');
        assert.equal(
          await store.getSetting(t.account, tableScope(t.name)),
          undefined,
          `round ${i}: no setting outlives its table`,
        );
      }
    },
  },
];
