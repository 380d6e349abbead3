// Blob writes under contention and at their limits, against a real server on SQLite and PostgreSQL: appends and
// lease acquisitions racing on one blob (each check and its write are one compare-and-swap), a body
// declared larger than Put Blob allows (413 before a byte is read, the connection closed), a body
// without Content-Length (411), and SAS response-header overrides on Get Blob.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { BlobSASPermissions, BlobClient } from '@azure/storage-blob';
import { blobEndpoint, blobSend, blobServiceClient, blobVersion, uniqueContainerName } from '../../helpers/blob.js';
import { hmacBase64 } from '../../helpers/http.js';
import { assertQueueError, queueStringToSign } from '../../helpers/queue.js';
import { devAccount, devKey, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

/** Sends a request head and `bodyBytes` of its body on a raw socket; resolves to what came back. */
async function rawExchange(server: RunningServer, path: string, headers: Record<string, string>, bodyBytes: number) {
  const signed = { 'x-ms-version': blobVersion, 'x-ms-date': new Date().toUTCString(), ...headers };
  const signature = hmacBase64(devKey, queueStringToSign('SharedKey', 'PUT', path, signed));
  const head = Object.entries({ ...signed, Authorization: `SharedKey ${devAccount}:${signature}` })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const url = new URL(blobEndpoint(server));
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined); // the server may close while we still write
  socket.write(`PUT ${path} HTTP/1.1\r\nHost: ${url.host}\r\n${head}\r\n`);
  socket.write(Buffer.alloc(bodyBytes, 1));
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => socket.once('close', resolve));
  return Buffer.concat(chunks).toString('latin1');
}

for (const engine of serverEngines)
  describe(`blob writes under contention and at their limits on ${engine.label}`, () => {
    let server: RunningServer;
    let container: string;
    before(async () => {
      server = await startServer(engine.options);
      container = uniqueContainerName();
      await blobServiceClient(server).getContainerClient(container).create();
    });
    after(async () => {
      await server?.stop();
    });

    test('racing appends each land once, at distinct offsets', async () => {
      const log = blobServiceClient(server).getContainerClient(container).getAppendBlobClient('log');
      await log.create();
      const writers = 12;
      const answers = await Promise.all(
        Array.from({ length: writers }, (_, i) => log.appendBlock(`<${String(i).padStart(2, '0')}>`, 4)),
      );
      const offsets = answers.map((answer) => Number(answer.blobAppendOffset)).sort((a, b) => a - b);
      assert.deepEqual(
        offsets,
        Array.from({ length: writers }, (_, i) => i * 4),
      );
      const content = (await log.downloadToBuffer()).toString();
      assert.equal(content.length, writers * 4);
      assert.equal(new Set(content.match(/<\d\d>/g)).size, writers);
      assert.equal((await log.getProperties()).blobCommittedBlockCount, writers);
    });

    test('of leases acquired at once by different ids, exactly one wins', async () => {
      const blob = blobServiceClient(server).getContainerClient(container).getBlockBlobClient('contended');
      await blob.upload('x', 1);
      const tries = await Promise.allSettled(
        Array.from({ length: 8 }, () => blob.getBlobLeaseClient().acquireLease(-1)),
      );
      assert.equal(tries.filter((t) => t.status === 'fulfilled').length, 1);
      for (const failed of tries.filter((t) => t.status === 'rejected')) {
        assert.equal((failed as PromiseRejectedResult).reason.code, 'LeaseAlreadyPresent');
      }
    });

    test('a body declared over 5000 MiB is 413 before it is read, and the connection closes', async () => {
      const path = `/${devAccount}/${container}/huge`;
      const headers = { 'x-ms-blob-type': 'BlockBlob', 'Content-Length': String(5001 * 1024 * 1024) };
      const answer = await rawExchange(server, path, headers, 64 * 1024);
      assert.match(answer, /^HTTP\/1\.1 413 /);
      assert.match(answer, /x-ms-error-code: RequestBodyTooLarge/i);
      const head = await blobSend(server, { method: 'HEAD', target: `${container}/huge` });
      assert.equal(head.status, 404);
    });

    test('a body without Content-Length is 411 MissingContentLengthHeader', async () => {
      const path = `/${devAccount}/${container}/chunked`;
      const headers = { 'x-ms-blob-type': 'BlockBlob', 'Transfer-Encoding': 'chunked' };
      const answer = await rawExchange(server, path, headers, 0);
      assert.match(answer, /^HTTP\/1\.1 411 /);
      assert.match(answer, /<Code>MissingContentLengthHeader<\/Code>/);
    });

    test('a SAS with response-header overrides sets them on Get Blob', async () => {
      const blob = blobServiceClient(server).getContainerClient(container).getBlockBlobClient('override');
      await blob.upload('{}', 2, { blobHTTPHeaders: { blobContentType: 'application/json' } });
      const sasUrl = await blob.generateSasUrl({
        permissions: BlobSASPermissions.parse('r'),
        expiresOn: new Date(Date.now() + 3_600_000),
        contentType: 'text/plain',
        contentDisposition: 'attachment; filename=x.txt',
        cacheControl: 'max-age=5',
      });
      const got = await new BlobClient(sasUrl).download();
      assert.equal(got.contentType, 'text/plain');
      assert.equal(got.contentDisposition, 'attachment; filename=x.txt');
      assert.equal(got.cacheControl, 'max-age=5');
      const plain = await blob.download();
      assert.equal(plain.contentType, 'application/json');
    });

    test('Put Block List of 50,000 blocks (a body over the 4 MiB request cap) commits; one more is too long', async () => {
      const id = Buffer.alloc(64, 7).toString('base64');
      const staged = await blobSend(server, {
        method: 'PUT',
        target: `${container}/many?comp=block&blockid=${encodeURIComponent(id)}`,
        body: 'x',
      });
      assert.equal(staged.status, 201, staged.text);
      const list = (count: number) => `<BlockList>${`<Latest>${id}</Latest>`.repeat(count)}</BlockList>`;
      assert.ok(list(50_000).length > 4 * 1024 * 1024);
      const tooLong = await blobSend(server, {
        method: 'PUT',
        target: `${container}/many?comp=blocklist`,
        body: list(50_001),
      });
      assertQueueError(tooLong, 400, 'BlockListTooLong');
      const committed = await blobSend(server, {
        method: 'PUT',
        target: `${container}/many?comp=blocklist`,
        body: list(50_000),
      });
      assert.equal(committed.status, 201, committed.text);
      const head = await blobSend(server, { method: 'HEAD', target: `${container}/many` });
      assert.equal(head.headers['content-length'], '50000');
    });

    test('errors of blob writes are the service XML, never a 500', async () => {
      const res = await blobSend(server, { method: 'PUT', target: `${container}/b`, body: 'x' });
      assertQueueError(res, 400, 'MissingRequiredHeader');
    });
  });
