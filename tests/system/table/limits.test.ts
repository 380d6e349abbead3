// Every entity limit at its edge and one step past it, with the exact error code
// (Azure REST: understanding-the-table-service-data-model, table-service-error-codes, src/limits.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';
import {
  assertError,
  canonicalizedResource,
  describeResponse,
  devPath,
  entityPath,
  exchangeRaw,
  hmacBase64,
  rawStatus,
  send,
  stringToSign,
  type RawRequest,
} from '../../helpers/http.js';
import { uniqueTableName } from '../../helpers/sdk.js';

const MiB = 1024 * 1024;

/** `count` custom properties named `${prefix}0…`, each with `value`. */
function props(count: number, value: unknown, prefix = 'p'): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, value]));
}

describe('limits', () => {
  let server: RunningServer;
  let table: string;
  let row = 0;
  before(async () => {
    server = await startServer({ inMemory: true });
    table = uniqueTableName('lim');
    const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
    assert.equal(res.status, 201, describeResponse(res));
  });
  after(async () => {
    await server?.stop();
  });

  const nextRow = () => `r${row++}`;
  const insert = (body: object | string | Buffer, extra: Partial<RawRequest> = {}) =>
    send(server.port, {
      method: 'POST',
      path: devPath(table),
      body,
      headers: { Prefer: 'return-no-content' },
      ...extra,
    });
  const insertProps = (custom: Record<string, unknown>, rk = nextRow()) =>
    insert({ PartitionKey: 'p', RowKey: rk, ...custom });
  const write = (method: string, rk: string, custom: Record<string, unknown>) =>
    send(server.port, {
      method,
      path: entityPath(table, 'p', rk),
      body: { PartitionKey: 'p', RowKey: rk, ...custom },
      headers: { 'If-Match': '*' },
    });
  const readBack = (rk: string) =>
    send(server.port, {
      method: 'GET',
      path: entityPath(table, 'p', rk),
      headers: { Accept: 'application/json;odata=nometadata' },
    });

  async function assertAccepted(res: Promise<Awaited<ReturnType<typeof insert>>>, what: string): Promise<void> {
    const r = await res;
    assert.ok(r.status === 204 || r.status === 201, `${what}: ${describeResponse(r)}`);
  }

  test('252 custom properties are fine; 253 → TooManyProperties (insert, replace, merge)', async () => {
    await assertAccepted(insertProps(props(252, 1)), '252 properties');
    assertError(await insertProps(props(253, 1)), 400, 'TooManyProperties');
    const rk = nextRow();
    await assertAccepted(insertProps(props(200, 1), rk), '200 properties');
    assertError(await write('PUT', rk, props(253, 1)), 400, 'TooManyProperties');
    assertError(await write('MERGE', rk, props(53, 2, 'q')), 400, 'TooManyProperties');
    await assertAccepted(write('MERGE', rk, props(52, 2, 'q')), 'merge up to exactly 252');
  });

  test('property name of 255 characters is fine; 256 → PropertyNameTooLong', async () => {
    await assertAccepted(insertProps({ ['n'.repeat(255)]: 1 }), '255-character name');
    assertError(await insertProps({ ['n'.repeat(256)]: 1 }), 400, 'PropertyNameTooLong');
  });

  test('invalid property names → PropertyNameInvalid; identifier-like names are fine', async () => {
    for (const name of ['bad-name', 'bad name', 'a\u0001b', '1abc', '']) {
      assertError(await insertProps({ [name]: 1 }), 400, 'PropertyNameInvalid');
    }
    await assertAccepted(insertProps({ _under: 1, a1: 2, CamelCase: 3 }), 'identifier names');
  });

  test('strings: 32,768 UTF-16 code units are fine, 32,769 → PropertyValueTooLarge (units, not bytes)', async () => {
    await assertAccepted(insertProps({ s: 'a'.repeat(32768) }), '32,768 ASCII');
    await assertAccepted(insertProps({ s: '\u20ac'.repeat(32768) }), '32,768 × € (98,304 UTF-8 bytes)');
    await assertAccepted(insertProps({ s: '\u{1F600}'.repeat(16384) }), '16,384 emoji = 32,768 units');
    assertError(await insertProps({ s: 'a'.repeat(32769) }), 400, 'PropertyValueTooLarge');
    assertError(await insertProps({ s: '\u{1F600}'.repeat(16384) + 'a' }), 400, 'PropertyValueTooLarge');
    const rk = nextRow();
    await assertAccepted(insertProps({ s: 'x' }, rk), 'small');
    assertError(await write('MERGE', rk, { s: 'a'.repeat(32769) }), 400, 'PropertyValueTooLarge');
  });

  test('binary: 65,536 bytes are fine, 65,537 → PropertyValueTooLarge', async () => {
    const binary = (n: number) => ({ b: Buffer.alloc(n, 7).toString('base64'), 'b@odata.type': 'Edm.Binary' });
    const rk = nextRow();
    await assertAccepted(insertProps(binary(65536), rk), '64 KiB binary');
    const got = await readBack(rk);
    assert.equal(Buffer.from(got.json().b, 'base64').length, 65536);
    assertError(await insertProps(binary(65537)), 400, 'PropertyValueTooLarge');
  });

  describe('whole entity over 1 MiB → EntityTooLarge', () => {
    // '€' is 2 bytes in UTF-16 and 3 in UTF-8, so these are over (or under) 1 MiB by either accounting.
    const euros = '\u20ac'.repeat(32000);

    test('insert: 14 × 32,000 ASCII is fine, 20 × 32,000 € → EntityTooLarge', async () => {
      await assertAccepted(insertProps(props(14, 'a'.repeat(32000))), '~0.9 MiB entity');
      assertError(await insertProps(props(20, euros)), 400, 'EntityTooLarge');
    });

    test('update (replace) that makes the entity too large → EntityTooLarge, entity unchanged', async () => {
      const rk = nextRow();
      await assertAccepted(insertProps({ small: 1 }, rk), 'small');
      assertError(await write('PUT', rk, props(20, euros)), 400, 'EntityTooLarge');
      assert.deepEqual(Object.keys((await readBack(rk)).json()).sort(), [
        'PartitionKey',
        'RowKey',
        'Timestamp',
        'small',
      ]);
    });

    test('merge that makes the merged entity too large → EntityTooLarge, entity unchanged', async () => {
      const rk = nextRow();
      await assertAccepted(insertProps(props(10, euros, 'a'), rk), '10 × 32,000 €');
      assertError(await write('MERGE', rk, props(10, euros, 'b')), 400, 'EntityTooLarge');
      const kept = (await readBack(rk)).json();
      assert.equal(Object.keys(kept).filter((k) => k.startsWith('b')).length, 0);
      assert.equal(Object.keys(kept).filter((k) => k.startsWith('a')).length, 10);
      // The same merge body on an empty entity is fine: it is the merged result that is too large.
      const other = nextRow();
      await assertAccepted(insertProps({}, other), 'empty');
      await assertAccepted(write('MERGE', other, props(10, euros, 'b')), 'merge into a small entity');
    });
  });

  test('keys: 1,024 characters are fine, 1,025 → 400 (PartitionKey and RowKey)', async () => {
    const long = 'k'.repeat(1024);
    await assertAccepted(insert({ PartitionKey: long, RowKey: 'r' }), '1,024-character PartitionKey');
    await assertAccepted(insert({ PartitionKey: 'p', RowKey: long }), '1,024-character RowKey');
    const read = await send(server.port, { method: 'GET', path: entityPath(table, 'p', long) });
    assert.equal(read.status, 200, describeResponse(read));
    for (const body of [
      { PartitionKey: long + 'k', RowKey: 'r' },
      { PartitionKey: 'p', RowKey: long + 'k' },
    ]) {
      const res = await insert(body);
      assert.equal(res.status, 400, describeResponse(res));
    }
  });

  test('forbidden key characters → 400 OutOfRangeInput; neighbours are fine', async () => {
    const forbidden = [
      '/',
      '\\',
      '#',
      '?',
      '\u0000',
      '\u0001',
      '\t',
      '\n',
      '\r',
      '\u001f',
      '\u007f',
      '\u0080',
      '\u009f',
    ];
    for (const ch of forbidden) {
      for (const body of [
        { PartitionKey: `a${ch}b`, RowKey: 'r' },
        { PartitionKey: 'p', RowKey: `a${ch}b` },
      ]) {
        const res = await insert(body);
        assertError(res, 400, 'OutOfRangeInput');
      }
    }
    for (const ch of [' ', '~', '\u00a0', '\u{1F600}', "'", '"', '%', '&']) {
      await assertAccepted(insert({ PartitionKey: 'ok', RowKey: `a${ch}b${row++}` }), JSON.stringify(ch));
    }
  });

  test('a forbidden character in the URL keys of an upsert → 400', async () => {
    for (const key of ['a%2Fb', 'a%23b', 'a%3Fb', 'a%5Cb', 'a%01b']) {
      const res = await send(server.port, {
        method: 'PUT',
        path: devPath(`${table}(PartitionKey='${key}',RowKey='r')`),
        body: { PartitionKey: decodeURIComponent(key), RowKey: 'r', v: 1 },
      });
      assert.equal(res.status, 400, `${key}: ${describeResponse(res)}`);
    }
  });

  test('unannotated integers outside Int32 → 400 InvalidInput; the Int32 edges are fine', async () => {
    for (const literal of ['2147483648', '-2147483649', '99999999999', '9223372036854775807']) {
      const res = await insert(`{"PartitionKey":"p","RowKey":"${nextRow()}","n":${literal}}`);
      assertError(res, 400, 'InvalidInput');
    }
    await assertAccepted(
      insert(`{"PartitionKey":"p","RowKey":"${nextRow()}","n":2147483647,"m":-2147483648}`),
      'Int32 edges',
    );
  });

  test('missing or null PartitionKey/RowKey → 400 PropertiesNeedValue', async () => {
    for (const body of [
      { RowKey: 'r' },
      { PartitionKey: 'p' },
      {},
      { PartitionKey: null, RowKey: 'r' },
      { PartitionKey: 'p', RowKey: null },
    ]) {
      assertError(await insert(body), 400, 'PropertiesNeedValue');
    }
  });

  describe('request body size', () => {
    test('a body of exactly 4 MiB is read (not 413)', async () => {
      const head = `{"PartitionKey":"p","RowKey":"${nextRow()}"`;
      const body = head + ' '.repeat(4 * MiB - head.length - 1) + '}';
      assert.equal(Buffer.byteLength(body), 4 * MiB);
      await assertAccepted(insert(body), '4 MiB body');
    });

    test('4 MiB + 1 byte with Content-Length → 413 RequestBodyTooLarge', async () => {
      // Raw socket: a server may answer 413 and close before the body is written, which node:http's
      // client reports as EPIPE instead of the response.
      const head = `{"PartitionKey":"p","RowKey":"${nextRow()}"`;
      const body = head + ' '.repeat(4 * MiB - head.length) + '}';
      const path = devPath(table);
      const date = new Date().toUTCString();
      const signature = hmacBase64(
        devKey,
        stringToSign('SharedKeyLite', {
          verb: 'POST',
          contentMd5: '',
          contentType: '',
          date,
          resource: canonicalizedResource(devAccount, path),
        }),
      );
      const request =
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nx-ms-date: ${date}\r\nx-ms-version: 2019-02-02\r\n` +
        `Authorization: SharedKeyLite ${devAccount}:${signature}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
      const answer = await exchangeRaw(server.port, request, 2000);
      assert.equal(rawStatus(answer), 413, answer.slice(0, 300));
      assert.match(answer, /"code":"RequestBodyTooLarge"/);
    });

    test('over 4 MiB with Transfer-Encoding: chunked → 413 RequestBodyTooLarge', async () => {
      const head = `{"PartitionKey":"p","RowKey":"${nextRow()}","s":"`;
      const body = Buffer.from(head + 'x'.repeat(5 * MiB) + '"}');
      assertError(await insert(body, { chunkedEncoding: true, chunkBytes: 256 * 1024 }), 413, 'RequestBodyTooLarge');
    });

    test('the server still answers after refusing large bodies', async () => {
      await assertAccepted(insertProps({ ok: true }), 'normal insert');
    });
  });
});
