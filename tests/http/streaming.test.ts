// Streamed bodies through the front door: a route with `streamsBody` reads a body larger than the
// front door's cap chunk by chunk, a reply with `stream` sends a body of any size with the length it
// names, and a client that goes away mid-body ends the handler's read with BodyAborted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { StorageError } from '../../src/errors.js';
import { loadAccounts } from '../../src/http/accounts.js';
import { tableSharedKey } from '../../src/http/auth.js';
import { BodyAborted } from '../../src/http/body.js';
import { createLogger } from '../../src/http/log.js';
import { FrontDoor } from '../../src/http/server.js';
import { route, type ServiceDefinition } from '../../src/http/service-definition.js';
import { bodyBytesMax } from '../../src/limits.js';
import { canonicalizedResource, describeResponse, hmacBase64, send, stringToSign } from '../helpers/http.js';
import { devAccount, devKey } from '../helpers/server.js';

type Resource = { readonly kind: 'thing' };
interface Seen {
  readonly sizes: number[];
  readonly failures: unknown[];
  aborted?: () => void;
}

const need = { resourceType: 'o', service: '', account: ['w'] } as const;
const sizeBytes = bodyBytesMax * 2 + 5;

async function* generated(totalBytes: number): AsyncGenerator<Buffer> {
  const piece = Buffer.alloc(64 * 1024, 7);
  for (let sent = 0; sent < totalBytes; sent += piece.length)
    yield piece.subarray(0, Math.min(piece.length, totalBytes - sent));
}

const streaming: ServiceDefinition<Resource, Seen> = {
  name: 'blob',
  endpointKey: 'BlobEndpoint',
  parseResource: () => ({ kind: 'thing' }),
  routes: [
    route({ resource: 'thing', method: 'PUT', operation: 'PutBlob', sas: need, streamsBody: true }, async (call) => {
      let size = 0;
      try {
        for await (const chunk of call.bodyStream!) size += chunk.length;
      } catch (error) {
        call.services.failures.push(error);
        call.services.aborted?.();
        throw error;
      }
      call.services.sizes.push(size);
      return { status: 201 };
    }),
    route({ resource: 'thing', method: 'GET', operation: 'GetBlob', sas: need }, async () => ({
      status: 200,
      headers: { 'Content-Length': String(sizeBytes), 'Content-Type': 'application/octet-stream' },
      stream: generated(sizeBytes),
    })),
  ],
  unrouted: () => new StorageError('InvalidUri'),
  errorFormat: () => ({ kind: 'xml' }),
  sharedKey: tableSharedKey,
  sas: { accountServiceLetter: 'b', resourceOf: () => undefined, findPolicy: async () => undefined },
  corsRules: async () => [],
  faultScope: () => undefined,
};

describe('streamed bodies', () => {
  const seen: Seen = { sizes: [], failures: [] };
  let server: Server;
  let port: number;

  before(async () => {
    const frontDoor = new FrontDoor({
      accounts: loadAccounts(undefined),
      log: createLogger('silent'),
      requestsInFlightMax: 8,
    });
    server = frontDoor.server(streaming, seen);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a streamed request body may exceed the front door cap, and arrives whole', async () => {
    const res = await send(port, { method: 'PUT', path: '/devstoreaccount1/c/b', body: Buffer.alloc(sizeBytes, 1) });
    assert.equal(res.status, 201, describeResponse(res));
    assert.deepEqual(seen.sizes.splice(0), [sizeBytes]);
  });

  test('a streamed reply carries its length and every byte', async () => {
    const res = await send(port, { method: 'GET', path: '/devstoreaccount1/c/b' });
    assert.equal(res.status, 200, describeResponse(res));
    assert.equal(res.headers['content-length'], String(sizeBytes));
    assert.equal(res.body.length, sizeBytes);
    assert.ok(res.body.every((byte) => byte === 7));
  });

  test('a client that goes away mid-body ends the read with BodyAborted', async () => {
    const aborted = new Promise<void>((resolve) => (seen.aborted = resolve));
    const date = new Date().toUTCString();
    const path = '/devstoreaccount1/c/b';
    const signature = hmacBase64(
      devKey,
      stringToSign('SharedKeyLite', {
        verb: 'PUT',
        contentMd5: '',
        contentType: '',
        date,
        resource: canonicalizedResource(devAccount, path),
      }),
    );
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-ms-date: ${date}\r\nx-ms-version: 2019-02-02\r\n` +
        `Authorization: SharedKeyLite ${devAccount}:${signature}\r\nContent-Length: 1000000\r\n\r\n`,
    );
    socket.write(Buffer.alloc(300_000, 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    await aborted;
    assert.ok(seen.failures.splice(0)[0] instanceof BodyAborted);
    assert.deepEqual(seen.sizes, []);
  });
});
