// Blob wire details other clients rely on, each checked against the REST pages
// (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api) or the official SDK's
// recorded tests: through @azure/storage-blob and raw HTTP signed with Shared Key, on SQLite and on
// PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { BlobServiceClient, ContainerClient } from '@azure/storage-blob';
import { Crc64 } from '../../../src/blob/content/crc64.js';
import { blobSend, blobServiceClient, uniqueContainerName, type BlobRequest } from '../../helpers/blob.js';
import type { RawResponse } from '../../helpers/http.js';
import { assertQueueError } from '../../helpers/queue.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

type Send = (request: BlobRequest) => Promise<RawResponse>;

interface Context {
  readonly send: Send;
  readonly service: BlobServiceClient;
}

/** An XML error answer; a HEAD's has no body, only x-ms-error-code. */
function assertError(response: RawResponse, status: number, code: string): void {
  if (response.body.length > 0) return assertQueueError(response, status, code);
  assert.equal(response.status, status);
  assert.equal(response.headers['x-ms-error-code'], code);
}

async function freshContainer({ service }: Context): Promise<ContainerClient> {
  const container = service.getContainerClient(uniqueContainerName());
  await container.create();
  return container;
}

function put(send: Send, target: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return send({ method: 'PUT', target, body, headers: { 'x-ms-blob-type': 'BlockBlob', ...headers } });
}

const md5Of = (data: string | Buffer): string => createHash('md5').update(data).digest('base64');
const crc64Of = (data: string | Buffer): string => new Crc64().update(Buffer.from(data)).digest().toString('base64');
const blockTarget = (blob: string, id: string): string => `${blob}?comp=block&blockid=${encodeURIComponent(id)}`;

type Case = readonly [string, (context: Context) => Promise<void>];

const cases: Case[] = [];
cases.push([
  'x-ms-content-crc64 is verified and answered on Put Blob, Put Block and Append Block',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    const crc = { 'x-ms-content-crc64': crc64Of('hello') };
    const blob = await put(send, `${c}/b`, 'hello', crc);
    assert.equal(blob.headers['x-ms-content-crc64'], crc64Of('hello'));
    const id = Buffer.from('one').toString('base64');
    const block = await send({ method: 'PUT', target: blockTarget(`${c}/k`, id), body: 'hello', headers: crc });
    assert.equal(block.headers['x-ms-content-crc64'], crc64Of('hello'));
    await send({ method: 'PUT', target: `${c}/a`, headers: { 'x-ms-blob-type': 'AppendBlob' } });
    const append = await send({ method: 'PUT', target: `${c}/a?comp=appendblock`, body: 'hello', headers: crc });
    assert.equal(append.status, 201, append.text);
    assert.equal(append.headers['x-ms-content-crc64'], crc64Of('hello'));
    const wrong = { 'x-ms-content-crc64': crc64Of('hellO') };
    assertError(
      await send({ method: 'PUT', target: `${c}/a?comp=appendblock`, body: 'hello', headers: wrong }),
      400,
      'Crc64Mismatch',
    );
    assert.equal((await send({ method: 'HEAD', target: `${c}/a` })).headers['content-length'], '5');
  },
]);
cases.push([
  'Content-MD5 (or x-ms-blob-content-md5) with x-ms-content-crc64 on one request is refused',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    const both = { 'x-ms-content-crc64': crc64Of('hello'), 'Content-MD5': md5Of('hello') };
    assertError(await put(send, `${c}/b`, 'hello', both), 400, 'BothCrc64AndMd5HeaderPresent');
    const id = Buffer.from('one').toString('base64');
    const block = await send({ method: 'PUT', target: blockTarget(`${c}/k`, id), body: 'hello', headers: both });
    assertError(block, 400, 'BothCrc64AndMd5HeaderPresent');
    await send({ method: 'PUT', target: `${c}/a`, headers: { 'x-ms-blob-type': 'AppendBlob' } });
    const append = await send({ method: 'PUT', target: `${c}/a?comp=appendblock`, body: 'hello', headers: both });
    assertError(append, 400, 'BothCrc64AndMd5HeaderPresent');
    const blobMd5 = { 'x-ms-content-crc64': crc64Of('hello'), 'x-ms-blob-content-md5': md5Of('hello') };
    assertError(await put(send, `${c}/b`, 'hello', blobMd5), 400, 'BothCrc64AndMsMd5HeaderPresent');
    assertError(await send({ method: 'HEAD', target: `${c}/b` }), 404, 'BlobNotFound');
  },
]);
cases.push([
  'Set Blob Properties keeps an x-ms-blob-content-md5 of any length (the SDK sets 4 bytes)',
  async (context) => {
    const blob = (await freshContainer(context)).getBlockBlobClient('b');
    await blob.upload('hello', 5);
    const md5 = Buffer.from([1, 2, 3, 4]);
    await blob.setHTTPHeaders({ blobContentMD5: md5 });
    assert.deepEqual(Buffer.from((await blob.getProperties()).contentMD5!), md5);
  },
]);
cases.push([
  'Set Blob Properties without a content type clears it; Put Blob without one keeps the default',
  async (context) => {
    const blob = (await freshContainer(context)).getBlockBlobClient('b');
    await blob.upload('hello', 5, { blobHTTPHeaders: { blobContentType: 'text/plain' } });
    await blob.setHTTPHeaders({});
    assert.equal((await blob.getProperties()).contentType, undefined);
    const other = blob.containerName;
    const plain = context.service.getContainerClient(other).getBlockBlobClient('plain');
    await plain.upload('x', 1);
    assert.equal((await plain.getProperties()).contentType, 'application/octet-stream');
  },
]);
cases.push([
  'HEAD of a missing blob: 404 with x-ms-error-code and no Content-Type',
  async (context) => {
    const c = (await freshContainer(context)).containerName;
    const head = await context.send({ method: 'HEAD', target: `${c}/missing` });
    assertError(head, 404, 'BlobNotFound');
    assert.equal(head.headers['content-type'], undefined);
  },
]);
cases.push([
  'a container name of the wrong length is 400 OutOfRangeInput, a badly shaped one InvalidResourceName',
  async ({ send }) => {
    assertError(await send({ method: 'PUT', target: 'ab?restype=container' }), 400, 'OutOfRangeInput');
    assertError(await send({ method: 'PUT', target: `${'a'.repeat(64)}?restype=container` }), 400, 'OutOfRangeInput');
    assertError(await send({ method: 'PUT', target: 'a--b?restype=container' }), 400, 'InvalidResourceName');
  },
]);
cases.push([
  'after Put Block List, a block id of another length is accepted: ids are compared with staged blocks only',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    const short = Buffer.from('aaaa').toString('base64');
    assert.equal((await send({ method: 'PUT', target: blockTarget(`${c}/b`, short), body: 'x' })).status, 201);
    const list = `<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>${short}</Latest></BlockList>`;
    assert.equal((await send({ method: 'PUT', target: `${c}/b?comp=blocklist`, body: list })).status, 201);
    const long = Buffer.from('bbbbbbbb').toString('base64');
    assert.equal((await send({ method: 'PUT', target: blockTarget(`${c}/b`, long), body: 'y' })).status, 201);
    const other = Buffer.from('cc').toString('base64');
    const mixed = await send({ method: 'PUT', target: blockTarget(`${c}/b`, other), body: 'z' });
    assertError(mixed, 400, 'InvalidBlobOrBlock');
  },
]);
cases.push([
  'If-None-Match: * on a blob that exists: 412 for Delete Blob and Set Blob Properties, 409 for Put Blob',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    assert.equal((await put(send, `${c}/b`, 'x')).status, 201);
    const star = { 'If-None-Match': '*' };
    assertError(await send({ method: 'DELETE', target: `${c}/b`, headers: star }), 412, 'ConditionNotMet');
    const properties = await send({ method: 'PUT', target: `${c}/b?comp=properties`, headers: star });
    assertError(properties, 412, 'ConditionNotMet');
    assertError(await put(send, `${c}/b`, 'y', star), 409, 'BlobAlreadyExists');
  },
]);
cases.push([
  'Put Blob verifies x-ms-blob-content-md5 in preference to Content-MD5',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    const right = md5Of('hello');
    const wrong = md5Of('other');
    const preferred = await put(send, `${c}/b`, 'hello', { 'Content-MD5': wrong, 'x-ms-blob-content-md5': right });
    assert.equal(preferred.status, 201, preferred.text);
    assert.equal((await send({ method: 'HEAD', target: `${c}/b` })).headers['content-md5'], right);
    const mismatch = await put(send, `${c}/b2`, 'hello', { 'Content-MD5': right, 'x-ms-blob-content-md5': wrong });
    assertError(mismatch, 400, 'Md5Mismatch');
    assertError(await put(send, `${c}/b3`, 'hello', { 'x-ms-blob-content-md5': wrong }), 400, 'Md5Mismatch');
  },
]);
cases.push([
  'a synchronous copy verifies x-ms-source-content-md5 and answers it as Content-MD5',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    assert.equal((await put(send, `${c}/src`, 'hello')).status, 201);
    const source = `${context.service.url}/${c}/src`;
    const copy = (md5: string) =>
      send({
        method: 'PUT',
        target: `${c}/dst`,
        headers: { 'x-ms-copy-source': source, 'x-ms-requires-sync': 'true', 'x-ms-source-content-md5': md5 },
      });
    const copied = await copy(md5Of('hello'));
    assert.equal(copied.status, 202, copied.text);
    assert.equal(copied.headers['x-ms-copy-status'], 'success');
    assert.equal(copied.headers['content-md5'], md5Of('hello'));
    assertError(await copy(md5Of('other')), 400, 'Md5Mismatch');
  },
]);
cases.push([
  'a backslash in a blob name is a slash, as the service turns it',
  async (context) => {
    const container = await freshContainer(context);
    await container.getBlockBlobClient('dir\\file').upload('x', 1);
    const names: string[] = [];
    for await (const item of container.listBlobsFlat()) names.push(item.name);
    assert.deepEqual(names, ['dir/file']);
    const got = await context.send({ method: 'GET', target: `${container.containerName}/dir%5Cfile` });
    assert.equal(got.text, 'x');
  },
]);
cases.push([
  'Append Block takes up to 100 MiB from version 2022-11-02, 4 MiB before',
  async (context) => {
    const blob = (await freshContainer(context)).getAppendBlobClient('a');
    await blob.create();
    const block = randomBytes(5 * 1024 * 1024);
    await blob.appendBlock(block, block.length);
    assert.equal((await blob.getProperties()).contentLength, block.length);
    const old = await context.send({
      method: 'PUT',
      target: `${blob.containerName}/a?comp=appendblock`,
      body: block,
      headers: { 'x-ms-version': '2021-08-06' },
    });
    assertError(old, 413, 'RequestBodyTooLarge');
  },
]);
cases.push([
  'Delete Blob of a name with only staged blocks deletes them (202), then 404',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    const id = Buffer.from('one').toString('base64');
    assert.equal((await send({ method: 'PUT', target: blockTarget(`${c}/b`, id), body: 'x' })).status, 201);
    assert.equal((await send({ method: 'DELETE', target: `${c}/b` })).status, 202);
    const listed = await send({ method: 'GET', target: `${c}/b?comp=blocklist&blocklisttype=all` });
    assertError(listed, 404, 'BlobNotFound');
    assertError(await send({ method: 'DELETE', target: `${c}/b` }), 404, 'BlobNotFound');
  },
]);
cases.push([
  'range reads: x-ms-range-get-content-crc64 answers the range CRC64; with -md5 as well it is refused',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    assert.equal((await put(send, `${c}/b`, '0123456789')).status, 201);
    const range = { 'x-ms-range': 'bytes=2-5' };
    const crc = await send({
      method: 'GET',
      target: `${c}/b`,
      headers: { ...range, 'x-ms-range-get-content-crc64': 'true' },
    });
    assert.equal(crc.status, 206);
    assert.equal(crc.text, '2345');
    assert.equal(crc.headers['x-ms-content-crc64'], crc64Of('2345'));
    const both = { ...range, 'x-ms-range-get-content-crc64': 'true', 'x-ms-range-get-content-md5': 'true' };
    assertError(
      await send({ method: 'GET', target: `${c}/b`, headers: both }),
      400,
      'BothCrc64AndMd5RangeHeaderPresent',
    );
  },
]);
cases.push([
  'Append Block From URL appends x-ms-source-range of the source; a range it cannot read is 400',
  async (context) => {
    const { send } = context;
    const c = (await freshContainer(context)).containerName;
    assert.equal((await put(send, `${c}/src`, 'hello world')).status, 201);
    const created = await send({ method: 'PUT', target: `${c}/a`, headers: { 'x-ms-blob-type': 'AppendBlob' } });
    assert.equal(created.status, 201);
    const append = (range: string) =>
      send({
        method: 'PUT',
        target: `${c}/a?comp=appendblock`,
        headers: { 'x-ms-copy-source': `${context.service.url}/${c}/src`, 'x-ms-source-range': range },
      });
    const appended = await append('bytes=6-10');
    assert.equal(appended.status, 201, appended.text);
    assert.equal(appended.headers['x-ms-blob-append-offset'], '0');
    assert.equal(appended.headers['content-md5'], md5Of('world'));
    assertError(await append('bytes=x-1'), 400, 'InvalidHeaderValue');
    // Append Block's limit by version: 4 MiB before 2022-11-02.
    const large = Buffer.alloc(4 * 1024 * 1024 + 1, 1);
    assert.equal((await put(send, `${c}/large`, large)).status, 201);
    const tooLarge = await send({
      method: 'PUT',
      target: `${c}/a?comp=appendblock`,
      headers: { 'x-ms-copy-source': `${context.service.url}/${c}/large`, 'x-ms-version': '2021-08-06' },
    });
    assertError(tooLarge, 413, 'RequestBodyTooLarge');
    assert.equal((await send({ method: 'GET', target: `${c}/a` })).text, 'world');
  },
]);

for (const engine of serverEngines) {
  describe(`blob wire details on ${engine.label}`, () => {
    let server: RunningServer;
    let context: Context;
    before(async () => {
      server = await startServer({ ...engine.options });
      context = { send: (request) => blobSend(server, request), service: blobServiceClient(server) };
    });
    after(async () => {
      await server?.stop();
    });
    for (const [name, run] of cases) test(name, () => run(context));
  });
}
