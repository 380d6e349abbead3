// $batch on the wire (Azure REST: performing-entity-group-transactions, docs/protocol-notes.md): raw multipart requests
// in the
// byte layouts of the JS and Python SDKs, signed Shared Key Lite on the outer request only, and
// byte-level checks of the 202 response the SDK parsers depend on. Malformed bodies get a JSON 400,
// never a 5xx; bodies over 4 MiB get 413.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bodyBytesMax } from '../../../src/limits.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import {
  assertError,
  describeResponse,
  devPath,
  entityPath,
  errorCode,
  send,
  type RawResponse,
} from '../../helpers/http.js';
import { uniqueTableName } from '../../helpers/sdk.js';
import { seededRandom } from '../../query/random.js';
import {
  absoluteUrl,
  changesetBody,
  entityResource,
  op,
  partError,
  postBatch,
  queryBody,
  readBatchResponse,
  type BatchBody,
  type ClientStyle,
  type ResponsePart,
  type SubRequest,
} from '../../helpers/batch.js';

const guid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const minimalJson = 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8';

function headerNames(part: ResponsePart): string[] {
  return part.headerLines.map((line) => line.slice(0, line.indexOf(':')));
}

/**
 * 202 with a well-formed change-set response (Azure REST: performing-entity-group-transactions): boundaries, CRLFs,
 * part framing.
 */
function assertChangesetResponse(res: RawResponse, partCount: number): ResponsePart[] {
  assert.equal(res.status, 202, describeResponse(res));
  assert.match(String(res.headers['content-type']), new RegExp(`^multipart/mixed; boundary=batchresponse_${guid}$`));
  const parsed = readBatchResponse(res);
  assert.match(parsed.changesetBoundary ?? '', new RegExp(`^changesetresponse_${guid}$`));
  const { batchBoundary: b, changesetBoundary: c } = parsed;
  assert.doesNotMatch(res.text, /[^\r]\n/, 'every line ends in CRLF');
  assert.ok(res.text.startsWith(`--${b}\r\nContent-Type: multipart/mixed; boundary=${c}\r\n\r\n--${c}\r\n`), res.text);
  assert.ok(res.text.endsWith(`\r\n--${c}--\r\n--${b}--\r\n`), res.text);
  const partHead = `--${c}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 `;
  assert.equal(
    res.text.split(partHead).length - 1,
    partCount,
    `every part starts with the MIME headers and a status line:\n${res.text}`,
  );
  assert.equal(parsed.parts.length, partCount, res.text);
  return parsed.parts;
}

/**
 * The single error part of a failed change set (Azure REST: performing-entity-group-transactions), with its one-line
 * compact JSON.
 */
function assertErrorPart(res: RawResponse, status: number, code: string, index: number): ResponsePart {
  const [part] = assertChangesetResponse(res, 1);
  assert.equal(part!.status, status, res.text);
  assert.equal(part!.header('Content-Type'), minimalJson);
  assert.doesNotMatch(part!.body, /[\r\n]/, 'the error JSON is on one line');
  assert.match(part!.body, new RegExp(`"value":"${index}:`), 'compact JSON with the index first (.NET regex)');
  const error = partError(part!);
  assert.equal(error.code, code, part!.body);
  assert.ok(error.message.value.startsWith(`${index}:`), error.message.value);
  return part!;
}

function assertBadRequestJson(res: RawResponse, what: string): void {
  assert.equal(res.status, 400, `${what}: ${describeResponse(res)}`);
  assert.match(
    String(res.headers['content-type']),
    /^application\/json/,
    `${what}: an ordinary JSON error, not multipart`,
  );
  // The code for malformed multipart is the spec's suggestion (Azure REST: performing-entity-group-transactions,
  // unverified).
  assert.equal(errorCode(res), 'InvalidInput', `${what}: ${describeResponse(res)}`);
}

describe('$batch wire format', () => {
  let server: RunningServer;
  let table: string;
  let nextPartition = 0;
  before(async () => {
    server = await startServer();
    table = uniqueTableName('wire');
    const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
    assert.equal(res.status, 201, describeResponse(res));
  });
  after(async () => {
    await server?.stop();
  });

  const freshPartition = () => `p${nextPartition++}`;
  const tableUrl = () => absoluteUrl(server.port, table);
  const entityUrl = (pk: string, rk: string) => absoluteUrl(server.port, entityResource(table, pk, rk));
  const batch = (requests: SubRequest[], style: ClientStyle = 'js') =>
    postBatch(server.port, changesetBody(requests, style));
  const insert = async (pk: string, rk: string, props: object = {}): Promise<string> => {
    const res = await send(server.port, {
      method: 'POST',
      path: devPath(table),
      body: { PartitionKey: pk, RowKey: rk, ...props },
      headers: { Prefer: 'return-no-content' },
    });
    assert.equal(res.status, 204, describeResponse(res));
    return String(res.headers.etag);
  };
  /** The stored entity without odata.* members, with its ETag; undefined if absent. */
  const read = async (
    pk: string,
    rk: string,
  ): Promise<{ etag: string; props: Record<string, unknown> } | undefined> => {
    const res = await send(server.port, { method: 'GET', path: entityPath(table, pk, rk) });
    if (res.status === 404) return undefined;
    assert.equal(res.status, 200, describeResponse(res));
    const { PartitionKey: _p, RowKey: _r, Timestamp: _t, ...rest } = res.json();
    const props = Object.fromEntries(Object.entries(rest).filter(([name]) => !name.startsWith('odata.')));
    return { etag: String(res.headers.etag), props };
  };

  /**
   * The operations of Azure REST: performing-entity-group-transactions's Python example: insert, update (PUT, If-Match
   * *), insert-or-merge
   * (PATCH from Python, MERGE from JS), delete. `urlOf` writes the request-line URL of a resource.
   */
  async function mixedBatch(
    pk: string,
    style: ClientStyle,
    urlOf = (resource: string) => absoluteUrl(server.port, resource),
  ): Promise<ResponsePart[]> {
    await insert(pk, '2', { old: 1 });
    await insert(pk, '3', { old: 1 });
    await insert(pk, '4', { old: 1 });
    const url = (rk: string) => urlOf(entityResource(table, pk, rk));
    const merge = op.upsert(url('3'), 'Merge', { PartitionKey: pk, RowKey: '3', v: 3 });
    const res = await batch(
      [
        op.insert(urlOf(table), { PartitionKey: pk, RowKey: '1', v: 1 }),
        op.update(url('2'), 'Replace', { PartitionKey: pk, RowKey: '2', v: 2 }),
        style === 'python' ? { ...merge, method: 'PATCH' } : merge,
        op.delete(url('4')),
      ],
      style,
    );
    const parts = assertChangesetResponse(res, 4);
    assert.deepEqual(
      parts.map((p) => p.statusLine),
      Array(4).fill('HTTP/1.1 204 No Content'),
    );
    const etag = parts[0]!.header('ETag');
    assert.deepEqual(
      parts.map((p) => p.header('ETag')),
      [etag, etag, etag, undefined],
      'one ETag for every write; none on a delete',
    );
    assert.deepEqual(await read(pk, '1'), { etag, props: { v: 1 } });
    assert.deepEqual(await read(pk, '2'), { etag, props: { v: 2 } });
    assert.deepEqual(await read(pk, '3'), { etag, props: { old: 1, v: 3 } });
    assert.equal(await read(pk, '4'), undefined);
    return parts;
  }

  test('JS SDK layout: lower-case part headers, no Content-ID, extra CRLFs, absolute URLs', async () => {
    const pk = freshPartition();
    const parts = await mixedBatch(pk, 'js');
    for (const part of parts) assert.equal(part.header('Content-ID'), undefined, 'no Content-ID when none was sent');
    const location = `${server.url}/${entityResource(table, pk, '1')}`;
    assert.deepEqual(
      parts[0]!.headerLines.filter((line) => /^(Preference-Applied|Location|DataServiceId):/.test(line)),
      ['Preference-Applied: return-no-content', `Location: ${location}`, `DataServiceId: ${location}`],
    );
    // The recorded service's header sets (Azure REST: performing-entity-group-transactions), `ETag` spelled exactly so
    // (JS regex `ETag: (.*)`).
    assert.deepEqual(headerNames(parts[0]!).sort(), [
      'Cache-Control',
      'DataServiceId',
      'DataServiceVersion',
      'ETag',
      'Location',
      'Preference-Applied',
      'X-Content-Type-Options',
    ]);
    assert.deepEqual(headerNames(parts[1]!).sort(), [
      'Cache-Control',
      'DataServiceVersion',
      'ETag',
      'X-Content-Type-Options',
    ]);
    assert.deepEqual(headerNames(parts[3]!).sort(), ['Cache-Control', 'DataServiceVersion', 'X-Content-Type-Options']);
    assert.match(parts[1]!.header('ETag')!, /^W\/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d(\.\d{1,7})?Z'"$/);
  });

  test('bodyless parts end in two empty lines before the next delimiter, as the service writes them', async () => {
    const pk = freshPartition();
    await insert(pk, 'a');
    const res = await batch([op.update(entityUrl(pk, 'a'), 'Merge', { PartitionKey: pk, RowKey: 'a', x: 1 })]);
    const [part] = assertChangesetResponse(res, 1);
    const { changesetBoundary } = readBatchResponse(res);
    assert.ok(res.text.includes(`ETag: ${part!.header('ETag')}\r\n\r\n\r\n--${changesetBoundary}--`), res.text);
  });

  test('Python SDK layout: Content-ID 0…n-1 echoed right after each status line; x-ms-version and dates inside parts', async () => {
    const parts = await mixedBatch(freshPartition(), 'python');
    assert.deepEqual(
      parts.map((p) => p.headerLines[0]),
      ['Content-ID: 0', 'Content-ID: 1', 'Content-ID: 2', 'Content-ID: 3'],
    );
  });

  test('origin-form request lines with the account: /devstoreaccount1/t(…)', async () => {
    await mixedBatch(freshPartition(), 'js', (resource) => `/devstoreaccount1/${resource}`);
  });

  test('origin-form request lines without the account: /t(…) (Azure REST: performing-entity-group-transactions recommendation)', async () => {
    await mixedBatch(freshPartition(), 'python', (resource) => `/${resource}`);
  });

  test('tunnelled MERGE (POST + X-HTTP-Method: MERGE) inside a change set merges, never inserts', async () => {
    const pk = freshPartition();
    await insert(pk, 'a', { keep: 1, v: 0 });
    const tunnelled = (rk: string, headers: Record<string, string>): SubRequest => ({
      method: 'POST',
      url: entityUrl(pk, rk),
      headers: { 'X-HTTP-Method': 'MERGE', ...headers },
      body: { PartitionKey: pk, RowKey: rk, v: 1 },
    });
    const res = await batch([tunnelled('a', { 'If-Match': '*' }), tunnelled('b', {})]);
    const parts = assertChangesetResponse(res, 2);
    assert.deepEqual(
      parts.map((p) => p.statusLine),
      ['HTTP/1.1 204 No Content', 'HTTP/1.1 204 No Content'],
    );
    assert.deepEqual((await read(pk, 'a'))?.props, { keep: 1, v: 1 }, 'merged into the existing entity');
    assert.deepEqual((await read(pk, 'b'))?.props, { v: 1 }, 'without If-Match: insert-or-merge');

    const missing = await batch([tunnelled('c', { 'If-Match': '*' })]);
    assertErrorPart(missing, 404, 'ResourceNotFound', 0);
    assert.equal(await read(pk, 'c'), undefined);
  });

  describe('error parts', () => {
    test('409 at index 1 (Python style): one part, Content-ID echoed, nothing written', async () => {
      const pk = freshPartition();
      const existing = await insert(pk, 'x', { v: 0 });
      const res = await batch(
        [
          op.insert(tableUrl(), { PartitionKey: pk, RowKey: 'new', v: 1 }),
          op.insert(tableUrl(), { PartitionKey: pk, RowKey: 'x', v: 1 }),
          op.insert(tableUrl(), { PartitionKey: pk, RowKey: 'later', v: 1 }),
        ],
        'python',
      );
      const part = assertErrorPart(res, 409, 'EntityAlreadyExists', 1);
      assert.equal(part.statusLine, 'HTTP/1.1 409 Conflict');
      assert.equal(part.headerLines[0], 'Content-ID: 1');
      assert.equal(partError(part).message.value.split('\n')[0], '1:The specified entity already exists.');
      assert.equal(await read(pk, 'new'), undefined);
      assert.equal(await read(pk, 'later'), undefined);
      assert.deepEqual(await read(pk, 'x'), { etag: existing, props: { v: 0 } });
    });

    test('status lines of 412 and 404 parts', async () => {
      const pk = freshPartition();
      await insert(pk, 'x');
      const stale = 'W/"datetime\'2000-01-01T00%3A00%3A00Z\'"';
      const precondition = await batch([
        op.update(entityUrl(pk, 'x'), 'Replace', { PartitionKey: pk, RowKey: 'x' }, stale),
      ]);
      assert.equal(
        assertErrorPart(precondition, 412, 'UpdateConditionNotSatisfied', 0).statusLine,
        'HTTP/1.1 412 Precondition Failed',
      );
      const notFound = await batch([
        op.upsert(entityUrl(pk, 'y'), 'Merge', { PartitionKey: pk, RowKey: 'y' }),
        op.delete(entityUrl(pk, 'z')),
      ]);
      assert.equal(assertErrorPart(notFound, 404, 'ResourceNotFound', 1).statusLine, 'HTTP/1.1 404 Not Found');
      assert.equal(await read(pk, 'y'), undefined);
    });

    test('101 operations → one 400 InvalidInput part naming index 99', async () => {
      const pk = freshPartition();
      const requests = Array.from({ length: 101 }, (_, i) =>
        op.insert(tableUrl(), { PartitionKey: pk, RowKey: `r${i}` }),
      );
      assertErrorPart(await batch(requests), 400, 'InvalidInput', 99);
      assert.equal(await read(pk, 'r0'), undefined);
    });
  });

  describe('query batch (Azure REST: performing-entity-group-transactions)', () => {
    test('a single GET is answered directly inside the batch, without a change set', async () => {
      const pk = freshPartition();
      const etag = await insert(pk, 'q', { v: 7 });
      const res = await postBatch(server.port, queryBody(op.get(entityUrl(pk, 'q'))));
      assert.equal(res.status, 202, describeResponse(res));
      const parsed = readBatchResponse(res);
      assert.equal(parsed.changesetBoundary, undefined);
      assert.doesNotMatch(res.text, /changesetresponse_/);
      const [part] = parsed.parts;
      assert.equal(part!.statusLine, 'HTTP/1.1 200 OK');
      assert.equal(part!.header('ETag'), etag);
      const entity = JSON.parse(part!.body);
      assert.equal(entity.PartitionKey, pk);
      assert.equal(entity.RowKey, 'q');
      assert.equal(entity.v, 7);
      assert.equal(entity['odata.etag'], etag);
    });

    test('a GET together with writes → 400', async () => {
      const pk = freshPartition();
      const res = await batch([op.insert(tableUrl(), { PartitionKey: pk, RowKey: 'w' }), op.get(entityUrl(pk, 'w'))]);
      // Azure REST: performing-entity-group-transactions says 400 without saying at which level: accept a top-level
      // error or a 400 part.
      if (res.status === 202) assert.equal(readBatchResponse(res).parts[0]!.status, 400, res.text);
      else assertError(res, 400);
      assert.equal(await read(pk, 'w'), undefined);
    });
  });

  describe('malformed requests → 400 JSON error, never 5xx', () => {
    function validBody(): BatchBody {
      return changesetBody([op.insert(tableUrl(), { PartitionKey: 'malformed', RowKey: 'r' })]);
    }
    const withText = (contentType: string, text: string): BatchBody => ({
      contentType,
      body: Buffer.from(text, 'latin1'),
    });
    /** The change-set part of a one-change-set batch, without the batch delimiters around it. */
    const onlyBatchPart = ({ contentType, body }: BatchBody): string => {
      const boundary = contentType.slice(contentType.indexOf('boundary=') + 'boundary='.length);
      const text = body.toString('latin1');
      return text.slice(`--${boundary}\r\n`.length, text.lastIndexOf(`\r\n--${boundary}--`));
    };

    const cases: Record<string, () => BatchBody> = {
      'no boundary parameter': () => ({ ...validBody(), contentType: 'multipart/mixed' }),
      'a boundary that is not in the body': () => ({
        ...validBody(),
        contentType: 'multipart/mixed; boundary=batch_other',
      }),
      'not multipart at all': () => ({ ...validBody(), contentType: 'application/json' }),
      'an empty body': () => withText('multipart/mixed; boundary=b', ''),
      garbage: () => withText('multipart/mixed; boundary=b', 'this is not a multipart body\r\n\x00\xff{}--\r\n'),
      'truncated in the middle': () => {
        const valid = validBody();
        return { ...valid, body: valid.body.subarray(0, Math.floor(valid.body.length / 2)) };
      },
      'no close delimiter': () => {
        const valid = validBody();
        return { ...valid, body: Buffer.from(valid.body.toString('latin1').replace(/--\r\n$/, '\r\n'), 'latin1') };
      },
      'two change sets': () => {
        const b = 'batch_two';
        return withText(
          `multipart/mixed; boundary=${b}`,
          `--${b}\r\n${onlyBatchPart(validBody())}\r\n--${b}\r\n${onlyBatchPart(validBody())}\r\n--${b}--\r\n`,
        );
      },
      'an empty change set': () =>
        withText(
          'multipart/mixed; boundary=b',
          '--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c--\r\n--b--\r\n',
        ),
      'a part that is not application/http': () =>
        withText(
          'multipart/mixed; boundary=b',
          '--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: text/plain\r\n\r\nhello\r\n--c--\r\n--b--\r\n',
        ),
      'a garbage request line': () =>
        withText(
          'multipart/mixed; boundary=b',
          '--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nnot a request line\r\n\r\n--c--\r\n--b--\r\n',
        ),
    };
    for (const [name, build] of Object.entries(cases)) {
      test(name, async () => {
        assertBadRequestJson(await postBatch(server.port, build()), name);
      });
    }

    test('seeded mutations of a valid batch: never 5xx, always a parseable answer', async () => {
      const seed = Number(process.env['BATCH_FUZZ_SEED'] ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
      const random = seededRandom(seed);
      const valid = changesetBody(
        [
          op.insert(tableUrl(), { PartitionKey: 'fuzz', RowKey: 'a', v: 1 }),
          op.upsert(entityUrl('fuzz', 'b'), 'Merge', { PartitionKey: 'fuzz', RowKey: 'b' }),
          op.delete(entityUrl('fuzz', 'c')),
        ],
        'python',
      );
      const mutate = (bytes: Buffer): Buffer => {
        const at = random.int(bytes.length);
        const span = 1 + random.int(16);
        switch (random.int(4)) {
          case 0:
            return bytes.subarray(0, at);
          case 1:
            return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + span)]);
          case 2:
            return Buffer.concat([
              bytes.subarray(0, at),
              Buffer.from(Array.from({ length: span }, () => random.pick([13, 10, 45, 58, 32, random.int(256)]))),
              bytes.subarray(at),
            ]);
          default:
            return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at, at + span), bytes.subarray(at)]);
        }
      };
      for (let i = 0; i < 150; i++) {
        let body = valid.body;
        for (let n = 1 + random.int(3); n > 0; n--) body = mutate(body);
        const res = await postBatch(server.port, { contentType: valid.contentType, body });
        const context = `seed ${seed} (BATCH_FUZZ_SEED), mutant ${i}: ${describeResponse(res)}\nbody: ${JSON.stringify(body.toString('latin1'))}`;
        assert.ok(res.status < 500, context);
        if (res.status === 202) assert.doesNotThrow(() => readBatchResponse(res), context);
        else assert.equal(typeof errorCode(res), 'string', context);
      }
    });
  });

  describe('size limit (4 MiB per batch)', () => {
    /** 100 inserts padded with ASCII so the whole body is exactly `bytes` long (JS layout: no part Content-Length). */
    function batchOfSize(pk: string, bytes: number): BatchBody {
      const operations = 100;
      const lengths = Array<number>(operations).fill(0);
      const build = () =>
        changesetBody(
          lengths.map((n, i) =>
            op.insert(tableUrl(), {
              PartitionKey: pk,
              RowKey: `r${i}`,
              a: 'a'.repeat(Math.min(n, 30_000)),
              b: 'b'.repeat(Math.max(0, n - 30_000)),
            }),
          ),
        );
      const base = build().body.length;
      const perOperation = Math.floor((bytes - base) / operations);
      lengths.fill(perOperation);
      lengths[operations - 1]! += bytes - base - perOperation * operations;
      const body = build();
      assert.equal(body.body.length, bytes);
      return body;
    }

    test('exactly 4 MiB is accepted', async () => {
      const pk = freshPartition();
      const res = await postBatch(server.port, batchOfSize(pk, bodyBytesMax));
      const parts = assertChangesetResponse(res, 100);
      assert.ok(parts.every((p) => p.status === 204));
      assert.ok((await read(pk, 'r99'))!.props.a !== undefined);
    });

    test('4 MiB + 1 byte → 413 RequestBodyTooLarge, with Content-Length and chunked', async () => {
      const pk = freshPartition();
      const body = batchOfSize(pk, bodyBytesMax + 1);
      assertError(await postBatch(server.port, body), 413, 'RequestBodyTooLarge');
      assertError(
        await postBatch(server.port, body, { chunkedEncoding: true, chunkBytes: 256 * 1024 }),
        413,
        'RequestBodyTooLarge',
      );
      assert.equal(await read(pk, 'r0'), undefined);
    });
  });

  test('the outer request must be signed; parts carry no Authorization', async () => {
    const res = await postBatch(
      server.port,
      changesetBody([op.insert(tableUrl(), { PartitionKey: 'unsigned', RowKey: 'r' })]),
      { auth: 'none' },
    );
    assertError(res, 403, 'AuthenticationFailed');
    assert.equal(await read('unsigned', 'r'), undefined);
  });
});
