// Blob Batch (https://learn.microsoft.com/rest/api/storageservices/blob-batch) through the official
// JS SDK's BlobBatchClient (Shared Key, SAS URLs, container scope) and through raw HTTP laid out
// as the docs' example, on SQLite and on PostgreSQL: each part answered on its own, authorized on
// its own, and the batch's own refusals (malformed body, over 256 parts, mixed operations).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { AnonymousCredential, type BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { blobSas } from '../../helpers/blob-sas.js';
import { blobEndpoint, blobSend, blobServiceClient } from '../../helpers/blob.js';
import { describeResponse, hmacBase64, type RawResponse } from '../../helpers/http.js';
import { batchBody, blobNames, containerWith as made, deletePart } from '../../helpers/blob-batch.js';
import { refused } from '../../helpers/rest-errors.js';
import { devAccount, devKey, serverEngines, startServer, type RunningServer } from '../../helpers/server.js';

const CRLF = '\r\n';

/** A raw Blob Batch at service scope (`scope` '') or container scope (`scope` a container). */
function sendBatch(server: RunningServer, scope: string, body: string, contentType?: string): Promise<RawResponse> {
  const boundary = /^--([^\r\n]+)/.exec(body)?.[1] ?? 'batch_none';
  return blobSend(server, {
    method: 'POST',
    target: scope === '' ? '?comp=batch' : `${scope}?restype=container&comp=batch`,
    headers: { 'Content-Type': contentType ?? `multipart/mixed; boundary=${boundary}` },
    body,
  });
}

interface AnswerPart {
  readonly head: string;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The parts of a batch answer, read by the docs' layout (independently of the server's writer). */
function answerParts(res: RawResponse): AnswerPart[] {
  const boundary = /boundary=(batchresponse_[0-9a-f-]{36})$/.exec(res.headers['content-type'] ?? '')?.[1];
  assert.ok(boundary !== undefined, describeResponse(res));
  const text = res.body.toString('latin1');
  assert.ok(text.endsWith(`--${boundary}--${CRLF}`), text);
  const chunks = text
    .slice(0, text.lastIndexOf(`--${boundary}--`))
    .split(`--${boundary}${CRLF}`)
    .slice(1);
  return chunks.map((chunk) => {
    const [head, rest] = splitOnce(chunk);
    const [response, body] = splitOnce(rest);
    const [statusLine = '', ...headerLines] = response.split(CRLF);
    const headers = Object.fromEntries(headerLines.map((line) => line.split(': ', 2) as [string, string]));
    return { head, status: Number(statusLine.split(' ')[1]), headers, body };
  });
}

function splitOnce(text: string): [string, string] {
  const at = text.indexOf(`${CRLF}${CRLF}`);
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 4)];
}

for (const engine of serverEngines) {
  describe(`Blob Batch (${engine.label})`, () => {
    let server: RunningServer;
    let service: BlobServiceClient;

    before(async () => {
      server = await startServer(engine.options);
      service = blobServiceClient(server);
    });

    after(async () => {
      await server?.stop();
    });

    const containerWith = (count: number) =>
      made(
        service,
        Array.from({ length: count }, (_, index) => `b${index}`),
      );

    test('BlobBatchClient.deleteBlobs with Shared Key: each part 202, the blobs gone', async () => {
      const container = await containerWith(3);
      const batch = service.getBlobBatchClient();
      const clients = ['b0', 'b1', 'b2'].map((name) => container.getBlobClient(name));
      const answer = await batch.deleteBlobs(clients);
      assert.equal(answer._response.status, 202);
      assert.equal(answer.subResponsesSucceededCount, 3);
      assert.deepEqual(
        answer.subResponses.map((part) => part.status),
        [202, 202, 202],
      );
      assert.deepEqual(await blobNames(container), []);
    });

    test('a missing blob fails alone (404 BlobNotFound), the others are deleted', async () => {
      const container = await containerWith(2);
      const batch = container.getBlobBatchClient();
      const clients = ['b0', 'nothere', 'b1'].map((name) => container.getBlobClient(name));
      const answer = await batch.deleteBlobs(clients);
      assert.deepEqual(
        answer.subResponses.map((part) => [part.status, part.errorCode]),
        [
          [202, undefined],
          [404, 'BlobNotFound'],
          [202, undefined],
        ],
      );
      assert.equal(answer.subResponsesFailedCount, 1);
      assert.deepEqual(await blobNames(container), []);
    });

    test('SAS URLs: each part authorized by its own SAS; one without Delete gets its own 403', async () => {
      const container = await containerWith(3);
      const url = (blob: string, sp: string) =>
        `${container.getBlobClient(blob).url}?${blobSas({ sr: 'b', resource: `${container.containerName}/${blob}`, sp })}`;
      const batch = service.getBlobBatchClient();
      const answer = await batch.deleteBlobs(
        [url('b0', 'd'), url('b1', 'r'), url('b2', 'rd')],
        new AnonymousCredential(),
      );
      assert.deepEqual(
        answer.subResponses.map((part) => [part.status, part.errorCode]),
        [
          [202, undefined],
          [403, 'AuthorizationPermissionMismatch'],
          [202, undefined],
        ],
      );
      assert.deepEqual(await blobNames(container), ['b1']);
    });

    test('container scope: a container SAS submits the batch; its parts carry their own SAS', async () => {
      const container = await containerWith(2);
      const sas = blobSas({ sr: 'c', resource: container.containerName, sp: 'd' });
      const sasContainer = service.getContainerClient(container.containerName);
      const scoped = new (sasContainer.constructor as typeof ContainerClient)(
        `${sasContainer.url}?${sas}`,
        new AnonymousCredential(),
      ).getBlobBatchClient();
      const urls = ['b0', 'b1'].map((blob) => `${container.getBlobClient(blob).url}?${sas}`);
      const answer = await scoped.deleteBlobs(urls, new AnonymousCredential());
      assert.deepEqual(
        answer.subResponses.map((part) => part.status),
        [202, 202],
      );
      assert.deepEqual(await blobNames(container), []);
    });

    test('a service-scope batch refuses a container SAS (403), and deletes nothing', async () => {
      const container = await containerWith(1);
      const sas = blobSas({ sr: 'c', resource: container.containerName, sp: 'rwdl' });
      const { BlobServiceClient } = await import('@azure/storage-blob');
      const sasService = new BlobServiceClient(`${blobEndpoint(server)}?${sas}`, new AnonymousCredential());
      const url = `${container.getBlobClient('b0').url}?${sas}`;
      await refused(
        sasService.getBlobBatchClient().deleteBlobs([url], new AnonymousCredential()),
        403,
        'AuthenticationFailed',
      );
      assert.deepEqual(await blobNames(container), ['b0']);
    });

    test('raw: the docs layout, part by part, with Content-ID, request id, version and error XML', async () => {
      const container = await containerWith(1);
      const boundary = `batch_${randomUUID()}`;
      const name = container.containerName;
      const body = batchBody(boundary, [
        deletePart(0, `/${devAccount}/${name}/b0`),
        deletePart(1, `/${devAccount}/${name}/missing`),
      ]);
      const res = await sendBatch(server, '', body);
      assert.equal(res.status, 202, describeResponse(res));
      const parts = answerParts(res);
      assert.equal(parts.length, 2);
      assert.equal(parts[0]!.head, 'Content-Type: application/http\r\nContent-ID: 0');
      assert.equal(parts[0]!.status, 202);
      assert.equal(parts[0]!.headers['x-ms-delete-type-permanent'], 'true');
      assert.match(parts[0]!.headers['x-ms-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(parts[0]!.headers['x-ms-version'], '2021-08-06');
      assert.equal(parts[0]!.body, '');
      assert.equal(parts[1]!.head, 'Content-Type: application/http\r\nContent-ID: 1');
      assert.equal(parts[1]!.status, 404);
      assert.equal(parts[1]!.headers['x-ms-error-code'], 'BlobNotFound');
      assert.equal(parts[1]!.headers['Content-Type'], 'application/xml');
      assert.equal(Number(parts[1]!.headers['Content-Length']), Buffer.byteLength(parts[1]!.body) - 2);
      assert.match(parts[1]!.body, /^<\?xml version="1.0" encoding="utf-8"\?><Error><Code>BlobNotFound<\/Code>/);
      assert.ok(parts[1]!.body.endsWith(`</Error>${CRLF}`));
      assert.match(res.body.toString(), /\r\nHTTP\/1\.1 404 The specified blob does not exist\.\r\n/);
    });

    test('raw: a part signed wrongly gets its own 403 AuthenticationFailed; the batch is signed on its own', async () => {
      const container = await containerWith(2);
      const boundary = `batch_${randomUUID()}`;
      const name = container.containerName;
      const tampered = deletePart(0, `/${devAccount}/${name}/b0`).replace(
        /SharedKey devstoreaccount1:[^\r]+/,
        `SharedKey devstoreaccount1:${hmacBase64(devKey, 'not the string to sign')}`,
      );
      const res = await sendBatch(
        server,
        '',
        batchBody(boundary, [tampered, deletePart(1, `/${devAccount}/${name}/b1`)]),
      );
      const parts = answerParts(res);
      assert.deepEqual(
        parts.map((part) => [part.status, part.headers['x-ms-error-code']]),
        [
          [403, 'AuthenticationFailed'],
          [202, undefined],
        ],
      );
      assert.deepEqual(await blobNames(container), ['b0']);
    });

    test('raw: malformed bodies and content types are 400 for the whole batch', async () => {
      const container = await containerWith(1);
      const part = deletePart(0, `/${devAccount}/${container.containerName}/b0`);
      const boundary = `batch_${randomUUID()}`;
      const cases: [string, string | undefined, string][] = [
        [batchBody(boundary, [part]), 'application/xml', 'InvalidHeaderValue'],
        [batchBody(boundary, [part]), 'multipart/mixed', 'InvalidHeaderValue'],
        [`--${boundary}${CRLF}${part}`, undefined, 'InvalidInput'], // no close delimiter
        [`--${boundary}--${CRLF}`, undefined, 'InvalidInput'], // an empty batch
        [batchBody(boundary, ['Content-Type: text/plain\r\n\r\nhello\r\n']), undefined, 'InvalidInput'],
        [
          batchBody(boundary, ['Content-Type: application/http\r\n\r\nnot a request line\r\n']),
          undefined,
          'InvalidInput',
        ],
      ];
      for (const [body, contentType, code] of cases) {
        const res = await sendBatch(server, '', body, contentType ?? `multipart/mixed; boundary=${boundary}`);
        assert.equal(res.status, 400, describeResponse(res));
        assert.equal(res.headers['x-ms-error-code'], code, describeResponse(res));
      }
      assert.deepEqual(await blobNames(container), ['b0']);
    });

    test('raw: 256 parts are served, 257 are 400 ExceedsMaxBatchRequestCount and delete nothing', async () => {
      const container = await containerWith(257);
      const name = container.containerName;
      const boundary = `batch_${randomUUID()}`;
      const parts = Array.from({ length: 257 }, (_, index) => deletePart(index, `/${devAccount}/${name}/b${index}`));
      const over = await sendBatch(server, '', batchBody(boundary, parts));
      assert.equal(over.status, 400, describeResponse(over));
      assert.equal(over.headers['x-ms-error-code'], 'ExceedsMaxBatchRequestCount');
      assert.equal((await blobNames(container)).length, 257);
      const full = await sendBatch(server, name, batchBody(boundary, parts.slice(0, 256)));
      assert.equal(full.status, 202, describeResponse(full));
      const answered = answerParts(full);
      assert.equal(answered.length, 256);
      assert.ok(answered.every((part) => part.status === 202));
      assert.deepEqual(await blobNames(container), ['b256']);
    });

    test('raw: a body over 4 MiB is 413 RequestBodyTooLarge', async () => {
      const boundary = `batch_${randomUUID()}`;
      const padding = 'x'.repeat(4 * 1024 * 1024);
      const res = await sendBatch(server, '', `${batchBody(boundary, [])}${padding}`);
      assert.equal(res.status, 413, describeResponse(res));
      assert.equal(res.headers['x-ms-error-code'], 'RequestBodyTooLarge');
    });

    test('raw: container scope refuses a part of another container: the batch runs nothing', async () => {
      const a = await containerWith(1);
      const b = await containerWith(1);
      const boundary = `batch_${randomUUID()}`;
      const body = batchBody(boundary, [
        deletePart(0, `/${devAccount}/${a.containerName}/b0`),
        deletePart(1, `/${devAccount}/${b.containerName}/b0`),
      ]);
      const res = await sendBatch(server, a.containerName, body);
      assert.equal(res.status, 202, describeResponse(res));
      const parts = answerParts(res);
      assert.equal(parts.length, 1);
      assert.equal(parts[0]!.head, 'Content-Type: application/http\r\nContent-ID: 1');
      assert.equal(parts[0]!.status, 400);
      assert.equal(parts[0]!.headers['x-ms-error-code'], 'InvalidInput');
      assert.deepEqual(await blobNames(a), ['b0']);
      assert.deepEqual(await blobNames(b), ['b0']);
    });

    test('raw: a part that is neither Delete Blob nor Set Blob Tier refuses the batch', async () => {
      const container = await containerWith(1);
      const boundary = `batch_${randomUUID()}`;
      const path = `/${devAccount}/${container.containerName}?restype=container`;
      const body = batchBody(boundary, [
        deletePart(0, `/${devAccount}/${container.containerName}/b0`),
        deletePart(1, path),
      ]);
      const parts = answerParts(await sendBatch(server, '', body));
      assert.deepEqual(
        parts.map((part) => [part.status, part.headers['x-ms-error-code']]),
        [[400, 'InvalidInput']],
      );
      assert.deepEqual(await blobNames(container), ['b0']);
    });
  });
}
