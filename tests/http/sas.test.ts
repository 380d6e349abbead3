import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import { devAccountKey, devAccountName, type Account } from '../../src/http/accounts.js';
import { sign } from '../../src/http/auth.js';
import {
  accountSasStringToSign,
  authorizeSas,
  keyInRange,
  parseSasParams,
  sasNeeds,
  serviceSasStringToSign,
  verifySas,
  type SasContext,
  type SasGrant,
  type AccountPermission,
  type ResourceType,
  type SasParams,
  type StoredPolicy,
  type TablePermission,
} from '../../src/http/sas.js';

const devKey = Buffer.from(devAccountKey, 'base64');
const otherKey = Buffer.from('b3RoZXIga2V5IGZvciB0ZXN0cw==', 'base64');
const devAccount: Account = { name: devAccountName, keys: [devKey] };
const signedAt = Date.parse('2026-11-21T04:16:36Z');
const minute = 60_000;

function context(overrides: Partial<SasContext> = {}): SasContext {
  return {
    account: devAccount,
    resourceName: undefined,
    clientIp: '127.0.0.1',
    https: false,
    now: signedAt,
    lookupPolicy: () => undefined,
    ...overrides,
  };
}

/** A raw query string carrying `params` and their signature, as an SDK would build it. */
function token(params: SasParams, key = devKey): string {
  const stringToSign =
    params.tn === undefined
      ? accountSasStringToSign(params, devAccountName)
      : serviceSasStringToSign(params, devAccountName);
  const present = Object.entries({ ...params, sig: sign(stringToSign, key) }).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return present.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
}

const serviceParams: SasParams = { sv: '2019-02-02', tn: 'Orders', sp: 'raud', se: '2031-01-01T00:00:00Z' };
const accountParams: SasParams = { sv: '2019-02-02', ss: 't', srt: 'sco', sp: 'rwdlacup', se: '2031-01-01T00:00:00Z' };

async function rejects(promise: Promise<unknown>, code: ErrorCode, detail?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof StorageError, String(error));
    assert.equal(error.code, code);
    if (detail !== undefined) assert.match(error.authDetail ?? error.message, detail);
    return true;
  });
}

function throwsCode(action: () => void, code: ErrorCode): void {
  assert.throws(action, (error: unknown) => error instanceof StorageError && error.code === code);
}

describe('service SAS vectors (Azure REST: create-service-sas)', () => {
  const vectors = [
    {
      name: 'Python',
      query:
        'se=2031-01-01T00%3A00%3A00Z&sp=ra&sv=2019-02-02&tn=PyTable&spk=a&epk=z&sig=Qq1nytgryYvOkjYTuOpMb4VoHZfqRZoiHnbWdA2fq5o%3D',
      stringToSign: 'ra\n\n2031-01-01T00:00:00Z\n/table/devstoreaccount1/pytable\n\n\n\n2019-02-02\na\n\nz\n',
      signature: 'Qq1nytgryYvOkjYTuOpMb4VoHZfqRZoiHnbWdA2fq5o=',
      grant: {
        kind: 'service',
        table: 'PyTable',
        permissions: new Set(['r', 'a']),
        keyRange: { lower: { partitionKey: 'a', inclusive: true }, upper: { partitionKey: 'z', inclusive: true } },
      },
    },
    {
      name: 'JS',
      query:
        'sv=2019-02-02&se=2031-01-01T00%3A00%3A00Z&sp=ra&sig=PzXcCsCxb%2FDkoaT2AGNYjOQeLOj7pYkN24LyHqewalg%3D&tn=JsTable',
      stringToSign: 'ra\n\n2031-01-01T00:00:00Z\n/table/devstoreaccount1/jstable\n\n\n\n2019-02-02\n\n\n\n',
      signature: 'PzXcCsCxb/DkoaT2AGNYjOQeLOj7pYkN24LyHqewalg=',
      grant: { kind: 'service', table: 'JsTable', permissions: new Set(['r', 'a']), keyRange: {} },
    },
  ];
  for (const vector of vectors) {
    test(`${vector.name}: string-to-sign and signature`, () => {
      const params = parseSasParams(vector.query);
      assert.equal(params.sig, vector.signature);
      assert.equal(serviceSasStringToSign(params, devAccountName), vector.stringToSign);
      assert.equal(sign(vector.stringToSign, devKey), vector.signature);
    });

    test(`${vector.name}: verified, on its table in any case`, async () => {
      const tableName = vector.grant.table.toUpperCase();
      assert.deepEqual(await verifySas(vector.query, context({ resourceName: tableName })), vector.grant);
    });
  }
});

describe('account SAS vectors (Azure REST: create-account-sas)', () => {
  const vectors = [
    {
      name: 'JS',
      query:
        'sv=2019-02-02&ss=t&srt=sco&se=2031-01-01T00%3A00%3A00Z&sp=rwl&sig=C%2Fn8MoEWBZecAWTVgOtCXoZr4lkzUJE6fkIEIhKB6rs%3D',
      stringToSign: 'devstoreaccount1\nrwl\nt\nsco\n\n2031-01-01T00:00:00Z\n\n\n2019-02-02\n',
      signature: 'C/n8MoEWBZecAWTVgOtCXoZr4lkzUJE6fkIEIhKB6rs=',
      resourceTypes: ['s', 'c', 'o'],
    },
    {
      name: 'Python',
      query:
        'se=2031-01-01T00%3A00%3A00Z&sp=rwl&sv=2019-02-02&ss=t&srt=so&sig=JZWQO/BDgQVyV361qBfn/yuHo2Es6EfG4Gm%2BWPb5tBo%3D',
      stringToSign: 'devstoreaccount1\nrwl\nt\nso\n\n2031-01-01T00:00:00Z\n\n\n2019-02-02\n',
      signature: 'JZWQO/BDgQVyV361qBfn/yuHo2Es6EfG4Gm+WPb5tBo=',
      resourceTypes: ['s', 'o'],
    },
  ];
  for (const vector of vectors) {
    test(`${vector.name}: string-to-sign and signature`, () => {
      const params = parseSasParams(vector.query);
      assert.equal(params.sig, vector.signature);
      assert.equal(accountSasStringToSign(params, devAccountName), vector.stringToSign);
      assert.equal(sign(vector.stringToSign, devKey), vector.signature);
    });

    test(`${vector.name}: verified`, async () => {
      assert.deepEqual(await verifySas(vector.query, context({ resourceName: 'anytable' })), {
        kind: 'account',
        resourceTypes: new Set(vector.resourceTypes),
        permissions: new Set(['r', 'w', 'l']),
      });
    });
  }

  test('a literal + in a raw sig is kept, not read as a space', async () => {
    const raw =
      'se=2031-01-01T00%3A00%3A00Z&sp=rwl&sv=2019-02-02&ss=t&srt=so&sig=JZWQO/BDgQVyV361qBfn/yuHo2Es6EfG4Gm+WPb5tBo=';
    assert.equal((await verifySas(raw, context()))?.kind, 'account');
  });
});

describe('string-to-sign versions', () => {
  const base = { sp: 'r', se: '2031-01-01', tn: 'T1', sip: '1.2.3.4', spr: 'https', si: 'id', spk: 'a' };
  test('service SAS before 2015-04-05 has no sip/spr; before 2015-02-21 no /table prefix', () => {
    assert.equal(
      serviceSasStringToSign({ ...base, sv: '2015-02-21' }, 'acct'),
      'r\n\n2031-01-01\n/table/acct/t1\nid\n2015-02-21\na\n\n\n',
    );
    assert.equal(
      serviceSasStringToSign({ ...base, sv: '2013-08-15' }, 'acct'),
      'r\n\n2031-01-01\n/acct/t1\nid\n2013-08-15\na\n\n\n',
    );
    assert.equal(
      serviceSasStringToSign({ ...base, sv: '2015-04-05' }, 'acct'),
      'r\n\n2031-01-01\n/table/acct/t1\nid\n1.2.3.4\nhttps\n2015-04-05\na\n\n\n',
    );
  });

  test('account SAS from 2020-12-06 signs the encryption scope after sv', () => {
    const params = { sp: 'r', ss: 't', srt: 'o', se: '2031-01-01', ses: 'scope' };
    const withScope = accountSasStringToSign({ ...params, sv: '2020-12-06' }, 'acct');
    assert.equal(withScope, 'acct\nr\nt\no\n\n2031-01-01\n\n\n2020-12-06\nscope\n');
    const withoutScope = accountSasStringToSign({ ...params, sv: '2020-10-02' }, 'acct');
    assert.equal(withoutScope, 'acct\nr\nt\no\n\n2031-01-01\n\n\n2020-10-02\n');
  });
});

describe('verifySas: signatures and shape', () => {
  test('no sig means no SAS', async () => {
    assert.equal(await verifySas('', context()), undefined);
    assert.equal(await verifySas('tn=Orders&sp=r&$top=5', context()), undefined);
  });

  test('either account key', async () => {
    const twoKeys: Account = { name: devAccountName, keys: [devKey, otherKey] };
    assert.equal((await verifySas(token(serviceParams, otherKey), context({ account: twoKeys })))?.kind, 'service');
    await rejects(
      verifySas(token(serviceParams, otherKey), context()),
      'AuthenticationFailed',
      /^Signature did not match/,
    );
  });

  test('a tampered signature or a changed field fails with the string-to-sign', async () => {
    const query = token(serviceParams);
    const tamperedSig = query.replace(/sig=(.)/, (_, first: string) => `sig=${first === 'A' ? 'B' : 'A'}`);
    await rejects(verifySas(tamperedSig, context()), 'AuthenticationFailed');
    await rejects(
      verifySas(query.replace('se=2031', 'se=2032'), context()),
      'AuthenticationFailed',
      /String to sign used was raud\n\n2032-01-01T00:00:00Z\n\/table\/devstoreaccount1\/orders\n/,
    );
    await rejects(verifySas(query.replace('sig=', 'sig=x'), context()), 'AuthenticationFailed');
  });

  test('a token for another account fails', async () => {
    const other: Account = { name: 'otheraccount', keys: [devKey] };
    await rejects(verifySas(token(accountParams), context({ account: other })), 'AuthenticationFailed');
  });

  const malformed: Array<[string, string, RegExp]> = [
    ['neither tn nor ss/srt', 'sv=2019-02-02&sp=r&se=2031-01-01&sig=abc', /neither tn/],
    ['a service SAS without sv', token({ ...serviceParams, sv: undefined }), /no sv/],
    ['an account SAS without se', token({ ...accountParams, se: undefined }), /no se/],
    ['a service SAS without se', token({ ...serviceParams, se: undefined }), /no expiry/],
    ['a service SAS without sp', token({ ...serviceParams, sp: undefined }), /no permissions/],
    ['a malformed se', token({ ...serviceParams, se: 'next year' }), /se 'next year' is not an ISO 8601/],
    ['a malformed sip', token({ ...serviceParams, sip: '1.2.3' }), /sip '1.2.3'/],
    ['a bad percent escape', `${token(serviceParams)}&spk=%zz`, /spk is not validly percent-encoded/],
  ];
  for (const [name, query, detail] of malformed) {
    test(`${name} fails authentication`, () => rejects(verifySas(query, context()), 'AuthenticationFailed', detail));
  }

  test('srk without spk (the JS SDK omits an empty spk it signed) bounds the empty partition key', async () => {
    const grant = await verifySas(token({ ...serviceParams, srk: 'r', erk: 's' }), context());
    assert.ok(grant?.kind === 'service');
    assert.deepEqual(grant.keyRange, {
      lower: { partitionKey: '', rowKey: 'r', inclusive: true },
      upper: { partitionKey: '', rowKey: 's', inclusive: true },
    });
  });

  test('a SAS parameter given twice is refused; other parameters may repeat', () => {
    assert.deepEqual(parseSasParams('sp=r&x=1&x=2&tn'), { sp: 'r', tn: '' });
    assert.throws(
      () => parseSasParams('sp=r&sp=w'),
      (error: StorageError) => error.code === 'AuthenticationFailed',
    );
    assert.throws(
      () => parseSasParams('sig=a&tn=t&sig=b'),
      (error: StorageError) => error.code === 'AuthenticationFailed',
    );
  });
});

describe('verifySas: time window', () => {
  const window = { ...serviceParams, st: '2026-11-21T04:00:00Z', se: '2026-11-21T05:00:00Z' };

  test('inside the window is accepted, to its edges; a second outside it is not (no clock skew allowance)', async () => {
    for (const now of [Date.parse(window.st), Date.parse(window.se)]) {
      assert.equal((await verifySas(token(window), context({ now })))?.kind, 'service');
    }
    for (const now of [Date.parse(window.st) - 1000, Date.parse(window.se) + 1000]) {
      await rejects(verifySas(token(window), context({ now })), 'AuthenticationFailed');
    }
  });

  test('expired, with a start, is AuthenticationFailed and names start, expiry and now', () =>
    rejects(
      verifySas(token(window), context({ now: Date.parse(window.se) + 10 * minute })),
      'AuthenticationFailed',
      new RegExp(
        '^Signature not valid in the specified time frame: Start \\[Sat, 21 Nov 2026 04:00:00 GMT\\] - ' +
          'Expiry \\[Sat, 21 Nov 2026 05:00:00 GMT\\] - Current \\[Sat, 21 Nov 2026 05:10:00 GMT\\]$',
      ),
    ));

  test('not yet valid is AuthenticationFailed', () =>
    rejects(
      verifySas(token(window), context({ now: Date.parse(window.st) - 10 * minute })),
      'AuthenticationFailed',
      /^Signature not valid in the specified time frame: Start \[Sat, 21 Nov 2026 04:00:00 GMT\]/,
    ));

  test('expired, without a start: the service compares expiry with now as the start', () =>
    rejects(
      verifySas(token({ ...accountParams, se: '2026-01-01' }), context({ now: Date.parse('2026-01-01T00:00:07Z') })),
      'AuthenticationFailed',
      /^Signed expiry time \[Thu, 01 Jan 2026 00:00:00 GMT\] must be after signed start time \[Thu, 01 Jan 2026 00:00:07 GMT\]$/,
    ));

  test('all accepted time forms', async () => {
    for (const se of ['2031-01-01', '2031-01-01T00:00Z', '2031-01-01T00:00:00Z', '2031-01-01T00:00:00.1234567Z']) {
      assert.equal((await verifySas(token({ ...serviceParams, se }), context()))?.kind, 'service', se);
    }
  });
});

describe('verifySas: protocol and source IP', () => {
  test('spr=https over HTTP fails; over HTTPS, or https,http over HTTP, passes', async () => {
    await rejects(verifySas(token({ ...serviceParams, spr: 'https' }), context()), 'AuthorizationProtocolMismatch');
    assert.ok(await verifySas(token({ ...serviceParams, spr: 'https' }), context({ https: true })));
    assert.ok(await verifySas(token({ ...serviceParams, spr: 'https,http' }), context()));
    await rejects(verifySas(token({ ...accountParams, spr: 'https' }), context()), 'AuthorizationProtocolMismatch');
  });

  test('sip as an address or an inclusive range', async () => {
    const accepted: Array<[string, string]> = [
      ['127.0.0.1', '127.0.0.1'],
      ['127.0.0.1', '::ffff:127.0.0.1'],
      ['127.0.0.1', '::1'],
      ['10.0.0.1-10.0.1.0', '10.0.0.255'],
      ['10.0.0.1-10.0.1.0', '10.0.1.0'],
    ];
    for (const [sip, clientIp] of accepted) {
      assert.ok(await verifySas(token({ ...serviceParams, sip }), context({ clientIp })), `${sip} ${clientIp}`);
    }
    const rejected: Array<[string, string]> = [
      ['127.0.0.1', '127.0.0.2'],
      ['10.0.0.1-10.0.1.0', '10.0.1.1'],
      ['10.0.0.1-10.0.1.0', 'fe80::1'],
    ];
    for (const [sip, clientIp] of rejected) {
      await rejects(
        verifySas(token({ ...serviceParams, sip }), context({ clientIp })),
        'AuthorizationSourceIPMismatch',
        new RegExp(`source IP ${clientIp.replace(/\./g, '\\.')}\\.$`),
      );
    }
    await rejects(verifySas(token({ ...accountParams, sip: '1.1.1.1' }), context()), 'AuthorizationSourceIPMismatch');
  });
});

describe('verifySas: service and table', () => {
  test('a service SAS for another table fails', () =>
    rejects(verifySas(token(serviceParams), context({ resourceName: 'Customers' })), 'AuthorizationFailure', /'Orders'/));

  test('an account SAS without the table service fails', () =>
    rejects(verifySas(token({ ...accountParams, ss: 'bq' }), context()), 'AuthorizationServiceMismatch'));

  test('unknown permission letters are ignored', async () => {
    const grant = await verifySas(token({ ...serviceParams, sp: 'rwx' }), context());
    assert.deepEqual(grant?.kind === 'service' && grant.permissions, new Set(['r']));
  });
});

describe('verifySas: stored access policies (Azure REST: create-service-sas)', () => {
  const policies = new Map<string, StoredPolicy>([
    [
      'orders/full',
      { start: '2026-01-01T00:00:00.0000000Z', expiry: '2031-01-01T00:00:00.0000000Z', permission: 'ru' },
    ],
    ['orders/expired', { expiry: '2026-01-01T00:00:00.0000000Z', permission: 'r' }],
    ['orders/readonly', { permission: 'r' }],
  ]);
  const seen: Array<[string, string]> = [];
  const lookupPolicy = async (table: string, id: string) => {
    seen.push([table, id]);
    return policies.get(`${table.toLowerCase()}/${id}`);
  };
  const withPolicy = (si: string, extra: SasParams = {}) => token({ sv: '2019-02-02', tn: 'Orders', si, ...extra });

  test('the policy supplies start, expiry and permissions', async () => {
    const grant = await verifySas(withPolicy('full'), context({ lookupPolicy, resourceName: 'orders' }));
    assert.deepEqual(grant?.kind === 'service' && grant.permissions, new Set(['r', 'u']));
    assert.deepEqual(seen.at(-1), ['Orders', 'full']);
  });

  test('the URL may supply what the policy lacks', async () => {
    const grant = await verifySas(withPolicy('readonly', { se: '2031-01-01' }), context({ lookupPolicy }));
    assert.equal(grant?.kind, 'service');
  });

  test('a synchronous lookup works too', async () => {
    const sync = (table: string, id: string) => policies.get(`${table.toLowerCase()}/${id}`);
    assert.ok(await verifySas(withPolicy('full'), context({ lookupPolicy: sync })));
  });

  test('an unknown policy fails', () =>
    rejects(verifySas(withPolicy('nope'), context({ lookupPolicy })), 'AuthorizationFailure', /'nope'/));

  test('an expired policy fails', () =>
    rejects(verifySas(withPolicy('expired'), context({ lookupPolicy })), 'AuthenticationFailed'));

  test('a field in both the URL and the policy is a 400', () =>
    rejects(verifySas(withPolicy('full', { sp: 'r' }), context({ lookupPolicy })), 'InvalidQueryParameterValue'));

  test('without expiry anywhere it fails', () =>
    rejects(verifySas(withPolicy('readonly'), context({ lookupPolicy })), 'AuthenticationFailed', /no expiry/));
});

describe('authorizeSas', () => {
  const service = (sp: string): SasGrant => ({
    kind: 'service',
    table: 'T',
    permissions: new Set([...sp] as TablePermission[]),
    keyRange: {},
  });
  const account = (srt: string, sp: string): SasGrant => ({
    kind: 'account',
    resourceTypes: new Set([...srt] as ResourceType[]),
    permissions: new Set([...sp] as AccountPermission[]),
  });

  test('service SAS permissions per operation', () => {
    authorizeSas(service('r'), sasNeeds.queryEntities);
    authorizeSas(service('a'), sasNeeds.insertEntity);
    authorizeSas(service('au'), sasNeeds.upsertEntity);
    authorizeSas(service('u'), sasNeeds.updateEntity);
    authorizeSas(service('d'), sasNeeds.deleteEntity);
    throwsCode(() => authorizeSas(service('a'), sasNeeds.upsertEntity), 'AuthorizationPermissionMismatch');
    throwsCode(() => authorizeSas(service('r'), sasNeeds.insertEntity), 'AuthorizationPermissionMismatch');
  });

  test('a service SAS can do nothing above its table', () => {
    for (const need of [sasNeeds.createTable, sasNeeds.deleteTable, sasNeeds.queryTables, sasNeeds.getTableAcl]) {
      throwsCode(() => authorizeSas(service('raud'), need), 'AuthorizationPermissionMismatch');
    }
  });

  test('account SAS resource types and permissions', () => {
    authorizeSas(account('s', 'l'), sasNeeds.queryTables);
    authorizeSas(account('c', 'c'), sasNeeds.createTable);
    authorizeSas(account('c', 'w'), sasNeeds.createTable);
    authorizeSas(account('o', 'au'), sasNeeds.upsertEntity);
    authorizeSas(account('s', 'w'), sasNeeds.setServiceProperties);
    throwsCode(() => authorizeSas(account('so', 'rwl'), sasNeeds.createTable), 'AuthorizationResourceTypeMismatch');
    throwsCode(() => authorizeSas(account('o', 'rwl'), sasNeeds.insertEntity), 'AuthorizationPermissionMismatch');
    throwsCode(() => authorizeSas(account('c', 'r'), sasNeeds.createTable), 'AuthorizationPermissionMismatch');
  });
});

describe('keyInRange (Azure REST: create-service-sas)', () => {
  const cases: Array<[string, SasParams, Array<[string, string, boolean]>]> = [
    [
      'spk',
      { spk: 'b' },
      [
        ['a', 'z', false],
        ['b', '', true],
        ['c', 'a', true],
      ],
    ],
    [
      'epk',
      { epk: 'b' },
      [
        ['a', 'z', true],
        ['b', 'zzz', true],
        ['c', '', false],
      ],
    ],
    [
      'spk+srk',
      { spk: 'b', srk: 'm' },
      [
        ['b', 'l', false],
        ['b', 'm', true],
        ['c', 'a', true],
        ['a', 'z', false],
      ],
    ],
    [
      'epk+erk',
      { epk: 'b', erk: 'm' },
      [
        ['b', 'n', false],
        ['b', 'm', true],
        ['a', 'z', true],
        ['c', 'a', false],
      ],
    ],
    ['none', {}, [['', '', true]]],
  ];
  for (const [name, bounds, checks] of cases) {
    test(name, async () => {
      const grant = await verifySas(token({ ...serviceParams, ...bounds }), context());
      assert.ok(grant?.kind === 'service');
      for (const [pk, rk, expected] of checks) {
        assert.equal(keyInRange(grant.keyRange, pk, rk), expected, `${pk}/${rk}`);
      }
    });
  }

  test('exclusive store bounds are honoured too', () => {
    const range = {
      lower: { partitionKey: 'b', rowKey: 'm', inclusive: false },
      upper: { partitionKey: 'c', inclusive: false },
    };
    assert.equal(keyInRange(range, 'b', 'm'), false);
    assert.equal(keyInRange(range, 'b', 'n'), true);
    assert.equal(keyInRange(range, 'c', ''), false);
  });
});
