import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../../src/errors.js';
import { batchOperationsMax } from '../../../src/limits.js';
import {
  type BatchOperationRequest,
  type BatchOperationResponse,
  BatchOperationError,
  parseBatchRequest,
  serializeBatchResponse,
  statusReason,
} from '../../../src/table/wire/batch.js';
import { MultipartSyntaxError } from '../../../src/wire/multipart.js';
import { seededRandom } from '../../../src/domain/random.js';
import { scaled } from '../../helpers/scale.js';

const crlf = (...lines: string[]) => lines.join('\r\n');

// ---------------------------------------------------------------------------------------------
// Request bodies as real clients write them (Azure REST: performing-entity-group-transactions).

/** One JS SDK sub-request part (TablePolicies.ts getNextSubrequestBodyPart): no Content-ID, extra CRLF. */
function jsPart(changeset: string, requestLine: string, headers: string[], body?: string): string {
  const head = [
    `--${changeset}`,
    'content-type: application/http',
    'content-transfer-encoding: binary',
    '',
    requestLine,
  ];
  return crlf(...head, ...headers, '\r\n', ...(body === undefined ? [] : [body]));
}

/** A JS SDK batch (transactionHelpers.ts): parts joined with CRLF, an extra CRLF after the change-set header. */
function jsBatch(batchId: string, changesetId: string, parts: string[]): string {
  const opening = `--batch_${batchId}\r\ncontent-type: multipart/mixed; boundary=changeset_${changesetId}\r\n\r\n`;
  return `${crlf(opening, ...parts)}\r\n--changeset_${changesetId}--\r\n--batch_${batchId}--\r\n`;
}

const jsInsertHeaders = [
  'Content-Type: application/json;odata=nometadata',
  'Accept: application/json;odata=minimalmetadata',
  'DataServiceVersion: 3.0',
  'Prefer: return-no-content',
];

// Azure REST: performing-entity-group-transactions, the recorded JS request with SAS auth.
const jsSasExample = jsBatch(
  'fakeId',
  'fakeId',
  ['1', '2', '3'].map((rowKey) =>
    jsPart(
      'changeset_fakeId',
      'POST https://fakeaccountname.table.core.windows.net/batchTableTestnode HTTP/1.1',
      jsInsertHeaders,
      `{"PartitionKey":"batchTest","RowKey":"${rowKey}","name":"first"}`,
    ),
  ),
);

// Azure REST: performing-entity-group-transactions, the Python capture with mixed operations (elided headers filled in
// as Python writes them).
const pyBatchBoundary = 'batch_2f6764e1-8e67-465b-b75b-e4032a926fca';
const pyChangeset = 'changeset_7a8bba21-4826-450a-a497-5fb907d57c83';
const pyCommonHeaders = [
  'x-ms-version: 2019-02-02',
  'DataServiceVersion: 3.0',
  'Content-Type: application/json;odata=nometadata',
  'Accept: application/json;odata=minimalmetadata',
];
const pyDates = ['x-ms-date: Sat, 21 Nov 2026 04:16:17 GMT', 'Date: Sat, 21 Nov 2026 04:16:17 GMT'];
const pyInsertBody =
  '{"PartitionKey": "p", "PartitionKey@odata.type": "Edm.String", "RowKey": "1", "RowKey@odata.type": "Edm.String", "v": 1}';
const pyPart = (contentId: number, requestLine: string, headers: string[], body: string) =>
  crlf(
    `--${pyChangeset}`,
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    `Content-ID: ${contentId}`,
    '',
    requestLine,
    ...headers,
    '',
    body,
  );
const pythonExample = crlf(
  `--${pyBatchBoundary}`,
  `Content-Type: multipart/mixed; boundary=${pyChangeset}`,
  '',
  pyPart(
    0,
    'POST http://127.0.0.1:18765/devstoreaccount1/pytable HTTP/1.1',
    [
      'x-ms-version: 2019-02-02',
      'DataServiceVersion: 3.0',
      'Prefer: return-no-content',
      'Content-Type: application/json;odata=nometadata',
      'Accept: application/json;odata=minimalmetadata',
      'Content-Length: 120',
      ...pyDates,
    ],
    pyInsertBody,
  ),
  pyPart(
    1,
    "PUT http://127.0.0.1:18765/devstoreaccount1/pytable(PartitionKey='p',RowKey='2') HTTP/1.1",
    [...pyCommonHeaders, 'Content-Length: 22', ...pyDates, 'If-Match: *'],
    '{"PartitionKey": "p", "RowKey": "2", "v": 2}',
  ),
  pyPart(
    2,
    "PATCH http://127.0.0.1:18765/devstoreaccount1/pytable(PartitionKey='p',RowKey='3') HTTP/1.1",
    [...pyCommonHeaders, ...pyDates],
    '{"PartitionKey": "p", "RowKey": "3", "v": 3}',
  ),
  pyPart(
    3,
    "DELETE http://127.0.0.1:18765/devstoreaccount1/pytable(PartitionKey='p',RowKey='4') HTTP/1.1",
    [
      'x-ms-version: 2019-02-02',
      'DataServiceVersion: 3.0',
      'Accept: application/json;odata=minimalmetadata',
      ...pyDates,
      'If-Match: *',
    ],
    '',
  ),
  `--${pyChangeset}--`,
  '',
  `--${pyBatchBoundary}--`,
  '',
);

// Azure REST: performing-entity-group-transactions, a query batch from the docs.
const queryBoundary = 'batch_f351702c-c8c8-48c6-af2c-91b809c651ce';
const queryExample = crlf(
  `--${queryBoundary}`,
  'Content-Type: application/http',
  'Content-Transfer-Encoding: binary',
  '',
  "GET https://myaccount.table.core.windows.net/Blogs(PartitionKey='Channel_19',RowKey='2') HTTP/1.1",
  'Accept: application/json;odata=minimalmetadata',
  '',
  `--${queryBoundary}--`,
  '',
);

const contentTypeFor = (boundary: string) => `multipart/mixed; boundary=${boundary}`;

function parse(body: string, contentType = contentTypeFor('batch_fakeId')): BatchOperationRequest[] {
  return parseBatchRequest(contentType, Buffer.from(body, 'utf8'));
}

/** A one-operation change set with the given part text in place of the operation. */
function changesetWith(...parts: string[]): string {
  return crlf(
    '--batch_fakeId',
    'Content-Type: multipart/mixed; boundary=changeset_fakeId',
    '',
    ...parts.flatMap((part) => ['--changeset_fakeId', part]),
    '--changeset_fakeId--',
    '--batch_fakeId--',
    '',
  );
}

const deletePart = (rowKey: string) =>
  crlf(
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    '',
    `DELETE /devstoreaccount1/t(PartitionKey='p',RowKey='${rowKey}') HTTP/1.1`,
    'If-Match: *',
    '',
  );

function assertInvalidInput(run: () => unknown, expected?: RegExp): StorageError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof StorageError, `expected a StorageError, got ${String(error)}`);
    assert.equal(error.code, 'InvalidInput');
    assert.equal(error.status, 400);
    if (expected !== undefined) assert.match(error.message, expected);
    return error;
  }
  assert.fail('expected StorageError InvalidInput');
}

// ---------------------------------------------------------------------------------------------

describe('parseBatchRequest: real clients', () => {
  test('JS SDK with SAS (Azure REST: performing-entity-group-transactions): no Content-ID, extra CRLFs trimmed', () => {
    const operations = parse(jsSasExample);
    assert.equal(operations.length, 3);
    operations.forEach((operation, index) => {
      assert.equal(operation.method, 'POST');
      assert.equal(operation.url, 'https://fakeaccountname.table.core.windows.net/batchTableTestnode');
      assert.equal(operation.contentId, undefined);
      assert.deepEqual(
        [...operation.headers],
        [
          ['content-type', 'application/json;odata=nometadata'],
          ['accept', 'application/json;odata=minimalmetadata'],
          ['dataserviceversion', '3.0'],
          ['prefer', 'return-no-content'],
        ],
      );
      assert.equal(
        operation.body.toString('utf8'),
        `{"PartitionKey":"batchTest","RowKey":"${index + 1}","name":"first"}`,
      );
    });
  });

  test('JS SDK DELETE and tunnelled MERGE: headers kept as sent, empty body', () => {
    const body = jsBatch('b1', 'c1', [
      jsPart('changeset_c1', "DELETE http://localhost:7777/acct/t(PartitionKey='p',RowKey='1') HTTP/1.1", [
        'Accept: application/json',
        'DataServiceVersion: 3.0',
        'If-Match: *',
      ]),
      jsPart(
        'changeset_c1',
        "POST http://localhost:7777/acct/t(PartitionKey='p',RowKey='2') HTTP/1.1",
        [
          'Content-Type: application/json',
          'X-HTTP-Method: MERGE',
          'If-Match: W/"datetime\'2022-02-01T20%3A52%3A47.1566948Z\'"',
        ],
        '{"PartitionKey":"p","RowKey":"2","x":1}',
      ),
    ]);
    const [remove, merge] = parse(body, contentTypeFor('batch_b1'));
    assert.equal(remove?.method, 'DELETE');
    assert.equal(remove?.body.length, 0);
    assert.equal(remove?.headers.get('if-match'), '*');
    assert.equal(merge?.method, 'POST');
    assert.equal(merge?.headers.get('x-http-method'), 'MERGE');
    assert.equal(merge?.headers.get('if-match'), 'W/"datetime\'2022-02-01T20%3A52%3A47.1566948Z\'"');
    assert.equal(merge?.body.toString(), '{"PartitionKey":"p","RowKey":"2","x":1}');
  });

  test('Python SDK (Azure REST: performing-entity-group-transactions): Content-ID from 0, PUT/PATCH/DELETE, Content-Length ignored', () => {
    const operations = parse(pythonExample, contentTypeFor(pyBatchBoundary));
    assert.deepEqual(
      operations.map((operation) => [operation.contentId, operation.method, operation.url]),
      [
        ['0', 'POST', 'http://127.0.0.1:18765/devstoreaccount1/pytable'],
        ['1', 'PUT', "http://127.0.0.1:18765/devstoreaccount1/pytable(PartitionKey='p',RowKey='2')"],
        ['2', 'PATCH', "http://127.0.0.1:18765/devstoreaccount1/pytable(PartitionKey='p',RowKey='3')"],
        ['3', 'DELETE', "http://127.0.0.1:18765/devstoreaccount1/pytable(PartitionKey='p',RowKey='4')"],
      ],
    );
    assert.equal(operations[0]?.body.toString(), pyInsertBody);
    assert.equal(operations[0]?.headers.get('prefer'), 'return-no-content');
    assert.equal(operations[1]?.headers.get('if-match'), '*');
    assert.equal(operations[1]?.body.toString(), '{"PartitionKey": "p", "RowKey": "2", "v": 2}');
    assert.equal(operations[2]?.headers.get('if-match'), undefined);
    assert.equal(operations[3]?.body.length, 0);
  });

  test('a query batch (Azure REST: performing-entity-group-transactions): one GET directly inside the batch', () => {
    const [query, ...rest] = parse(queryExample, contentTypeFor(queryBoundary));
    assert.equal(rest.length, 0);
    assert.equal(query?.method, 'GET');
    assert.equal(query?.url, "https://myaccount.table.core.windows.net/Blogs(PartitionKey='Channel_19',RowKey='2')");
    assert.equal(query?.headers.get('accept'), 'application/json;odata=minimalmetadata');
    assert.equal(query?.body.length, 0);
  });
});

describe('parseBatchRequest: tolerated variations', () => {
  test('origin-form URLs, quoted boundary, preamble, padding and epilogue', () => {
    const body = crlf(
      'This is a preamble.',
      '--batch q:1 \t',
      'Content-Type: multipart/mixed; boundary="changeset:1"',
      '',
      'changeset preamble',
      '--changeset:1',
      deletePart('1'),
      '--changeset:1--   ',
      'changeset epilogue',
      '--batch q:1--',
      'epilogue',
    );
    const [operation] = parse(body, 'multipart/mixed; boundary="batch q:1"');
    assert.equal(operation?.url, "/devstoreaccount1/t(PartitionKey='p',RowKey='1')");
    assert.equal(operation?.method, 'DELETE');
  });

  test('LF-only line breaks', () => {
    const [operation] = parse(changesetWith(deletePart('1')).replaceAll('\r\n', '\n'));
    assert.equal(operation?.headers.get('if-match'), '*');
  });

  test('lower-case method, HTTP/1.0, no trailing CRLF, empty lines before the request line', () => {
    const part = crlf('Content-Type: application/http', '', '', "merge /t(PartitionKey='p',RowKey='1') HTTP/1.0");
    const [operation] = parse(changesetWith(part).replace(/\r\n--batch_fakeId--\r\n$/, '\r\n--batch_fakeId--'));
    assert.equal(operation?.method, 'MERGE');
  });

  test('Content-ID inside the sub-request headers (docs Atom sample)', () => {
    const part = crlf(
      'Content-Type: application/http',
      '',
      "DELETE /t(PartitionKey='p',RowKey='1') HTTP/1.1",
      'Content-ID: 5',
      '',
    );
    assert.equal(parse(changesetWith(part))[0]?.contentId, '5');
  });

  test('a boundary string inside a body line does not split the part', () => {
    const payload = '{"a":"--changeset_fakeId","b":"x\\r\\n--batch_fakeId--","c":"--changeset_fakeId--"}';
    const part = crlf(
      'Content-Type: application/http',
      '',
      "PUT /t(PartitionKey='p',RowKey='1') HTTP/1.1",
      '',
      payload,
    );
    const [operation] = parse(changesetWith(part));
    assert.equal(operation?.body.toString(), payload);
  });

  test('a body line that starts with the boundary but continues is content', () => {
    const payload = 'line1\r\n--changeset_fakeIdX\r\n--batch_fakeId_more';
    const part = crlf('Content-Type: application/http', '', 'PUT /t() HTTP/1.1', '', payload);
    assert.equal(parse(changesetWith(part))[0]?.body.toString(), payload);
  });

  test('the CRLF before a delimiter belongs to the delimiter, inner CRLFs are trimmed padding', () => {
    const part = crlf('Content-Type: application/http', '', 'PUT /t() HTTP/1.1', '', '', ' {"v":"a\r\nb"} ', '', '');
    assert.equal(parse(changesetWith(part))[0]?.body.toString(), '{"v":"a\r\nb"}');
  });

  test('UTF-8 bodies stay byte-exact', () => {
    const payload = '{"name":"Zoë – ☃ 𝄞"}';
    const part = crlf('Content-Type: application/http', '', 'PUT /t() HTTP/1.1', '', payload);
    assert.equal(parse(changesetWith(part))[0]?.body.toString('utf8'), payload);
  });

  test('exactly batchOperationsMax operations', () => {
    const parts = Array.from({ length: batchOperationsMax }, (_, index) => deletePart(String(index)));
    assert.equal(parse(changesetWith(...parts)).length, batchOperationsMax);
  });
});

describe('parseBatchRequest: malformed input is InvalidInput', () => {
  test('one operation past batchOperationsMax: the operation error of Azure REST: performing-entity-group-transactions', () => {
    const parts = Array.from({ length: batchOperationsMax + 1 }, (_, index) => deletePart(String(index)));
    const error = assertInvalidInput(() => parse(changesetWith(...parts)), /exceeds the maximum 100 changes/);
    assert.ok(error instanceof BatchOperationError);
    assert.equal(error.operationIndex, batchOperationsMax - 1);
    assert.equal(error.message, 'The batch request operation exceeds the maximum 100 changes per change set.');
  });

  test('bad outer Content-Type', () => {
    const body = changesetWith(deletePart('1'));
    for (const contentType of [
      undefined,
      '',
      'application/json',
      'multipart/mixed',
      'multipart/mixed; boundary=',
      'multipart/form-data; boundary=batch_fakeId',
      `multipart/mixed; boundary=${'x'.repeat(71)}`,
    ]) {
      assertInvalidInput(() => parseBatchRequest(contentType, Buffer.from(body)), /Content-Type/);
    }
  });

  test('wrong boundary, missing delimiters', () => {
    const body = changesetWith(deletePart('1'));
    assertInvalidInput(() => parse(body, contentTypeFor('other')), /first boundary delimiter is missing/);
    assertInvalidInput(() => parse(body.replace('--batch_fakeId--', '')), /close delimiter is missing/);
    assertInvalidInput(() => parse(body.replace('--changeset_fakeId--', '')), /close delimiter is missing/);
    assertInvalidInput(() => parse(''), /first boundary delimiter is missing/);
  });

  test('an empty batch and an empty change set', () => {
    assertInvalidInput(() => parse('--batch_fakeId--\r\n'), /neither a change set nor a query/);
    assertInvalidInput(() => parse(changesetWith()), /no operations/);
  });

  test('two change sets, or a change set and a query', () => {
    const changeset = changesetWith(deletePart('1'));
    const twice = changeset.replace('--batch_fakeId--\r\n', changeset);
    assert.equal(twice.split('--changeset_fakeId--').length, 3);
    assertInvalidInput(() => parse(twice), /only one change set/);
  });

  test('a nested change set, a GET inside a change set, a write outside one', () => {
    const nested = crlf('Content-Type: multipart/mixed; boundary=inner', '', '--inner', deletePart('1'), '--inner--');
    assertInvalidInput(() => parse(changesetWith(nested)), /multipart\/mixed, not application\/http/);
    const get = crlf('Content-Type: application/http', '', 'GET /t() HTTP/1.1', '');
    assertInvalidInput(() => parse(changesetWith(deletePart('1'), get)), /query cannot be part of a change set/);
    const write = queryExample.replace('GET ', 'DELETE ');
    assertInvalidInput(() => parse(write, contentTypeFor(queryBoundary)), /must be inside a change set/);
  });

  test('garbage part headers', () => {
    assertInvalidInput(() => parse(changesetWith(`garbage\r\n${deletePart('1')}`)), /no colon/);
    assertInvalidInput(() => parse(changesetWith(`Content-Type: text/plain\r\n\r\nhello`)), /text\/plain/);
    assertInvalidInput(
      () => parse(changesetWith(deletePart('1').replace('Content-Type', 'X'))),
      /no valid Content-Type/,
    );
    assertInvalidInput(() => parse(changesetWith(deletePart('1').replace('binary', 'base64'))), /base64/);
    const huge = `X-Pad: ${'x'.repeat(70_000)}\r\n${deletePart('1')}`;
    assertInvalidInput(() => parse(changesetWith(huge)), /exceeds 65536 bytes/);
  });

  test('missing or malformed request line', () => {
    const withRequestLine = (line: string) => deletePart('1').replace(/DELETE [^\r]*/, line);
    for (const [line, reason] of [
      ['', /no request line/],
      ['DELETE', /no request line/],
      ["DELETE /t(PartitionKey='p',RowKey='1')", /no request line/],
      ['DELETE  /t() HTTP/1.1', /no request line/],
      ['DELETE /t() HTTP/1.1 extra', /no request line/],
      ['DEL-ETE /t() HTTP/1.1', /not a word/],
      ['DELETE t() HTTP/1.1', /neither absolute nor an absolute path/],
      ['DELETE /t() HTTP/2', /HTTP\/1.1/],
      ['If-Match: *', /no request line/],
    ] as const) {
      assertInvalidInput(() => parse(changesetWith(withRequestLine(line))), reason);
    }
    const headersOnly = crlf('Content-Type: application/http', 'Content-Transfer-Encoding: binary', '');
    assertInvalidInput(() => parse(changesetWith(headersOnly)), /no request line/);
  });

  test('syntax errors carry the byte offset where parsing stopped', () => {
    const body = changesetWith(deletePart('1'), 'garbage');
    const error = assertInvalidInput(() => parse(body));
    assert.ok(error instanceof MultipartSyntaxError);
    assert.equal(body.slice(error.offset, error.offset + 7), 'garbage');
    assert.match(error.message, new RegExp(`at byte ${error.offset}:`));
  });

  test('a body over bodyBytesMax is RequestBodyTooLarge', () => {
    const body = Buffer.alloc(4 * 1024 * 1024 + 1, 0x20);
    assert.throws(() => parseBatchRequest(contentTypeFor('b'), body), { code: 'RequestBodyTooLarge', status: 413 });
  });
});

// ---------------------------------------------------------------------------------------------
// Properties: random batches written the way each client writes them parse back to what was written,
// and random damage to valid bodies only ever yields operations or a StorageError.

type Random = ReturnType<typeof seededRandom>;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const integer = (random: Random, max: number) => Math.floor(random() * (max + 1));

interface WrittenOperation {
  readonly method: string;
  readonly url: string;
  readonly headers: [string, string][];
  readonly body: string;
  readonly contentId: string | undefined;
}

function randomText(random: Random, alphabet: string, lengthMax: number): string {
  let text = '';
  for (let index = integer(random, lengthMax); index > 0; index--) text += pick(random, [...alphabet]);
  return text;
}

function randomOperation(random: Random, index: number, withContentId: boolean): WrittenOperation {
  const method = pick(random, ['POST', 'PUT', 'MERGE', 'PATCH', 'DELETE']);
  const path = `/devstoreaccount1/t${integer(random, 9)}(PartitionKey='p',RowKey='${index}')`;
  const url = random() < 0.5 ? path : `http://127.0.0.1:${integer(random, 65535)}${path}`;
  const headerCount = integer(random, 5);
  const headers: [string, string][] = Array.from({ length: headerCount }, (_, n) => [
    `x-h${n}-${randomText(random, 'abcdefghij-_', 6)}`,
    randomText(random, 'abc XYZ;=/\'"*:,()-_0123456789', 30).trim(),
  ]);
  // Bodies hold boundary-like text, but never at the start of a line, and no line breaks at the edges.
  const middle =
    randomText(random, '{}":,ab -é☃', 40) + pick(random, ['', '--changeset_r', '--batch_r--', 'x\r\n-changeset_r']);
  const body = method === 'DELETE' ? '' : `{${middle}${randomText(random, 'abc-', 5)}}`;
  return { method, url, headers, body, contentId: withContentId ? String(index) : undefined };
}

/** Writes a change set in one client's style: JS (extra CRLFs, no Content-ID), Python, or LF-only. */
function writeBatch(operations: readonly WrittenOperation[], style: 'js' | 'python' | 'lf'): string {
  const parts = operations.map((operation) => {
    const mime = ['Content-Type: application/http', 'Content-Transfer-Encoding: binary'];
    if (operation.contentId !== undefined) mime.push(`Content-ID: ${operation.contentId}`);
    const head = [
      ...mime,
      '',
      `${operation.method} ${operation.url} HTTP/1.1`,
      ...operation.headers.map(([n, v]) => `${n}: ${v}`),
    ];
    const separator = style === 'js' ? ['', ''] : [''];
    return crlf('--changeset_r', ...head, ...separator, operation.body);
  });
  const text = crlf(
    '--batch_r',
    'Content-Type: multipart/mixed; boundary=changeset_r',
    '',
    ...parts,
    '--changeset_r--',
    '--batch_r--',
    '',
  );
  return style === 'lf' ? text.replaceAll('\r\n', '\n') : text;
}

const fuzzTokens = [
  '\r\n',
  '\n',
  '\r',
  '--',
  ':',
  ' ',
  '"',
  '\u0000',
  '--changeset_fakeId',
  '--batch_fakeId--',
  'HTTP/1.1',
];

/** One random damage: replace a byte, drop a run, insert a framing token, truncate, or splice. */
function mutate(random: Random, bytes: Buffer): Buffer {
  const at = integer(random, bytes.length);
  const head = bytes.subarray(0, at);
  switch (integer(random, 4)) {
    case 0:
      return Buffer.concat([head, Buffer.from([integer(random, 255)]), bytes.subarray(at + 1)]);
    case 1:
      return Buffer.concat([head, bytes.subarray(at + 1 + integer(random, 40))]);
    case 2:
      return Buffer.concat([head, Buffer.from(pick(random, fuzzTokens)), bytes.subarray(at)]);
    case 3:
      return head;
    default:
      return Buffer.concat([head, bytes.subarray(integer(random, bytes.length))]);
  }
}

describe('parseBatchRequest: properties', () => {
  test(`parse after write returns what was written (${scaled(500)} random batches)`, () => {
    const random = seededRandom(0x5eed);
    for (let iteration = 0; iteration < scaled(500); iteration++) {
      const style = pick(random, ['js', 'python', 'lf'] as const);
      const count = 1 + integer(random, 9);
      const written = Array.from({ length: count }, (_, index) => randomOperation(random, index, style === 'python'));
      const parsed = parseBatchRequest(contentTypeFor('batch_r'), Buffer.from(writeBatch(written, style)));
      const expected = written.map((operation) => ({
        method: operation.method,
        url: operation.url,
        headers: new Map(operation.headers),
        body: style === 'lf' ? operation.body.replaceAll('\r\n', '\n') : operation.body,
        contentId: operation.contentId,
      }));
      assert.deepEqual(
        parsed.map((operation) => ({ ...operation, body: operation.body.toString('utf8') })),
        expected,
        `iteration ${iteration}`,
      );
    }
  });

  test('fuzz: mutated and truncated bodies yield operations or a StorageError, never anything else', () => {
    const seed = 0xc0ffee;
    const random = seededRandom(seed);
    const corpus: [string, string][] = [
      [contentTypeFor('batch_fakeId'), jsSasExample],
      [contentTypeFor(pyBatchBoundary), pythonExample],
      [contentTypeFor(queryBoundary), queryExample],
      [
        contentTypeFor('batch_r'),
        writeBatch([randomOperation(random, 0, true), randomOperation(random, 1, true)], 'js'),
      ],
    ];
    let accepted = 0;
    for (let iteration = 0; iteration < scaled(4000); iteration++) {
      const [contentType, text] = pick(random, corpus);
      let bytes: Buffer = Buffer.from(text, 'utf8');
      for (let mutation = 1 + integer(random, 3); mutation > 0; mutation--) bytes = mutate(random, bytes);
      try {
        const operations = parseBatchRequest(contentType, bytes);
        assert.ok(operations.length >= 1 && operations.length <= batchOperationsMax);
        for (const operation of operations) assert.match(operation.method, /^[A-Z]+$/);
        accepted++;
      } catch (error) {
        if (!(error instanceof StorageError)) {
          assert.fail(
            `seed ${seed} iteration ${iteration}: ${String(error)}\n${JSON.stringify(bytes.toString('latin1'))}`,
          );
        }
      }
    }
    assert.ok(accepted > scaled(100), `some mutants must still parse (accepted ${accepted})`);
  });
});

// ---------------------------------------------------------------------------------------------
// Serialization: byte-exact against the real service's bodies (Azure REST: performing-entity-group-transactions), GUIDs
// substituted.

const guidPattern = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The body text with our random boundaries replaced by the ones the spec's example used. */
function withSpecBoundaries(
  result: { contentType: string; body: Buffer },
  batchGuid: string,
  changesetGuid?: string,
): string {
  const match = new RegExp(`^multipart/mixed; boundary=batchresponse_(${guidPattern})$`).exec(result.contentType);
  assert.ok(match !== null, result.contentType);
  let text = result.body.toString('utf8').replaceAll(`batchresponse_${match[1]}`, `batchresponse_${batchGuid}`);
  if (changesetGuid !== undefined) {
    text = text.replace(new RegExp(`changesetresponse_${guidPattern}`, 'g'), `changesetresponse_${changesetGuid}`);
  }
  return text;
}

const entityUrl = (rowKey: string) =>
  `https://fakeaccountname.table.core.windows.net/batchTableTestnode(PartitionKey='batchTest',RowKey='${rowKey}')`;
const insertEtag = `W/"datetime'2022-02-01T20%3A52%3A47.0676669Z'"`;

describe('serializeBatchResponse', () => {
  test('inserts with return-no-content: byte-exact with Azure REST: performing-entity-group-transactions', () => {
    const responses: BatchOperationResponse[] = ['1', '2', '3'].map((rowKey) => ({
      status: 204,
      headers: [
        ['X-Content-Type-Options', 'nosniff'],
        ['Cache-Control', 'no-cache'],
        ['Preference-Applied', 'return-no-content'],
        ['DataServiceVersion', '3.0;'],
        ['Location', entityUrl(rowKey)],
        ['DataServiceId', entityUrl(rowKey)],
        ['ETag', insertEtag],
      ],
    }));
    const changeset = '--changesetresponse_e84882fb-2925-4ad7-9b56-073bb385884c';
    const part = (rowKey: string) => [
      changeset,
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 204 No Content',
      'X-Content-Type-Options: nosniff',
      'Cache-Control: no-cache',
      'Preference-Applied: return-no-content',
      'DataServiceVersion: 3.0;',
      `Location: ${entityUrl(rowKey)}`,
      `DataServiceId: ${entityUrl(rowKey)}`,
      `ETag: ${insertEtag}`,
      '',
      '',
    ];
    const expected = crlf(
      '--batchresponse_febaef47-2941-4a00-871f-fd96cdd1a29b',
      'Content-Type: multipart/mixed; boundary=changesetresponse_e84882fb-2925-4ad7-9b56-073bb385884c',
      '',
      ...part('1'),
      ...part('2'),
      ...part('3'),
      `${changeset}--`,
      '--batchresponse_febaef47-2941-4a00-871f-fd96cdd1a29b--',
      '',
    );
    const result = serializeBatchResponse(responses, { changeset: true });
    assert.equal(
      withSpecBoundaries(result, 'febaef47-2941-4a00-871f-fd96cdd1a29b', 'e84882fb-2925-4ad7-9b56-073bb385884c'),
      expected,
    );
  });

  test('an update part: byte-exact with Azure REST: performing-entity-group-transactions', () => {
    const etag = `W/"datetime'2022-02-01T20%3A52%3A47.1566948Z'"`;
    const result = serializeBatchResponse(
      [
        {
          status: 204,
          headers: [
            ['X-Content-Type-Options', 'nosniff'],
            ['Cache-Control', 'no-cache'],
            ['DataServiceVersion', '1.0;'],
            ['ETag', etag],
          ],
        },
      ],
      { changeset: true },
    );
    const expectedPart = crlf(
      'HTTP/1.1 204 No Content',
      'X-Content-Type-Options: nosniff',
      'Cache-Control: no-cache',
      'DataServiceVersion: 1.0;',
      `ETag: ${etag}`,
      '',
      '',
      '--changesetresponse_',
    );
    assert.ok(result.body.toString().includes(expectedPart));
  });

  test('a failed change set: byte-exact with Azure REST: performing-entity-group-transactions', () => {
    const errorJson =
      '{"odata.error":{"code":"TableNotFound","message":{"lang":"en-US","value":"0:The table specified does not exist.\\nRequestId:a5ad7e5b-0002-0010-3fad-17b759000000\\nTime:2022-02-01T20:52:48.2699919Z"}}}';
    const result = serializeBatchResponse(
      [
        {
          status: 404,
          headers: [
            ['X-Content-Type-Options', 'nosniff'],
            ['DataServiceVersion', '3.0;'],
            ['Content-Type', 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8'],
          ],
          body: errorJson,
        },
      ],
      { changeset: true },
    );
    const expected = crlf(
      '--batchresponse_03ab56c7-942d-45c1-b8ae-b61a11c7e8b4',
      'Content-Type: multipart/mixed; boundary=changesetresponse_0b3bf7b8-337b-4703-bc80-1c28948da9c7',
      '',
      '--changesetresponse_0b3bf7b8-337b-4703-bc80-1c28948da9c7',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 404 Not Found',
      'X-Content-Type-Options: nosniff',
      'DataServiceVersion: 3.0;',
      'Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8',
      '',
      errorJson,
      '--changesetresponse_0b3bf7b8-337b-4703-bc80-1c28948da9c7--',
      '--batchresponse_03ab56c7-942d-45c1-b8ae-b61a11c7e8b4--',
      '',
    );
    assert.equal(
      withSpecBoundaries(result, '03ab56c7-942d-45c1-b8ae-b61a11c7e8b4', '0b3bf7b8-337b-4703-bc80-1c28948da9c7'),
      expected,
    );
  });

  test('a query batch: one part directly in the batch (Azure REST: performing-entity-group-transactions)', () => {
    const entityJson =
      '{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Blogs/@Element","PartitionKey":"Channel_19","RowKey":"2","Timestamp":"2013-10-14T18:25:49.8922467Z","Rating":9,"Text":"Azure..."}';
    const result = serializeBatchResponse(
      [
        {
          status: 200,
          headers: [
            ['DataServiceVersion', '3.0;'],
            ['Content-Type', 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8'],
            ['X-Content-Type-Options', 'nosniff'],
            ['Cache-Control', 'no-cache'],
            ['ETag', 'W/"0x5B168C7B6E589D2"'],
          ],
          body: entityJson,
        },
      ],
      { changeset: false },
    );
    const expected = crlf(
      '--batchresponse_0a568496-fb38-4a83-9984-5908d7f4c63d',
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      '',
      'HTTP/1.1 200 OK',
      'DataServiceVersion: 3.0;',
      'Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8',
      'X-Content-Type-Options: nosniff',
      'Cache-Control: no-cache',
      'ETag: W/"0x5B168C7B6E589D2"',
      '',
      entityJson,
      '--batchresponse_0a568496-fb38-4a83-9984-5908d7f4c63d--',
      '',
    );
    assert.equal(withSpecBoundaries(result, '0a568496-fb38-4a83-9984-5908d7f4c63d'), expected);
  });

  test('Content-ID is echoed right after the status line; 201 carries its body', () => {
    const result = serializeBatchResponse(
      [
        { status: 204, headers: [['DataServiceVersion', '1.0;']], contentId: '0' },
        { status: 201, headers: [['ETag', 'W/"x"']], contentId: '1', body: '{"RowKey":"é"}' },
      ],
      { changeset: true },
    );
    const text = result.body.toString('utf8');
    assert.ok(text.includes('HTTP/1.1 204 No Content\r\nContent-ID: 0\r\nDataServiceVersion: 1.0;\r\n\r\n\r\n--'));
    assert.ok(text.includes('HTTP/1.1 201 Created\r\nContent-ID: 1\r\nETag: W/"x"\r\n\r\n{"RowKey":"é"}\r\n--'));
  });

  test('fresh boundaries per response; the JS SDK split on --changesetresponse_ yields the parts', () => {
    const response = { status: 204, headers: [] };
    const first = serializeBatchResponse([response, response], { changeset: true });
    const second = serializeBatchResponse([response], { changeset: true });
    assert.notEqual(first.contentType, second.contentType);
    // TableTransaction.ts parseTransactionResponse drops the first and last pieces of this split.
    const pieces = first.body.toString().split('--changesetresponse_').slice(1, -1);
    assert.equal(pieces.length, 2);
    for (const piece of pieces) assert.match(piece, /HTTP\/1.1 204/);
  });

  test('the serialized framing reads back with our own multipart reader', () => {
    const result = serializeBatchResponse([{ status: 204, headers: [['ETag', 'W/"x"']] }], { changeset: false });
    // Swap the status line for a request line so the request parser accepts the part.
    const asRequest = result.body.toString().replace('HTTP/1.1 204 No Content', 'GET /t() HTTP/1.1');
    const [part] = parseBatchRequest(result.contentType, Buffer.from(asRequest));
    assert.equal(part?.headers.get('etag'), 'W/"x"');
  });
});

describe('statusReason', () => {
  test('reason phrases of the status lines', () => {
    assert.equal(statusReason(200), 'OK');
    assert.equal(statusReason(201), 'Created');
    assert.equal(statusReason(204), 'No Content');
    assert.equal(statusReason(400), 'Bad Request');
    assert.equal(statusReason(404), 'Not Found');
    assert.equal(statusReason(409), 'Conflict');
    assert.equal(statusReason(412), 'Precondition Failed');
    assert.equal(statusReason(413), 'Request Entity Too Large');
    assert.equal(statusReason(299), '');
  });
});
