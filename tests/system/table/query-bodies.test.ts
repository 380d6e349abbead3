// Query pages are written into reused buffers (src/table/wire/byte-writer.ts): a buffer goes back
// to the pool only once its response has been handed to the OS. Many pages at every level, with
// slow readers and a pipelining reader that holds several responses queued in the server (more
// than the kernel's socket buffers take), must each give the answer the same query gives alone:
// byte for byte when both are one page, entity for entity when the time budget split either.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import { devKey, startServer, type RunningServer } from '../../helpers/server.js';
import {
  canonicalizedResource,
  defaultVersion,
  describeResponse,
  devPath,
  hmacBase64,
  send,
  stringToSign,
  type RawRequest,
} from '../../helpers/http.js';
import { absoluteUrl, changesetBody, op, postBatch } from '../../helpers/batch.js';
import { uniqueTableName } from '../../helpers/sdk.js';

const entityCount = 1000;
const batchSize = 100;
const accepts = [
  'application/json;odata=nometadata',
  'application/json;odata=minimalmetadata',
  'application/json;odata=fullmetadata',
];

function entity(i: number): Record<string, unknown> & { PartitionKey: string; RowKey: string } {
  return {
    PartitionKey: 'p',
    RowKey: `r${String(i).padStart(4, '0')}`,
    // ~1.2 KB of text, partly outside ASCII, so a full page (~1.5 MB) is large but still pooled.
    Text: `${i} é😀 "quoted" \\ `.repeat(40),
    'Big@odata.type': 'Edm.Int64',
    Big: `${BigInt(i) * 1_000_000_007n}`,
    Ratio: i + 0.25,
    'Whole@odata.type': 'Edm.Double',
    Whole: String(i),
    Flag: i % 2 === 0,
    'When@odata.type': 'Edm.DateTime',
    When: '2024-05-06T07:08:09.1234567Z',
    'Id@odata.type': 'Edm.Guid',
    Id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  };
}

describe('query pages in reused buffers', () => {
  let server: RunningServer;
  const table = uniqueTableName('bodies');

  before(async () => {
    server = await startServer({});
    const created = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
    assert.equal(created.status, 201, describeResponse(created));
    for (let from = 0; from < entityCount; from += batchSize) {
      const inserts = Array.from({ length: batchSize }, (_, i) =>
        op.insert(absoluteUrl(server.port, table), entity(from + i)),
      );
      const res = await postBatch(server.port, changesetBody(inserts));
      assert.equal(res.status, 202, describeResponse(res));
      assert.doesNotMatch(res.text, /HTTP\/1\.1 [45]\d\d/);
    }
  });
  after(async () => {
    await server?.stop();
  });

  /** Every level, whole pages and small ones, with and without $select. */
  const queries: RawRequest[] = accepts.flatMap((accept) =>
    ['$top=1000', '$top=37', '$top=1000&$select=Text,Big,RowKey', '$top=5&$select=Missing'].map((options) => ({
      method: 'GET',
      path: `${devPath(`${table}()`)}?$filter=${encodeURIComponent("PartitionKey eq 'p'")}&${options}`,
      headers: { Accept: accept },
    })),
  );

  test('concurrent queries and slow readers get the answer each query gets alone', async () => {
    const expected: Answer[] = [];
    for (const query of queries) expected.push(await queryAnswer(server.port, query));
    const wholePages = queries.map((_, i) => i).filter((i) => queries[i]!.path.endsWith('$top=1000'));
    const runs: Promise<void>[] = [];
    for (let round = 0; round < 3; round++) {
      // Slow readers first: their pages stay in the server's buffers while the others are written.
      for (const i of wholePages) {
        const what = `slow reader of query ${i} (${queries[i]!.path})`;
        runs.push(
          queryAnswer(server.port, queries[i]!, { pauseResponseMs: 300 }).then((got) =>
            assertSameAnswer(got, expected[i]!, what),
          ),
        );
      }
      queries.forEach((query, i) => {
        runs.push(
          queryAnswer(server.port, query).then((got) =>
            assertSameAnswer(got, expected[i]!, `query ${i} (${query.path})`),
          ),
        );
      });
    }
    await Promise.all(runs);
  });

  test('pipelined responses queued behind an unread one keep their bytes', async () => {
    const whole = queries.filter((query) => query.path.endsWith('$top=1000'));
    const expected: Answer[] = [];
    for (const query of whole) expected.push(await queryAnswer(server.port, query));
    // Eight 1.5 MB pages on one connection that reads nothing for a while: most of them wait in
    // the server, in their pooled buffers, while other queries are answered.
    const order = Array.from({ length: 8 }, (_, i) => i % whole.length);
    const socket = net.connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.pause();
    socket.write(order.map((i) => signedRequestText(server.port, whole[i]!)).join(''));
    const others: Promise<void>[] = [];
    for (let round = 0; round < 4; round++) {
      queries.forEach((query, i) =>
        others.push(send(server.port, query).then((res) => assert.equal(res.status, 200, `query ${i}`))),
      );
    }
    await Promise.all(others);
    const responses = await readResponses(socket, order.length);
    socket.destroy();
    responses.forEach((response, n) => assertFirstPage(response, expected[order[n]!]!, `pipelined response ${n}`));
  });
});

/**
 * A query's answer: its pages, following continuations until `$top` entities or the last page.
 * A page may end early with a continuation (the time budget runs out on a busy machine), so only
 * the whole answer is comparable; when both answers are one page, their bytes are compared too.
 */
interface Answer {
  readonly pages: readonly Buffer[];
  /** The page body without `value` (e.g. odata.metadata), the same on every page. */
  readonly envelope: unknown;
  readonly entities: readonly unknown[];
}

async function queryAnswer(port: number, query: RawRequest, firstPage: Partial<RawRequest> = {}): Promise<Answer> {
  const top = Number(/\$top=(\d+)/.exec(query.path)![1]);
  const pages: Buffer[] = [];
  const entities: unknown[] = [];
  let envelope: unknown;
  let path = query.path;
  for (;;) {
    const res = await send(port, { ...query, ...(pages.length === 0 ? firstPage : {}), path });
    assert.equal(res.status, 200, describeResponse(res));
    const { value, ...rest } = res.json() as { value: unknown[] };
    if (pages.length === 0) envelope = rest;
    else assert.deepEqual(rest, envelope, `page ${pages.length} of ${query.path}`);
    pages.push(res.body);
    entities.push(...value);
    const next = continuationOf(res.headers);
    if (next === undefined || entities.length >= top) break;
    path = `${query.path}&${next}`;
  }
  return { pages, envelope, entities: entities.slice(0, top) };
}

function continuationOf(headers: IncomingHttpHeaders): string | undefined {
  const pk = headers['x-ms-continuation-nextpartitionkey'];
  const rk = headers['x-ms-continuation-nextrowkey'];
  if (typeof pk !== 'string') return undefined;
  return (
    `NextPartitionKey=${encodeURIComponent(pk)}` +
    (typeof rk === 'string' ? `&NextRowKey=${encodeURIComponent(rk)}` : '')
  );
}

function assertSameAnswer(actual: Answer, expected: Answer, what: string): void {
  if (actual.pages.length === 1 && expected.pages.length === 1) {
    assert.ok(actual.pages[0]!.equals(expected.pages[0]!), `${what}: the page's bytes`);
    return;
  }
  assert.deepEqual(actual.envelope, expected.envelope, what);
  assert.deepEqual(actual.entities, expected.entities, what);
}

/**
 * One response read off a socket as the first page of the expected answer: byte-identical when it
 * holds all of it; otherwise valid JSON whose entities begin the answer, with a continuation.
 */
function assertFirstPage(response: { head: string; body: Buffer }, expected: Answer, what: string): void {
  if (expected.pages.length === 1 && response.body.equals(expected.pages[0]!)) return;
  const { value, ...rest } = JSON.parse(response.body.toString('utf8')) as { value: unknown[] };
  assert.deepEqual(rest, expected.envelope, what);
  assert.deepEqual(value, expected.entities.slice(0, value.length), what);
  if (value.length < expected.entities.length) {
    assert.match(
      response.head,
      /\r\nx-ms-continuation-nextpartitionkey: /i,
      `${what}: a short page has a continuation`,
    );
  }
}

/** A GET as request text, signed Shared Key Lite as the development account. */
function signedRequestText(port: number, query: RawRequest): string {
  const date = new Date().toUTCString();
  const signature = hmacBase64(
    devKey,
    stringToSign('SharedKeyLite', {
      verb: 'GET',
      contentMd5: '',
      contentType: '',
      date,
      resource: canonicalizedResource('devstoreaccount1', query.path),
    }),
  );
  const accept = (query.headers?.['Accept'] as string | undefined) ?? '';
  return (
    `GET ${query.path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-ms-date: ${date}\r\nx-ms-version: ${defaultVersion}\r\n` +
    `Accept: ${accept}\r\nDataServiceVersion: 3.0\r\nAuthorization: SharedKeyLite devstoreaccount1:${signature}\r\n\r\n`
  );
}

/** Reads `count` responses with Content-Length bodies off the socket, in order. */
async function readResponses(socket: net.Socket, count: number): Promise<{ head: string; body: Buffer }[]> {
  let pending = Buffer.alloc(0);
  const bodies: { head: string; body: Buffer }[] = [];
  socket.resume();
  for await (const chunk of socket) {
    pending = Buffer.concat([pending, chunk as Buffer]);
    for (;;) {
      const headEnd = pending.indexOf('\r\n\r\n');
      if (headEnd < 0) break;
      const head = pending.subarray(0, headEnd).toString('latin1');
      assert.match(head, /^HTTP\/1\.1 200 /);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);
      if (pending.length < headEnd + 4 + length) break;
      bodies.push({ head, body: pending.subarray(headEnd + 4, headEnd + 4 + length) });
      pending = pending.subarray(headEnd + 4 + length);
      if (bodies.length === count) return bodies;
    }
  }
  throw new Error(`the connection ended after ${bodies.length} of ${count} responses`);
}
