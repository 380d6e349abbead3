// The front door as other clients found it: failed preflights carry the error body and
// actual CORS replies expose what browser clients read; a client without credentials cannot make
// the server read its body; CONNECT, parse errors and odd expectations get Azure error bodies;
// x-ms-version, timeout and repeated SAS parameters are checked; a trailing slash and the Python
// SDK's secondary-endpoint path are accepted. Raw HTTP against a real server process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { changesetBody, op, absoluteUrl, entityResource, postBatch } from '../../helpers/batch.js';
import {
  assertError,
  describeResponse,
  devPath,
  entityPath,
  exchangeRaw,
  hmacBase64,
  rawStatus,
  send,
  type RawRequest,
} from '../../helpers/http.js';
import { serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';

const MiB = 1024 * 1024;

let server: RunningServer;
let table: string;

before(async () => {
  server = await startServer({ inMemory: true });
  const client = tableClient(server, uniqueTableName('wire'));
  await client.createTable();
  await client.createEntity({ partitionKey: 'p', rowKey: '1' });
  await client.createEntity({ partitionKey: 'p', rowKey: '2' });
  table = client.tableName;
  await serviceClient(server).setProperties({
    cors: [
      // A rule that lists no exposed headers: the ones browser clients need are exposed anyway.
      {
        allowedOrigins: '*',
        allowedMethods: 'GET,PUT,MERGE,DELETE',
        allowedHeaders: '*',
        exposedHeaders: '',
        maxAgeInSeconds: 60,
      },
    ],
  });
});
after(async () => {
  assert.equal(server.process.exitCode, null, `server died:\n${server.output().stderr}`);
  await server.stop();
});

const call = (request: RawRequest) => send(server.port, request);

/** Parses a raw HTTP/1.1 response text (latin1) into status, lower-case headers and body. */
function parseRaw(raw: string): { status: number | undefined; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: rawStatus(raw), headers, body: end < 0 ? '' : raw.slice(end + 4) };
}

/** The odata.error code of a raw response's JSON body (undefined when there is none). */
function rawErrorCode(raw: string): string | undefined {
  try {
    return JSON.parse(parseRaw(raw).body)['odata.error']?.code;
  } catch {
    return undefined;
  }
}

interface Streamed {
  /** What the server answered (latin1). */
  answer: string;
  /** Body bytes the client managed to hand to its kernel before the connection closed. */
  bodyBytesWritten: number;
  /** Whether the server closed the connection before the client reached its cap. */
  closed: boolean;
}

/**
 * Sends `head`, then body chunks from `chunk()` with backpressure until the server closes the
 * connection or `capBytes` were written, collecting the answer.
 */
function streamBody(head: string, chunk: () => Buffer, capBytes: number, pauseMs = 0): Promise<Streamed> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let answer = '';
    let written = 0;
    let closed = false;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ answer, bodyBytesWritten: written, closed });
    };
    const pump = (): void => {
      if (closed || settled) return;
      if (written >= capBytes) return settle();
      const bytes = chunk();
      written += bytes.length;
      const next = () => (pauseMs > 0 ? setTimeout(pump, pauseMs) : setImmediate(pump));
      if (socket.write(bytes)) next();
      else socket.once('drain', next);
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
    socket.on('data', (data) => (answer += data.toString('latin1')));
    const onClosed = () => {
      closed = true;
      settle();
    };
    socket.on('end', onClosed);
    socket.on('close', onClosed);
    socket.on('error', onClosed);
  });
}

describe('CORS (item 4)', () => {
  const preflight = (path: string, headers: Record<string, string>) =>
    call({ method: 'OPTIONS', path, headers, auth: 'none' });

  test('a failed preflight answers 403 with the CorsPreflightFailure body: JSON on tables, XML on the service', async () => {
    const denied = await preflight(devPath(`${table}()`), {
      Origin: 'http://a.example',
      'Access-Control-Request-Method': 'POST',
    });
    assertError(denied, 403, 'CorsPreflightFailure');
    assert.equal(denied.headers['x-ms-error-code'], 'CorsPreflightFailure');
    assert.equal(denied.headers['access-control-allow-origin'], undefined);
    const service = await preflight(devPath('?restype=service&comp=properties'), {
      Origin: 'http://a.example',
      'Access-Control-Request-Method': 'POST',
    });
    assert.equal(service.status, 403);
    assert.match(service.text, /<Error><Code>CorsPreflightFailure<\/Code><Message>CORS not enabled/);
    const incomplete = await preflight(devPath('Tables'), { Origin: 'http://a.example' });
    assertError(incomplete, 400, 'InvalidHeaderValue');
  });

  test('actual requests expose x-ms-request-id, continuation headers and ETag though the rule lists none', async () => {
    const page = await call({
      method: 'GET',
      path: devPath(`${table}()?$top=1`),
      headers: { Origin: 'http://a.example', 'x-ms-client-request-id': 'c1' },
    });
    assert.equal(page.status, 200, describeResponse(page));
    const exposed = String(page.headers['access-control-expose-headers']).split(',');
    for (const name of [
      'x-ms-request-id',
      'x-ms-client-request-id',
      'x-ms-version',
      'x-ms-continuation-NextPartitionKey',
      'x-ms-continuation-NextRowKey',
      'Date',
      'Content-Type',
    ]) {
      assert.ok(exposed.includes(name), `${name} in ${exposed.join(',')}`);
    }
    const write = await call({
      method: 'PUT',
      path: entityPath(table, 'p', '3'),
      body: { PartitionKey: 'p', RowKey: '3' },
      headers: { Origin: 'http://a.example' },
    });
    assert.equal(write.status, 204, describeResponse(write));
    assert.ok(String(write.headers['access-control-expose-headers']).split(',').includes('ETag'));
  });
});

describe('bodies of requests answered before they were read (item 5)', () => {
  const unsigned = (framing: string) =>
    `POST ${devPath('Tables')} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing}\r\n`;

  test('a 500 MiB body without credentials: 403, and the connection closes long before the body is through', async (t) => {
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const result = await streamBody(unsigned(`Content-Length: ${500 * MiB}\r\n`), () => piece, 64 * MiB);
    t.diagnostic(`client wrote ${result.bodyBytesWritten} body bytes before the server closed`);
    assert.ok(result.closed, `the server read ${result.bodyBytesWritten} bytes and kept the connection open`);
    // What the client got into its kernel: the server's small read plus the socket buffers.
    assert.ok(result.bodyBytesWritten < 32 * MiB, `${result.bodyBytesWritten} bytes went out before the close`);
    const answer = parseRaw(result.answer);
    assert.equal(answer.status, 403, result.answer.slice(0, 300));
    assert.equal(answer.headers['connection'], 'close');
    assert.equal(rawErrorCode(result.answer), 'AuthenticationFailed');
  });

  // The timeout only stops a failing run early (unfixed, the connection stayed open ~150 s); it
  // leaves room for a loaded machine.
  test(
    'a never-ending chunked body without credentials: 403 and closed, not held open',
    { timeout: 90_000 },
    async () => {
      const data = '{"TableName":"x"}';
      const chunk = Buffer.from(`${data.length.toString(16)}\r\n${data}\r\n`);
      const result = await streamBody(unsigned('Transfer-Encoding: chunked\r\n'), () => chunk, 1 * MiB, 50);
      assert.ok(result.closed, 'the connection stayed open');
      assert.equal(parseRaw(result.answer).status, 403, result.answer.slice(0, 300));
      assert.equal(parseRaw(result.answer).headers['connection'], 'close');
    },
  );

  test('a client that reads the reply only after sending more of its body still gets it: the close lingers', async () => {
    // The client sends 4 MiB and does not read for 300 ms. A server that closed at once with body
    // bytes unread would reset the connection, and the reset can wipe the 403 from the client's
    // receive buffer before it is read.
    const socket = net.connect(server.port, '127.0.0.1');
    socket.pause();
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => undefined);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(unsigned(`Content-Length: ${500 * MiB}\r\n`));
    const piece = Buffer.alloc(64 * 1024, 0x20);
    for (let i = 0; i < 64; i++) socket.write(piece);
    await new Promise((resolve) => setTimeout(resolve, 300));
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    socket.resume();
    await closed;
    assert.equal(parseRaw(answer).status, 403, answer.slice(0, 300));
    assert.equal(rawErrorCode(answer), 'AuthenticationFailed');
  });

  test('an anonymous preflight with a body is bounded the same way', async () => {
    const head = `OPTIONS ${devPath('Tables')} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://a.example\r\nAccess-Control-Request-Method: GET\r\nContent-Length: ${500 * MiB}\r\n\r\n`;
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const result = await streamBody(head, () => piece, 64 * MiB);
    assert.ok(
      result.closed && result.bodyBytesWritten < 32 * MiB,
      `${result.bodyBytesWritten} bytes, closed: ${result.closed}`,
    );
    assert.equal(parseRaw(result.answer).status, 200, result.answer.slice(0, 300));
  });
});

describe('requests node:http hands to other events (item 6)', () => {
  const cases: Array<[string, string, number, string]> = [
    ['CONNECT', 'CONNECT 127.0.0.1:80 HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n', 405, 'MethodNotAllowed'],
    ['an unknown verb', 'GARBAGE /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'InvalidHttpVerb'],
    [
      'a broken header line',
      'GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
      400,
      'InvalidInput',
    ],
    [
      'a bad Content-Length',
      'POST /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}',
      400,
      'InvalidInput',
    ],
    [
      'headers over 64 KiB',
      `GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(80 * 1024)}\r\n\r\n`,
      400,
      'InvalidHeaderValue',
    ],
    ['HTTP/1.1 without Host', 'GET /devstoreaccount1/Tables HTTP/1.1\r\n\r\n', 400, 'HostInformationNotPresent'],
    [
      'an unknown expectation',
      'GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n\r\n',
      403,
      'AuthenticationFailed',
    ],
    [
      'an upgrade request',
      'GET /devstoreaccount1/Tables HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
      403,
      'AuthenticationFailed',
    ],
  ];
  for (const [what, bytes, status, code] of cases) {
    test(`${what} → ${status} ${code} with the JSON error body`, async () => {
      const answer = await exchangeRaw(server.port, bytes, 1000);
      assert.equal(rawStatus(answer), status, answer.slice(0, 300));
      assert.equal(rawErrorCode(answer), code, answer.slice(0, 600));
      assert.equal(parseRaw(answer).headers['x-ms-error-code'], code);
    });
  }
});

describe('validation (item 7)', () => {
  test('an x-ms-version that is not YYYY-MM-DD → 400 InvalidHeaderValue (XML on service operations)', async () => {
    for (const version of ['abc', '2019-2-2', '2019-02-02x', '']) {
      assertError(
        await call({ method: 'GET', path: devPath('Tables'), headers: { 'x-ms-version': version } }),
        400,
        'InvalidHeaderValue',
      );
    }
    const xml = await call({
      method: 'GET',
      path: devPath('?restype=service&comp=properties'),
      headers: { 'x-ms-version': 'latest' },
    });
    assert.equal(xml.status, 400);
    assert.match(xml.text, /<Code>InvalidHeaderValue<\/Code>/);
    const future = await call({ method: 'GET', path: devPath('Tables'), headers: { 'x-ms-version': '2031-01-01' } });
    assert.equal(future.status, 200, describeResponse(future));
  });

  test('a timeout that is not a positive whole number of seconds → 400 InvalidQueryParameterValue', async () => {
    for (const timeout of ['-1', '1.5', 'abc', '0', '', '+5']) {
      assertError(
        await call({ method: 'GET', path: devPath(`Tables?timeout=${encodeURIComponent(timeout)}`) }),
        400,
        'InvalidQueryParameterValue',
      );
    }
    assert.equal((await call({ method: 'GET', path: devPath('Tables?timeout=30') })).status, 200);
  });

  test('a SAS with sig (or any SAS parameter) twice → 403 AuthenticationFailed', async () => {
    const stringToSign = `${devAccount}\nrl\nt\nsco\n\n2031-01-01T00:00:00Z\n\n\n2019-02-02\n`;
    const sig = encodeURIComponent(hmacBase64(devKey, stringToSign));
    const sas = `sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2031-01-01T00%3A00%3A00Z&sig=${sig}`;
    const good = await call({ method: 'GET', path: devPath(`Tables?${sas}`), auth: 'none' });
    assert.equal(good.status, 200, describeResponse(good));
    for (const repeated of [`${sas}&sig=${sig}`, `${sas}&sp=rl`]) {
      assertError(
        await call({ method: 'GET', path: devPath(`Tables?${repeated}`), auth: 'none' }),
        403,
        'AuthenticationFailed',
      );
    }
  });
});

describe('paths (items 8, 10)', () => {
  test('one trailing slash is ignored: POST /Tables/, POST /$batch/, entity and table paths', async () => {
    const name = uniqueTableName('slash');
    const created = await call({ method: 'POST', path: devPath('Tables/'), body: { TableName: name } });
    assert.equal(created.status, 201, describeResponse(created));
    const batch = changesetBody([op.insert(absoluteUrl(server.port, name), { PartitionKey: 'p', RowKey: 'b' })]);
    const submitted = await postBatch(server.port, batch, { path: devPath('$batch/') });
    assert.equal(submitted.status, 202, describeResponse(submitted));
    assert.equal((await call({ method: 'GET', path: `${entityPath(name, 'p', 'b')}/` })).status, 200);
    assert.equal((await call({ method: 'GET', path: devPath(`${name}()/`) })).status, 200);
    assert.equal(
      (await call({ method: 'POST', path: devPath(`${name}/`), body: { PartitionKey: 'p', RowKey: 'c' } })).status,
      201,
    );
    assert.equal((await call({ method: 'DELETE', path: devPath(`Tables('${name}')/`) })).status, 204);
    assertError(await call({ method: 'GET', path: devPath('Tables//') }), 400, 'InvalidUri');
    assertError(await call({ method: 'GET', path: devPath(`${entityResource(name, 'p', 'b')}/x`) }), 400, 'InvalidUri');
  });

  test("the Python SDK's secondary stats path /{account}-secondary/{account}/ with Shared Key as it signs it", async () => {
    const path = `/${devAccount}-secondary/${devAccount}/?restype=service&comp=stats`;
    // The helper signs `/{account}` + the path as sent:
    // /devstoreaccount1/devstoreaccount1-secondary/devstoreaccount1/?comp=stats.
    const stats = await call({
      method: 'GET',
      path,
      auth: { scheme: 'SharedKey' },
      headers: { Accept: 'application/xml' },
    });
    assert.equal(stats.status, 200, describeResponse(stats));
    assert.match(stats.text, /<StorageServiceStats><GeoReplication><Status>live<\/Status>/);
    const forged = await call({
      method: 'GET',
      path,
      auth: { scheme: 'SharedKey', signedTarget: `/${devAccount}/?restype=service&comp=properties` },
    });
    assert.equal(forged.status, 403, describeResponse(forged));
  });
});
