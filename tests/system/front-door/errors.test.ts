// Error rendering and robustness (Azure REST: status-and-error-codes2, table-service-error-codes): unknown routes and
// verbs, malformed bodies,
// garbage in every header, query parameter and framing slot. Nothing may produce a 5xx or kill the process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from '../../helpers/server.js';
import {
  assertError,
  describeResponse,
  devPath,
  entityPath,
  errorCode,
  exchangeRaw,
  rawStatus,
  send,
  type RawRequest,
  type RawResponse,
} from '../../helpers/http.js';
import { uniqueTableName } from '../../helpers/sdk.js';

describe('errors and robustness', () => {
  let server: RunningServer;
  let table: string;
  before(async () => {
    server = await startServer({ inMemory: true });
    table = uniqueTableName('err');
    const res = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
    assert.equal(res.status, 201, describeResponse(res));
    await send(server.port, { method: 'POST', path: devPath(table), body: { PartitionKey: 'p', RowKey: 'r' } });
  });
  after(async () => {
    if (!server) return;
    assert.equal(server.process.exitCode, null, `server died:\n${server.output().stderr}`);
    assert.equal(await server.stop(), 0, 'SIGTERM exits 0');
  });

  const call = (req: RawRequest) => send(server.port, req);

  function assertJsonError(res: RawResponse, what: string): void {
    assert.ok(res.status >= 400 && res.status < 500, `${what}: ${describeResponse(res)}`);
    const code = errorCode(res);
    assert.ok(code, `${what}: body must be a JSON odata.error: ${describeResponse(res)}`);
    assert.equal(res.headers['x-ms-error-code'], code, `${what}: x-ms-error-code header`);
    const message = res.json()['odata.error'].message;
    assert.equal(message.lang, 'en-US');
    assert.match(message.value, /\nRequestId:.+\nTime:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    assert.ok(message.value.includes(String(res.headers['x-ms-request-id'])), 'message carries the request id');
    assert.ok(!res.text.includes('\n'), 'error JSON is compact, one line');
  }

  test('unknown routes → 4xx JSON odata.error with x-ms-error-code', async () => {
    const paths = [
      devPath('foo/bar/baz'),
      devPath(`${table}(PartitionKey='p')`),
      devPath(`${table}(PartitionKey='p',RowKey='r',Extra='x')`),
      devPath(`${table}(RowKey=`),
      devPath("Tables('unterminated"),
      devPath(`${table}()/more`),
      '/devstoreaccount1',
      '/devstoreaccount1/',
    ];
    const failures: string[] = [];
    for (const path of paths) {
      const res = await call({ method: 'GET', path });
      try {
        assertJsonError(res, `GET ${path}`);
      } catch (e) {
        failures.push((e as Error).message);
      }
    }
    assert.deepEqual(failures, []);
  });

  test('a path without an account → 4xx', async () => {
    const res = await call({ method: 'GET', path: '/' });
    assert.ok(res.status >= 400 && res.status < 500, describeResponse(res));
  });

  test('unsupported verbs on a resource → 405 or 400 with a JSON error', async () => {
    const cases: Array<[string, string]> = [
      ['PUT', devPath('Tables')],
      ['DELETE', devPath('Tables')],
      ['PATCH', devPath("Tables('x')")],
      ['PUT', devPath(`${table}()`)],
      ['DELETE', devPath(`${table}()`)],
      ['PUT', devPath(table)],
      ['DELETE', devPath(table)],
    ];
    for (const [method, path] of cases) {
      const res = await call({
        method,
        path,
        body: method === 'DELETE' ? undefined : {},
        headers: { 'If-Match': '*' },
      });
      assert.ok(res.status === 405 || res.status === 400, `${method} ${path}: ${describeResponse(res)}`);
      assertJsonError(res, `${method} ${path}`);
    }
    // node:http itself refuses methods it does not know; whatever answers, it is not a 5xx.
    const unknown = await call({ method: 'FROB', path: devPath('Tables') });
    assert.ok(unknown.status >= 400 && unknown.status < 500, describeResponse(unknown));
  });

  test('malformed JSON bodies → 400 InvalidInput', async () => {
    const bodies = [
      '{"PartitionKey":"p",',
      '{"PartitionKey":"p","RowKey":"r"}x',
      '{"PartitionKey":"p" "RowKey":"r"}',
      "{'PartitionKey':'p','RowKey':'r'}",
      '[{"PartitionKey":"p","RowKey":"r"}]',
      '"just a string"',
      '42',
      'null',
      '',
      '\u0000\u0001garbage',
      '{"PartitionKey":"p","RowKey":"r","s":"\\ud800"}x',
      '{"PartitionKey":"p","RowKey":"r","n":01}',
      '{"PartitionKey":"p","RowKey":"r","n":NaN}',
    ];
    for (const body of bodies) {
      const res = await call({ method: 'POST', path: devPath(table), body });
      assertError(res, 400);
      if (body !== '' && body !== 'null' && !body.startsWith('['))
        assert.equal(errorCode(res), 'InvalidInput', `${JSON.stringify(body)}: ${describeResponse(res)}`);
    }
    for (const method of ['PUT', 'MERGE']) {
      const res = await call({
        method,
        path: entityPath(table, 'p', 'r'),
        body: '{"a":',
        headers: { 'If-Match': '*' },
      });
      assertError(res, 400, 'InvalidInput');
    }
  });

  test('invalid UTF-8 in a body → 4xx', async () => {
    const body = Buffer.concat([
      Buffer.from('{"PartitionKey":"p","RowKey":"utf","s":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}'),
    ]);
    const res = await call({ method: 'POST', path: devPath(table), body });
    assert.ok(res.status < 500, describeResponse(res));
  });

  describe('garbage never yields a 5xx', () => {
    const garbage = [
      '',
      ' ',
      '*',
      '""',
      'W/"',
      '\u00ff\u00fe\u00fd',
      '%%%%',
      '%E0%A4%A',
      'a'.repeat(8000),
      '0'.repeat(300),
      '-1',
      '99999999999999999999999',
      'application/json;odata=',
      ';;;===',
      '{"a":1}',
      'W/"datetime\'not-a-date\'"',
      'Sat, 99 Foo 2026 99:99:99 GMT',
    ];
    const headerSlots = [
      'Authorization',
      'x-ms-date',
      'Date',
      'x-ms-version',
      'Accept',
      'Content-Type',
      'Prefer',
      'If-Match',
      'If-None-Match',
      'X-HTTP-Method',
      'DataServiceVersion',
      'MaxDataServiceVersion',
      'x-ms-client-request-id',
      'Content-MD5',
      'Origin',
      'Range',
      'Expect',
    ];
    const targets: Array<Pick<RawRequest, 'method' | 'path' | 'body'>> = [
      { method: 'GET', path: devPath('Tables') },
      { method: 'POST', path: devPath('Tables'), body: { TableName: 'garbageTable' } },
      { method: 'POST', path: devPath(table), body: { PartitionKey: 'g', RowKey: 'g' } },
      { method: 'GET', path: entityPath(table, 'p', 'r') },
      { method: 'PUT', path: entityPath(table, 'p', 'r'), body: { PartitionKey: 'p', RowKey: 'r' } },
      { method: 'MERGE', path: entityPath(table, 'p', 'r'), body: { PartitionKey: 'p', RowKey: 'r' } },
      { method: 'DELETE', path: entityPath(table, 'g', 'g') },
      { method: 'GET', path: devPath(`${table}()`) },
    ];

    test('in every header slot', async () => {
      const failures: string[] = [];
      for (const target of targets) {
        for (const slot of headerSlots) {
          for (const value of garbage) {
            const res = await call({ ...target, headers: { [slot]: value } });
            if (res.status >= 500)
              failures.push(
                `${target.method} ${target.path} ${slot}=${JSON.stringify(value.slice(0, 40))}: ${describeResponse(res)}`,
              );
          }
        }
      }
      assert.deepEqual(failures, []);
    });

    test('in every query parameter', async () => {
      const params = [
        '$filter',
        '$top',
        '$select',
        '$format',
        'NextPartitionKey',
        'NextRowKey',
        'NextTableName',
        'timeout',
        'comp',
        'restype',
        '$orderby',
        '$skip',
        'sv',
        'sig',
      ];
      const failures: string[] = [];
      for (const path of [devPath('Tables'), devPath(`${table}()`), entityPath(table, 'p', 'r')]) {
        for (const param of params) {
          for (const value of [
            ...garbage.slice(0, 12),
            "PartitionKey eq 'p' and",
            '((((((((((((((((((((((((((((((((((((((((((((((((((((x',
            "startswith(PartitionKey,'p')",
          ]) {
            const res = await call({
              method: 'GET',
              path: `${path}${path.includes('?') ? '&' : '?'}${param}=${encodeURIComponent(value)}`,
            });
            if (res.status >= 500 && res.status !== 501)
              failures.push(`${path} ${param}=${JSON.stringify(value.slice(0, 40))}: ${describeResponse(res)}`);
          }
        }
      }
      assert.deepEqual(failures, []);
    });

    test('in paths and key literals', async () => {
      const paths = [
        devPath(`${table}(PartitionKey='%E0%A4',RowKey='x')`),
        devPath(`${table}(PartitionKey='%ZZ',RowKey='x')`),
        devPath(`${table}(PartitionKey='''',RowKey='''`),
        devPath(`${table}(PartitionKey=p,RowKey=r)`),
        devPath(`${table}(PartitionKey='p',RowKey='r'`),
        devPath(`${'x'.repeat(5000)}()`),
        devPath(`Tables('${'%00'.repeat(10)}')`),
        `/${'a'.repeat(300)}/Tables`,
        '//devstoreaccount1//Tables',
        '/devstoreaccount1/../devstoreaccount1/Tables',
        '*',
      ];
      const failures: string[] = [];
      for (const path of paths) {
        for (const method of ['GET', 'DELETE', 'PUT']) {
          const res = await call({
            method,
            path,
            body: method === 'PUT' ? { v: 1 } : undefined,
            headers: { 'If-Match': '*' },
          });
          if (res.status >= 500) failures.push(`${method} ${path.slice(0, 80)}: ${describeResponse(res)}`);
        }
      }
      assert.deepEqual(failures, []);
    });

    test('in the framing: broken request lines, headers and chunked encoding', async () => {
      const port = server.port;
      const exchanges = [
        'GARBAGE\r\n\r\n',
        'GET\r\n\r\n',
        'GET /devstoreaccount1/Tables HTTP/9.9\r\nHost: x\r\n\r\n',
        'GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
        'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}',
        'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}',
        'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
        'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}',
        'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\n{}',
        `GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(80 * 1024)}\r\n\r\n`,
        'GET /devstoreaccount1/Tables HTTP/1.1\r\n\r\n',
        'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"TableName":',
      ];
      const failures: string[] = [];
      for (const bytes of exchanges) {
        // Some of these leave the server waiting for more bytes: no answer within 3 s is fine too.
        const answer = await exchangeRaw(port, bytes, 300, 3_000);
        const status = rawStatus(answer);
        if (status !== undefined && status >= 500)
          failures.push(`${JSON.stringify(bytes.slice(0, 60))} → ${answer.slice(0, 200)}`);
      }
      assert.deepEqual(failures, []);
    });
  });

  test('the process is still alive and serving after all of it', async () => {
    assert.equal(server.process.exitCode, null);
    const res = await call({ method: 'GET', path: entityPath(table, 'p', 'r') });
    assert.equal(res.status, 200, describeResponse(res));
  });
});
