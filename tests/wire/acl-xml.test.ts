import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import {
  normalizePolicyTime,
  parseSignedIdentifiers,
  writeSignedIdentifiers,
} from '../../src/wire/acl-xml.js';

function refused(text: string, code: ErrorCode): void {
  assert.throws(
    () => parseSignedIdentifiers(text),
    (error: unknown) => error instanceof StorageError && error.code === code,
    text,
  );
}

const wrap = (inner: string) => `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>${inner}</SignedIdentifiers>`;
const identifier = (id: string, policy = '') => `<SignedIdentifier><Id>${id}</Id>${policy}</SignedIdentifier>`;

describe('parseSignedIdentifiers (Azure REST: set-table-acl)', () => {
  test('the documented example', () => {
    const text = wrap(
      identifier(
        'MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=',
        '<AccessPolicy><Start>2013-11-26T08:49:37.0000000Z</Start><Expiry>2013-11-27T08:49:37.0000000Z</Expiry><Permission>raud</Permission></AccessPolicy>',
      ),
    );
    assert.deepEqual(parseSignedIdentifiers(text), [
      {
        id: 'MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=',
        start: '2013-11-26T08:49:37.0000000Z',
        expiry: '2013-11-27T08:49:37.0000000Z',
        permission: 'raud',
      },
    ]);
  });

  test('no policy, an empty one, a partial one; empty bodies and <SignedIdentifiers /> clear', () => {
    const text = wrap(
      identifier('null') +
        identifier('empty', '<AccessPolicy/>') +
        identifier('partial', '<AccessPolicy><Permission>r</Permission><Start></Start></AccessPolicy>'),
    );
    assert.deepEqual(parseSignedIdentifiers(text), [
      { id: 'null' },
      { id: 'empty' },
      { id: 'partial', permission: 'r' },
    ]);
    assert.deepEqual(parseSignedIdentifiers(''), []);
    assert.deepEqual(parseSignedIdentifiers('<SignedIdentifiers />'), []);
  });

  test('five identifiers pass, six fail; a repeated Id fails', () => {
    const ids = (n: number) => wrap(Array.from({ length: n }, (_, i) => identifier(`p${i}`)).join(''));
    assert.equal(parseSignedIdentifiers(ids(5)).length, 5);
    refused(ids(6), 'InvalidXmlDocument');
    refused(wrap(identifier('a') + identifier('a')), 'InvalidXmlDocument');
  });

  test('Id: 64 characters pass; 65, empty or missing fail', () => {
    assert.equal(parseSignedIdentifiers(wrap(identifier('x'.repeat(64))))[0]!.id.length, 64);
    refused(wrap(identifier('x'.repeat(65))), 'InvalidXmlNodeValue');
    refused(wrap(identifier('')), 'InvalidXmlNodeValue');
    refused(wrap('<SignedIdentifier><AccessPolicy/></SignedIdentifier>'), 'MissingRequiredXmlNode');
  });

  test('permissions are r a u d, each once', () => {
    assert.equal(
      parseSignedIdentifiers(wrap(identifier('p', '<AccessPolicy><Permission>dr</Permission></AccessPolicy>')))[0]!
        .permission,
      'dr',
    );
    for (const bad of ['rw', 'rr', 'R', 'l']) {
      refused(
        wrap(identifier('p', `<AccessPolicy><Permission>${bad}</Permission></AccessPolicy>`)),
        'InvalidXmlNodeValue',
      );
    }
  });

  test('a wrong root or malformed XML', () => {
    refused('<SignedIdentifier/>', 'InvalidXmlDocument');
    refused('<SignedIdentifiers>', 'InvalidXmlDocument');
  });
});

describe('normalizePolicyTime', () => {
  const cases: [string, string][] = [
    ['2021-01-01', '2021-01-01T00:00:00.0000000Z'],
    ['2021-01-01T10:20Z', '2021-01-01T10:20:00.0000000Z'],
    ['2021-01-01T10:20:30Z', '2021-01-01T10:20:30.0000000Z'],
    ['2021-07-08T09:10:09.1234567Z', '2021-07-08T09:10:09.1234567Z'],
    ['2021-07-08T09:10:09.5Z', '2021-07-08T09:10:09.5000000Z'],
    ['2021-01-01T01:30:00+02:00', '2020-12-31T23:30:00.0000000Z'],
    ['2021-01-01T23:00:00-01:30', '2021-01-02T00:30:00.0000000Z'],
  ];
  for (const [text, expected] of cases) test(text, () => assert.equal(normalizePolicyTime('Start', text), expected));

  test('impossible or malformed times fail', () => {
    for (const text of [
      '2021-02-30',
      '2021-13-01',
      '2021-01-01T24:00Z',
      '2021-01-01T10:60Z',
      'tomorrow',
      '2021-01-01T10Z',
      '21-01-01',
    ]) {
      assert.throws(
        () => normalizePolicyTime('Expiry', text),
        (error: unknown) => (error as StorageError).code === 'InvalidXmlNodeValue',
        text,
      );
    }
  });
});

describe('writeSignedIdentifiers (Azure REST: get-table-acl)', () => {
  test('the recorded Get Table ACL body, BOM included', () => {
    const body = writeSignedIdentifiers([
      { id: 'null' },
      { id: 'empty' },
      { id: 'partial', permission: 'r' },
      { id: 'full', start: '2021-07-08T09:10:09.0000000Z', expiry: '2021-07-08T09:10:09.0000000Z', permission: 'r' },
    ]);
    assert.equal(
      body,
      '\uFEFF<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>null</Id></SignedIdentifier>' +
        '<SignedIdentifier><Id>empty</Id></SignedIdentifier><SignedIdentifier><Id>partial</Id><AccessPolicy><Permission>r</Permission>' +
        '</AccessPolicy></SignedIdentifier><SignedIdentifier><Id>full</Id><AccessPolicy><Start>2021-07-08T09:10:09.0000000Z</Start>' +
        '<Expiry>2021-07-08T09:10:09.0000000Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>',
    );
    assert.equal(writeSignedIdentifiers([]), '\uFEFF<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers />');
  });

  test('round trip', () => {
    const identifiers = [{ id: 'a&b<c>', start: '2021-01-01T00:00:00.0000000Z', permission: 'ua' }, { id: 'z' }];
    assert.deepEqual(parseSignedIdentifiers(writeSignedIdentifiers(identifiers)), identifiers);
  });
});
