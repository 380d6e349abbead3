import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { clockSkewMs } from '../../src/limits.js';
import { devAccountKey, devAccountName, type Account } from '../../src/http/accounts.js';
import {
  canonicalizedResource,
  sharedKeyLiteStringToSign,
  sharedKeyStringToSign,
  sign,
  verifySharedKey,
  type AuthRequest,
} from '../../src/http/auth.js';

const devKey = Buffer.from(devAccountKey, 'base64');
const otherKey = Buffer.from('b3RoZXIga2V5IGZvciB0ZXN0cw==', 'base64');
const devAccount: Account = { name: devAccountName, keys: [devKey] };

type Headers = Record<string, string>;

/** A request as a server sees it: `GET /path?query` plus headers, the clock a minute after the date. */
function requestFrom(requestLine: string, headers: Headers, overrides: Partial<AuthRequest> = {}): AuthRequest {
  const [method = '', target = ''] = requestLine.split(' ');
  const queryStart = target.indexOf('?');
  const rawPath = queryStart === -1 ? target : target.slice(0, queryStart);
  const date = headers['x-ms-date'] ?? headers['date'] ?? '';
  return {
    method,
    rawPath,
    query: new URLSearchParams(queryStart === -1 ? '' : target.slice(queryStart + 1)),
    headers,
    account: devAccount,
    pathStyle: rawPath.startsWith(`/${devAccountName}`),
    now: Date.parse(date) + 60_000,
    ...overrides,
  };
}

function authenticationFailure(pattern: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof StorageError);
    assert.equal(error.code, 'AuthenticationFailed');
    assert.equal(error.status, 403);
    assert.match(error.authDetail ?? '', pattern);
    return true;
  };
}

/** Azure REST: authorize-with-shared-key: Python SDK requests (Shared Key), which send x-ms-date and Date alike. */
const sharedKeyVectors = [
  {
    requestLine: 'POST /devstoreaccount1/Tables',
    contentType: 'application/json;odata=nometadata',
    date: 'Sat, 21 Nov 2026 04:16:14 GMT',
    stringToSign:
      'POST\n\napplication/json;odata=nometadata\nSat, 21 Nov 2026 04:16:14 GMT\n/devstoreaccount1/devstoreaccount1/Tables',
    signature: 'UTsao0jQbKBhHK48pD+r/JizWR3A/jiZygLDtvfaSs4=',
  },
  {
    requestLine: "GET /devstoreaccount1/pytable(PartitionKey='p%27%271',RowKey='r%2F%20x')?$select=s%2Ci",
    contentType: '',
    date: 'Sat, 21 Nov 2026 04:16:16 GMT',
    stringToSign:
      "GET\n\n\nSat, 21 Nov 2026 04:16:16 GMT\n/devstoreaccount1/devstoreaccount1/pytable(PartitionKey='p%27%271',RowKey='r%2F%20x')",
    signature: 'hBUC4UscnvgYhA3iaIWMkWPTtzRTuD2iQsoVcdHEOx4=',
  },
  {
    requestLine: 'GET /devstoreaccount1/pytable?comp=acl',
    contentType: '',
    date: 'Sat, 21 Nov 2026 04:16:17 GMT',
    stringToSign: 'GET\n\n\nSat, 21 Nov 2026 04:16:17 GMT\n/devstoreaccount1/devstoreaccount1/pytable?comp=acl',
    signature: '2rH+n8nKp6ErWbdcH9Ow6ue+rS/mNyYR6dDQQpx/WL8=',
  },
  {
    requestLine: 'GET /devstoreaccount1/?restype=service&comp=properties',
    contentType: '',
    date: 'Sat, 21 Nov 2026 04:16:17 GMT',
    stringToSign: 'GET\n\n\nSat, 21 Nov 2026 04:16:17 GMT\n/devstoreaccount1/devstoreaccount1/?comp=properties',
    signature: 'BiOxv656GZcmxGNE/MUWdbJ2iesoDQzWWFpaYHtbOvc=',
  },
  {
    requestLine: "DELETE /devstoreaccount1/Tables('pytable')",
    contentType: '',
    date: 'Sat, 21 Nov 2026 04:16:17 GMT',
    stringToSign: "DELETE\n\n\nSat, 21 Nov 2026 04:16:17 GMT\n/devstoreaccount1/devstoreaccount1/Tables('pytable')",
    signature: 'DiUwciNdVGvVKY5GgsHPeQlNKH8Haf17y13KJbmmwFU=',
  },
  {
    requestLine: 'POST /devstoreaccount1/$batch',
    contentType: 'multipart/mixed; boundary=batch_2f6764e1-8e67-465b-b75b-e4032a926fca',
    date: 'Sat, 21 Nov 2026 04:16:17 GMT',
    stringToSign:
      'POST\n\nmultipart/mixed; boundary=batch_2f6764e1-8e67-465b-b75b-e4032a926fca\nSat, 21 Nov 2026 04:16:17 GMT\n/devstoreaccount1/devstoreaccount1/$batch',
    signature: 'wPqGZq+dJa/5MzNhyFmCtqCapxEwvlSqN9gkVRYz4ug=',
  },
];

/** Azure REST: authorize-with-shared-key: JS SDK requests (Shared Key Lite), which send x-ms-date only. */
const liteDate = 'Sat, 21 Nov 2026 04:16:36 GMT';
const sharedKeyLiteVectors = [
  {
    requestLines: ['POST /devstoreaccount1/Tables', "GET /devstoreaccount1/Tables?$top=5&$filter=TableName%20eq%20'x'"],
    stringToSign: `${liteDate}\n/devstoreaccount1/devstoreaccount1/Tables`,
    signature: 'B4zzCFPbAJPJak13zemVNqVKVZMIBpBAK8Aypu9YFIg=',
  },
  {
    requestLines: [
      "PATCH /devstoreaccount1/jstable(PartitionKey='p''1',RowKey='r%2F%20x')",
      "PUT /devstoreaccount1/jstable(PartitionKey='p''1',RowKey='r%2F%20x')",
      "DELETE /devstoreaccount1/jstable(PartitionKey='p''1',RowKey='r%2F%20x')",
    ],
    stringToSign: `${liteDate}\n/devstoreaccount1/devstoreaccount1/jstable(PartitionKey='p''1',RowKey='r%2F%20x')`,
    signature: '53lnOL/qJ3gMCIvbLCr4kFtilfUaK2J0hz6JzqlT8Sk=',
  },
  {
    requestLines: ['GET /devstoreaccount1/jstable?comp=acl', 'PUT /devstoreaccount1/jstable?comp=acl'],
    stringToSign: `${liteDate}\n/devstoreaccount1/devstoreaccount1/jstable?comp=acl`,
    signature: 'nI5FutIZVCIw05YZZ6CzJDDAq7DRWvkrBKWZWkijG/4=',
  },
  {
    requestLines: ['GET /devstoreaccount1/?restype=service&comp=properties'],
    stringToSign: `${liteDate}\n/devstoreaccount1/devstoreaccount1/?comp=properties`,
    signature: '7vExwI+ObRaf2jqeBW0OWZK/Xw2hzYDZYz7Jjq0U/Zk=',
  },
];

describe('Shared Key vectors (Azure REST: authorize-with-shared-key)', () => {
  for (const vector of sharedKeyVectors) {
    const request = requestFrom(vector.requestLine, {
      'x-ms-date': vector.date,
      date: vector.date,
      ...(vector.contentType === '' ? {} : { 'content-type': vector.contentType }),
      authorization: `SharedKey ${devAccountName}:${vector.signature}`,
    });

    test(`${vector.requestLine}: string-to-sign and signature`, () => {
      const resource = canonicalizedResource(devAccountName, request.rawPath, request.query.get('comp'));
      const stringToSign = sharedKeyStringToSign({
        method: request.method,
        contentMd5: '',
        contentType: vector.contentType,
        date: vector.date,
        canonicalizedResource: resource,
      });
      assert.equal(stringToSign, vector.stringToSign);
      assert.equal(sign(stringToSign, devKey), vector.signature);
    });

    test(`${vector.requestLine}: verified`, () => verifySharedKey(request));
  }
});

describe('Shared Key Lite vectors (Azure REST: authorize-with-shared-key)', () => {
  for (const vector of sharedKeyLiteVectors) {
    for (const requestLine of vector.requestLines) {
      const request = requestFrom(requestLine, {
        'x-ms-date': liteDate,
        authorization: `SharedKeyLite ${devAccountName}:${vector.signature}`,
      });

      test(`${requestLine}: string-to-sign and signature`, () => {
        const resource = canonicalizedResource(devAccountName, request.rawPath, request.query.get('comp'));
        assert.equal(sharedKeyLiteStringToSign(liteDate, resource), vector.stringToSign);
        assert.equal(sign(vector.stringToSign, devKey), vector.signature);
      });

      test(`${requestLine}: verified`, () => verifySharedKey(request));
    }
  }
});

describe('canonicalizedResource', () => {
  test('an empty path is signed as /', () => {
    assert.equal(canonicalizedResource('acct', '', 'properties'), '/acct/?comp=properties');
    assert.equal(canonicalizedResource('acct', '', null), '/acct/');
  });
});

/** A Shared Key Lite request for `GET /devstoreaccount1/Tables` signed over `signedPath`. */
function liteRequest(key: Buffer, options: { signedPath?: string; date?: string; account?: Account } = {}) {
  const date = options.date ?? liteDate;
  const signedPath = options.signedPath ?? '/devstoreaccount1/Tables';
  const signature = sign(sharedKeyLiteStringToSign(date, `/${devAccountName}${signedPath}`), key);
  return requestFrom(
    'GET /devstoreaccount1/Tables',
    { 'x-ms-date': date, authorization: `SharedKeyLite ${devAccountName}:${signature}` },
    { account: options.account ?? devAccount },
  );
}

describe('verifySharedKey: keys and signatures', () => {
  test('either of two keys is accepted', () => {
    const twoKeys: Account = { name: devAccountName, keys: [otherKey, devKey] };
    verifySharedKey(liteRequest(devKey, { account: twoKeys }));
    verifySharedKey(liteRequest(otherKey, { account: twoKeys }));
  });

  test('a wrong key fails and the detail shows the string-to-sign but not the expected signature', () => {
    const request = liteRequest(otherKey);
    const stringToSign = `${liteDate}\n/devstoreaccount1/devstoreaccount1/Tables`;
    const expected = sign(stringToSign, devKey);
    assert.throws(
      () => verifySharedKey(request),
      (error: unknown) => {
        assert.ok(error instanceof StorageError);
        assert.equal(error.code, 'AuthenticationFailed');
        assert.equal(
          error.authDetail,
          `The MAC signature found in the HTTP request '${sign(stringToSign, otherKey)}' is not the same as ` +
            `any computed signature. Server used following string to sign: '${stringToSign}'.`,
        );
        assert.ok(!error.authDetail?.includes(expected));
        return true;
      },
    );
  });

  test('a non-canonical base64 form of the right signature fails', () => {
    // The 43rd character carries 2 unused bits: flipping its lowest bit decodes to the same bytes.
    const request = liteRequest(devKey);
    const authorization = request.headers['authorization'] as string;
    const last = authorization.at(-2) ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const variant = alphabet[alphabet.indexOf(last) ^ 1] ?? '';
    const nonCanonical = `${authorization.slice(0, -2)}${variant}=`;
    const decoded = (value: string) => Buffer.from(value.split(':')[1] ?? '', 'base64');
    assert.deepEqual(decoded(nonCanonical), decoded(authorization));
    assert.throws(
      () => verifySharedKey({ ...request, headers: { ...request.headers, authorization: nonCanonical } }),
      authenticationFailure(/is not the same as any computed signature/),
    );
  });

  test('a tampered signature fails', () => {
    const request = liteRequest(devKey);
    const authorization = request.headers['authorization'] as string;
    const middle = authorization.length - 20;
    const flipped = authorization[middle] === 'A' ? 'B' : 'A';
    const tampered = `${authorization.slice(0, middle)}${flipped}${authorization.slice(middle + 1)}`;
    assert.throws(
      () => verifySharedKey({ ...request, headers: { ...request.headers, authorization: tampered } }),
      authenticationFailure(/is not the same as any computed signature/),
    );
  });

  test('Shared Key covers the verb; Shared Key Lite does not', () => {
    const [vector] = sharedKeyVectors.slice(2, 3);
    assert.ok(vector);
    const headers = { 'x-ms-date': vector.date, authorization: `SharedKey ${devAccountName}:${vector.signature}` };
    assert.throws(
      () => verifySharedKey(requestFrom('PUT /devstoreaccount1/pytable?comp=acl', headers)),
      authenticationFailure(/^The MAC signature/),
    );
  });

  test('the query enters only through comp', () => {
    const request = liteRequest(devKey);
    verifySharedKey({ ...request, query: new URLSearchParams('$top=1&restype=service&timeout=30') });
    assert.throws(
      () => verifySharedKey({ ...request, query: new URLSearchParams('comp=acl') }),
      authenticationFailure(/\/Tables\?comp=acl'\.$/),
    );
  });
});

describe('verifySharedKey: tolerated paths (Azure REST: authorize-with-shared-key)', () => {
  test('a path-style request signed without its account segment', () => {
    verifySharedKey(liteRequest(devKey, { signedPath: '/Tables' }));
  });

  test('a host-style request signs its path after the account', () => {
    const signature = sign(sharedKeyLiteStringToSign(liteDate, '/devstoreaccount1/Tables'), devKey);
    const headers = { 'x-ms-date': liteDate, authorization: `SharedKeyLite ${devAccountName}:${signature}` };
    verifySharedKey(requestFrom('GET /Tables', headers, { pathStyle: false }));
  });

  test('a host-style request with an empty path signs /', () => {
    const signature = sign(sharedKeyLiteStringToSign(liteDate, '/devstoreaccount1/?comp=properties'), devKey);
    const headers = { 'x-ms-date': liteDate, authorization: `SharedKeyLite ${devAccountName}:${signature}` };
    verifySharedKey(requestFrom('GET ?restype=service&comp=properties', headers, { pathStyle: false }));
  });

  test('a path signed percent-decoded while sent encoded', () => {
    const signedPath = "/devstoreaccount1/t(PartitionKey='p''1',RowKey='r x')";
    const signature = sign(sharedKeyLiteStringToSign(liteDate, `/devstoreaccount1${signedPath}`), devKey);
    const headers = { 'x-ms-date': liteDate, authorization: `SharedKeyLite ${devAccountName}:${signature}` };
    verifySharedKey(requestFrom("GET /devstoreaccount1/t(PartitionKey='p%27%271',RowKey='r%20x')", headers));
  });

  test('a malformed escape only matches the raw path', () => {
    const signature = sign(sharedKeyLiteStringToSign(liteDate, '/devstoreaccount1/devstoreaccount1/t%zz'), devKey);
    const headers = { 'x-ms-date': liteDate, authorization: `SharedKeyLite ${devAccountName}:${signature}` };
    verifySharedKey(requestFrom('GET /devstoreaccount1/t%zz', headers));
  });

  test('the JS SDK signs a secondary path-style segment as sent', () => {
    const signed = '/devstoreaccount1/devstoreaccount1-secondary/?comp=stats';
    const signature = sign(sharedKeyLiteStringToSign(liteDate, signed), devKey);
    const headers = { 'x-ms-date': liteDate, authorization: `SharedKeyLite ${devAccountName}:${signature}` };
    verifySharedKey(requestFrom('GET /devstoreaccount1-secondary/?restype=service&comp=stats', headers));
  });
});

describe('verifySharedKey: dates (Azure REST: authorize-with-shared-key)', () => {
  const signedAt = Date.parse(liteDate);

  test('a date within the allowed skew either way is accepted', () => {
    const request = liteRequest(devKey);
    verifySharedKey({ ...request, now: signedAt + clockSkewMs - 1000 });
    verifySharedKey({ ...request, now: signedAt - clockSkewMs + 1000 });
  });

  test('a date older than the skew fails', () => {
    const request = liteRequest(devKey);
    assert.throws(
      () => verifySharedKey({ ...request, now: signedAt + clockSkewMs + 1000 }),
      authenticationFailure(/^Request date header too old: 'Sat, 21 Nov 2026 04:16:36 GMT'$/),
    );
  });

  test('a date further in the future than the skew fails', () => {
    const request = liteRequest(devKey);
    assert.throws(
      () => verifySharedKey({ ...request, now: signedAt - clockSkewMs - 1000 }),
      authenticationFailure(/too new/),
    );
  });

  test('x-ms-date wins over Date, for both the signature and the skew', () => {
    const request = liteRequest(devKey);
    const headers = { ...request.headers, date: 'Mon, 01 Jan 2001 00:00:00 GMT' };
    verifySharedKey({ ...request, headers });
  });

  test('a signature over Date is rejected when x-ms-date differs', () => {
    const staleDate = 'Sat, 21 Nov 2026 04:10:00 GMT';
    const signature = sign(sharedKeyLiteStringToSign(staleDate, '/devstoreaccount1/devstoreaccount1/Tables'), devKey);
    const headers = {
      'x-ms-date': liteDate,
      date: staleDate,
      authorization: `SharedKeyLite ${devAccountName}:${signature}`,
    };
    assert.throws(
      () => verifySharedKey(requestFrom('GET /devstoreaccount1/Tables', headers)),
      authenticationFailure(/^The MAC signature/),
    );
  });

  test('Date alone is used when there is no x-ms-date', () => {
    const request = liteRequest(devKey);
    const { 'x-ms-date': date = '', ...rest } = request.headers as Headers;
    verifySharedKey({ ...request, headers: { ...rest, date } });
  });

  test('no date header fails', () => {
    const request = liteRequest(devKey);
    const { authorization = '' } = request.headers as Headers;
    assert.throws(
      () => verifySharedKey({ ...request, headers: { authorization } }),
      authenticationFailure(/neither an x-ms-date nor a Date header/),
    );
  });

  test('an unparsable date fails', () => {
    const request = liteRequest(devKey);
    assert.throws(
      () => verifySharedKey({ ...request, headers: { ...request.headers, 'x-ms-date': 'yesterday' } }),
      authenticationFailure(/not an RFC 1123 date/),
    );
  });
});

describe('verifySharedKey: malformed Authorization headers', () => {
  const request = liteRequest(devKey);
  const signature = (request.headers['authorization'] as string).split(':')[1];
  const cases: Array<[string, string | undefined, RegExp]> = [
    ['missing', undefined, /missing/],
    ['an unknown scheme', `Bearer abc.def.ghi`, /not of the form/],
    ['no colon', `SharedKeyLite ${devAccountName}`, /not of the form/],
    ['a lower-case scheme', `sharedkeylite ${devAccountName}:${signature}`, /not of the form/],
    ['another account', `SharedKeyLite otheraccount:${signature}`, /'otheraccount' .* not the account 'devstoreacc/],
    ['a secondary account name', `SharedKeyLite ${devAccountName}-secondary:${signature}`, /not the account/],
    ['a signature that is not base64', `SharedKeyLite ${devAccountName}:not*base64`, /not a base64 HMAC-SHA256/],
    ['a signature of the wrong length', `SharedKeyLite ${devAccountName}:AAAA`, /not a base64 HMAC-SHA256/],
  ];
  for (const [name, authorization, detail] of cases) {
    test(`${name} fails`, () => {
      const { authorization: _, ...rest } = request.headers as Headers;
      const headers = authorization === undefined ? rest : { ...rest, authorization };
      assert.throws(() => verifySharedKey({ ...request, headers }), authenticationFailure(detail));
    });
  }
});
