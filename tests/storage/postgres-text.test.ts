// Values PostgreSQL text cannot hold (U+0000, an unpaired surrogate), handed to the PostgreSQL
// store where the HTTP API does not reach it today: settings values and table-list bounds. The
// store keeps them exactly (settings) or answers as for any bound, instead of failing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { openPostgresStore, postgresUnavailable } from '../helpers/postgres.js';

const account = 'devstoreaccount1';

describe('text PostgreSQL cannot hold, in the PostgreSQL store', { skip: postgresUnavailable() }, () => {
  let store: PostgresStore;
  before(async () => {
    store = await openPostgresStore();
  });
  after(async () => {
    await store?.close();
  });

  test('settings values with U+0000 or unpaired surrogates are kept exactly', async () => {
    await store.createTable(account, 'withacl');
    const values = ['a\u0000b', 'lone \ud800 high', 'lone \udc00 low', '\u0001utf16:looks encoded', '{"plain":1}'];
    for (const value of values) {
      assert.equal(await store.putSettings(account, [{ key: { scope: 'account', name: 'n' }, value }]), 'ok');
      assert.equal(await store.getSetting(account, { scope: 'account', name: 'n' }), value);
      assert.equal(await store.putSettings(account, [{ key: { scope: 'table', table: 'withacl' }, value }]), 'ok');
      assert.equal(await store.getSetting(account, { scope: 'table', table: 'withacl' }), value);
    }
  });

  test('a table-list bound with U+0000 admits the names above its prefix', async () => {
    for (const name of ['abc', 'abcd', 'abd', 'ab']) await store.createTable(account, name);
    const names = (await store.listTables(account, 'abc\u0000', 100)).map((table) => table.name);
    assert.deepEqual(
      names.filter((name) => name.startsWith('ab')),
      ['abcd', 'abd'],
    );
  });
});
