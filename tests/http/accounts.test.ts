import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { devAccountKey, devAccountName, loadAccounts } from '../../src/http/accounts.js';

const key1 = Buffer.from('first key').toString('base64');
const key2 = Buffer.from('second key').toString('base64');

describe('loadAccounts', () => {
  for (const value of [undefined, '', '  ']) {
    test(`${JSON.stringify(value)} gives the development account alone`, () => {
      const accounts = loadAccounts(value);
      assert.deepEqual([...accounts.keys()], [devAccountName]);
      assert.deepEqual(accounts.get(devAccountName)?.keys, [Buffer.from(devAccountKey, 'base64')]);
    });
  }

  test('custom accounts come in addition to the development account (unlike Azurite)', () => {
    const accounts = loadAccounts(`account1:${key1}`);
    assert.deepEqual([...accounts.keys()].sort(), ['account1', devAccountName]);
    assert.deepEqual(accounts.get('account1'), { name: 'account1', keys: [Buffer.from('first key')] });
  });

  test('an entry for the development account replaces its keys', () => {
    const accounts = loadAccounts(`${devAccountName}:${key1}`);
    assert.deepEqual(accounts.get(devAccountName)?.keys, [Buffer.from('first key')]);
  });

  test('one or two keys per account, several accounts', () => {
    const accounts = loadAccounts(`account1:${key1}:${key2};account2:${key2}`);
    assert.deepEqual(accounts.get('account1')?.keys, [Buffer.from('first key'), Buffer.from('second key')]);
    assert.deepEqual(accounts.get('account2')?.keys, [Buffer.from('second key')]);
  });

  test('the development account may be listed explicitly', () => {
    const accounts = loadAccounts(`${devAccountName}:${devAccountKey};account1:${key1}`);
    assert.deepEqual([...accounts.keys()], [devAccountName, 'account1']);
  });

  test("empty entries (a trailing ';'), surrounding blanks and an empty key2 are tolerated, as in Azurite", () => {
    const accounts = loadAccounts(` account1:${key1}; ;account2:${key2}:; `);
    assert.deepEqual([...accounts.keys()], ['account1', 'account2', devAccountName]);
    assert.equal(accounts.get('account2')?.keys.length, 1);
  });

  test('unpadded base64 keys are accepted', () => {
    const unpadded = key1.replace(/=+$/, '');
    assert.deepEqual(loadAccounts(`account1:${unpadded}`).get('account1')?.keys, [Buffer.from('first key')]);
  });

  test("a key that is not standard base64 (Azurite's testing_key) is decoded as Node.js and the SDKs do", () => {
    const keys = loadAccounts(`account1:${key1}:testing_key`).get('account1')?.keys;
    assert.deepEqual(keys, [Buffer.from('first key'), Buffer.from('testing_key', 'base64')]);
  });

  const malformed: Array<[string, string, RegExp]> = [
    ['a name without a key', 'account1', /name:key1 or name:key1:key2/],
    ['three keys', `account1:${key1}:${key2}:${key1}`, /name:key1 or name:key1:key2/],
    ['an empty key1', 'account1::', /key1 of account 'account1' decodes to no bytes/],
    ['a key without base64 digits', 'account1:***', /key1 of account 'account1' decodes to no bytes/],
    ['a key2 too short for a byte', `account1:${key1}:a`, /key2 of account 'account1' decodes to no bytes/],
    ['an upper-case name', `Account1:${key1}`, /account name 'Account1' must be 3-24 lowercase/],
    ['a too short name', `ab:${key1}`, /account name 'ab'/],
    ['an empty name', `:${key1}`, /account name ''/],
    ['a duplicate account', `account1:${key1};account1:${key2}`, /'account1' is listed twice/],
  ];
  for (const [name, value, message] of malformed) {
    test(`${name} is a startup error`, () => {
      assert.throws(
        () => loadAccounts(value),
        (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.match(error.message, /^AZURITE_ACCOUNTS is malformed: /);
          assert.match(error.message, message);
          assert.ok(!error.message.includes(key1), 'keys are never echoed');
          return true;
        },
      );
    });
  }
});
