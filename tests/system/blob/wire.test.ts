// The Blob service's blob operations on the wire, raw HTTP signed with Shared Key: exact statuses,
// error codes, headers and XML bodies (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api),
// on SQLite and on PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Crc64 } from '../../../src/blob/content/crc64.js';
import { blobSend, uniqueContainerName, type BlobRequest } from '../../helpers/blob.js';
import type { RawResponse } from '../../helpers/http.js';
import { TestClock, assertQueueError, childText, errorFacts, xmlOf } from '../../helpers/queue.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

/** An XML error answer; a HEAD's has no body, only x-ms-error-code. */
function assertError(response: RawResponse, status: number, code: string): void {
  if (response.body.length > 0) return assertQueueError(response, status, code);
  assert.equal(response.status, status);
  assert.equal(response.headers['x-ms-error-code'], code);
}

type Send = (request: BlobRequest) => Promise<RawResponse>;

async function freshContainer(send: Send): Promise<string> {
  const name = uniqueContainerName();
  assert.equal((await send({ method: 'PUT', target: `${name}?restype=container` })).status, 201);
  return name;
}

function put(send: Send, target: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return send({ method: 'PUT', target, body, headers: { 'x-ms-blob-type': 'BlockBlob', ...headers } });
}

const blockId = (n: number): string => Buffer.from(`id-${String(n).padStart(3, '0')}`).toString('base64');

async function putBlobHeaders(send: Send): Promise<void> {
  const c = await freshContainer(send);
  const res = await put(send, `${c}/b`, 'hello', { 'x-ms-meta-Color': 'blue' });
  assert.equal(res.status, 201, res.text);
  assert.match(String(res.headers['etag']), /^"0x[0-9A-F]{15,16}"$/);
  assert.ok(!Number.isNaN(Date.parse(String(res.headers['last-modified']))));
  assert.equal(res.headers['content-md5'], createHash('md5').update('hello').digest('base64'));
  assert.equal(res.headers['x-ms-request-server-encrypted'], 'true');
  const head = await send({ method: 'HEAD', target: `${c}/b` });
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], '5');
  assert.equal(head.headers['content-type'], 'application/octet-stream');
  assert.equal(head.headers['x-ms-blob-type'], 'BlockBlob');
  assert.equal(head.headers['x-ms-meta-color'], 'blue');
  assert.equal(head.headers['x-ms-lease-state'], 'available');
  assert.equal(head.headers['x-ms-lease-status'], 'unlocked');
  assert.equal(head.headers['x-ms-server-encrypted'], 'true');
  assert.equal(head.headers['accept-ranges'], 'bytes');
  assert.ok(head.headers['x-ms-creation-time']);
  assert.equal(head.body.length, 0);
  // No Cache-Control of the front door's own: a blob has one only when it was given one.
  assert.equal(head.headers['cache-control'], undefined);
  assert.equal((await send({ method: 'GET', target: `${c}/b` })).headers['cache-control'], undefined);
  assert.equal((await put(send, `${c}/cached`, 'x', { 'x-ms-blob-cache-control': 'max-age=60' })).status, 201);
  assert.equal((await send({ method: 'GET', target: `${c}/cached` })).headers['cache-control'], 'max-age=60');
}

async function checksumsVerified(send: Send): Promise<void> {
  const c = await freshContainer(send);
  const wrongMd5 = createHash('md5').update('other').digest('base64');
  assertError(await put(send, `${c}/b`, 'hello', { 'Content-MD5': wrongMd5 }), 400, 'Md5Mismatch');
  assertError(await send({ method: 'HEAD', target: `${c}/b` }), 404, 'BlobNotFound');
  assertError(await put(send, `${c}/b`, 'hello', { 'Content-MD5': 'short' }), 400, 'InvalidMd5');
  const crc = new Crc64().update(Buffer.from('hello')).digest().toString('base64');
  assert.equal((await put(send, `${c}/b`, 'hello', { 'x-ms-content-crc64': crc })).status, 201);
  const wrongCrc = new Crc64().update(Buffer.from('hellO')).digest().toString('base64');
  assertError(await put(send, `${c}/b2`, 'hello', { 'x-ms-content-crc64': wrongCrc }), 400, 'Crc64Mismatch');
  const block = await send({
    method: 'PUT',
    target: `${c}/b3?comp=block&blockid=${encodeURIComponent(blockId(1))}`,
    body: 'x',
    headers: { 'Content-MD5': wrongMd5 },
  });
  assertError(block, 400, 'Md5Mismatch');
  // Large bodies are hashed on another thread (src/blob/content/digests.ts): the same answers.
  const large = randomBytes(3 * 1024 * 1024 + 5);
  const largeMd5 = createHash('md5').update(large).digest('base64');
  const largeCrc = new Crc64().update(large).digest().toString('base64');
  assertError(await put(send, `${c}/large`, large, { 'Content-MD5': wrongMd5 }), 400, 'Md5Mismatch');
  assertError(await send({ method: 'HEAD', target: `${c}/large` }), 404, 'BlobNotFound');
  const wrongLargeCrc = new Crc64().update(large.subarray(1)).digest().toString('base64');
  assertError(await put(send, `${c}/large`, large, { 'x-ms-content-crc64': wrongLargeCrc }), 400, 'Crc64Mismatch');
  // One transactional checksum a request (Content-MD5 with x-ms-content-crc64 is refused); Put Blob
  // computes and answers the MD5 all the same.
  const stored = await put(send, `${c}/large`, large, { 'x-ms-content-crc64': largeCrc });
  assert.equal(stored.status, 201);
  assert.equal(stored.headers['content-md5'], largeMd5);
  assert.equal(stored.headers['x-ms-content-crc64'], largeCrc);
  const unsent = await put(send, `${c}/large2`, large);
  assert.equal(unsent.headers['content-md5'], largeMd5, 'Put Blob computes the MD5 of a large body too');
}

async function ranges(send: Send): Promise<void> {
  const c = await freshContainer(send);
  await put(send, `${c}/b`, '0123456789');
  const part = await send({ method: 'GET', target: `${c}/b`, headers: { 'x-ms-range': 'bytes=2-5' } });
  assert.equal(part.status, 206);
  assert.equal(part.text, '2345');
  assert.equal(part.headers['content-range'], 'bytes 2-5/10');
  assert.equal(part.headers['content-length'], '4');
  const open = await send({ method: 'GET', target: `${c}/b`, headers: { Range: 'bytes=7-' } });
  assert.equal(open.text, '789');
  const past = await send({ method: 'GET', target: `${c}/b`, headers: { Range: 'bytes=10-' } });
  assertError(past, 416, 'InvalidRange');
  assert.equal(past.headers['content-range'], 'bytes */10');
  await put(send, `${c}/empty`, '');
  const empty = await send({ method: 'GET', target: `${c}/empty`, headers: { Range: 'bytes=0-' } });
  assertError(empty, 416, 'InvalidRange');
  assert.equal(empty.headers['content-range'], 'bytes */0');
  const whole = await send({ method: 'GET', target: `${c}/empty` });
  assert.equal(whole.status, 200);
  assert.equal(whole.headers['content-length'], '0');
  const md5 = await send({
    method: 'GET',
    target: `${c}/b`,
    headers: { 'x-ms-range': 'bytes=0-3', 'x-ms-range-get-content-md5': 'true' },
  });
  assert.equal(md5.headers['content-md5'], createHash('md5').update('0123').digest('base64'));
  assert.equal(md5.headers['x-ms-blob-content-md5'], createHash('md5').update('0123456789').digest('base64'));
  const tooWide = await send({
    method: 'GET',
    target: `${c}/b`,
    headers: { 'x-ms-range': 'bytes=0-5000000', 'x-ms-range-get-content-md5': 'true' },
  });
  assert.equal(tooWide.status, 206, 'a range clamped to the blob is within 4 MiB');
}

async function blockLists(send: Send): Promise<void> {
  const c = await freshContainer(send);
  const stage = (id: string, body: string) =>
    send({ method: 'PUT', target: `${c}/b?comp=block&blockid=${encodeURIComponent(id)}`, body });
  const staged = await stage(blockId(1), 'ab');
  assert.equal(staged.status, 201);
  assert.equal(staged.headers['content-md5'], createHash('md5').update('ab').digest('base64'));
  assertError(await stage('***', 'x'), 400, 'InvalidBlockId');
  assertError(await stage(Buffer.from('x'.repeat(65)).toString('base64'), 'x'), 400, 'InvalidBlockId');
  assertError(await stage(Buffer.from('longer-id').toString('base64'), 'x'), 400, 'InvalidBlobOrBlock');
  const blockList = (xml: string) => send({ method: 'PUT', target: `${c}/b?comp=blocklist`, body: xml });
  assertError(await blockList('<BlockList><Latest>'), 400, 'InvalidXmlDocument');
  assertError(await blockList(`<BlockList><Committed>${blockId(1)}</Committed></BlockList>`), 400, 'InvalidBlockList');
  const listed = await send({ method: 'GET', target: `${c}/b?comp=blocklist&blocklisttype=all` });
  assert.equal(listed.status, 200);
  assert.equal(
    listed.text,
    `<?xml version="1.0" encoding="utf-8"?><BlockList><CommittedBlocks /><UncommittedBlocks><Block><Name>${blockId(1)}</Name><Size>2</Size></Block></UncommittedBlocks></BlockList>`,
  );
  const committed = await blockList(
    `<?xml version="1.0" encoding="utf-8"?><BlockList><Uncommitted>${blockId(1)}</Uncommitted><Latest>${blockId(1)}</Latest></BlockList>`,
  );
  assert.equal(committed.status, 201, committed.text);
  assert.equal((await send({ method: 'GET', target: `${c}/b` })).text, 'abab');
  const after = await send({ method: 'GET', target: `${c}/b?comp=blocklist` });
  assert.equal(after.headers['x-ms-blob-content-length'], '4');
  assert.equal(
    xmlOf(after)
      .children.map((child) => child.name)
      .join(),
    'CommittedBlocks',
  );
  assertError(await send({ method: 'GET', target: `${c}/nothing?comp=blocklist` }), 404, 'BlobNotFound');
}

async function appendLimits(send: Send): Promise<void> {
  const c = await freshContainer(send);
  assert.equal((await put(send, `${c}/log`, '', { 'x-ms-blob-type': 'AppendBlob' })).status, 201);
  const append = (body: string | Buffer, headers: Record<string, string> = {}) =>
    send({ method: 'PUT', target: `${c}/log?comp=appendblock`, body, headers });
  const first = await append('abc');
  assert.equal(first.status, 201);
  assert.equal(first.headers['x-ms-blob-append-offset'], '0');
  assert.equal(first.headers['x-ms-blob-committed-block-count'], '1');
  assertError(await append('d', { 'x-ms-blob-condition-appendpos': '2' }), 412, 'AppendPositionConditionNotMet');
  assertError(await append('d', { 'x-ms-blob-condition-maxsize': '3' }), 412, 'MaxBlobSizeConditionNotMet');
  assertError(await append(Buffer.alloc(4 * 1024 * 1024 + 1)), 413, 'RequestBodyTooLarge');
  await put(send, `${c}/block`, 'x');
  assertError(await send({ method: 'PUT', target: `${c}/block?comp=appendblock`, body: 'y' }), 409, 'InvalidBlobType');
  assertError(await put(send, `${c}/log2`, 'x', { 'x-ms-blob-type': 'AppendBlob' }), 400, 'InvalidHeaderValue');
}

async function conditions(send: Send): Promise<void> {
  const c = await freshContainer(send);
  const created = await put(send, `${c}/b`, 'v1');
  const etag = String(created.headers['etag']);
  const lastModified = String(created.headers['last-modified']);
  assert.equal((await send({ method: 'GET', target: `${c}/b`, headers: { 'If-None-Match': etag } })).status, 304);
  assert.equal(
    (await send({ method: 'GET', target: `${c}/b`, headers: { 'If-Modified-Since': lastModified } })).status,
    304,
  );
  assertError(
    await send({ method: 'GET', target: `${c}/b`, headers: { 'If-Match': '"0x1"' } }),
    412,
    'ConditionNotMet',
  );
  assertError(await put(send, `${c}/b`, 'v2', { 'If-Match': '"0x1"' }), 412, 'ConditionNotMet');
  assertError(await put(send, `${c}/b`, 'v2', { 'If-None-Match': '*' }), 409, 'BlobAlreadyExists');
  assertError(await put(send, `${c}/new`, 'v2', { 'If-Match': '*' }), 412, 'ConditionNotMet');
  assert.equal((await put(send, `${c}/b`, 'v2', { 'If-Match': etag })).status, 201);
  assertError(await put(send, `${c}/b`, 'v3', { 'If-Match': etag }), 412, 'ConditionNotMet');
  const metadata = await send({
    method: 'PUT',
    target: `${c}/b?comp=metadata`,
    headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' },
  });
  assertError(metadata, 412, 'ConditionNotMet');
  assertError(
    await send({ method: 'DELETE', target: `${c}/b`, headers: { 'If-Match': etag } }),
    412,
    'ConditionNotMet',
  );
}

async function leasesOnTheWire(send: Send, clock: TestClock): Promise<void> {
  const c = await freshContainer(send);
  await put(send, `${c}/b`, 'x');
  const id = '11111111-2222-3333-4444-555555555555';
  const lease = (headers: Record<string, string>) => send({ method: 'PUT', target: `${c}/b?comp=lease`, headers });
  const acquired = await lease({
    'x-ms-lease-action': 'acquire',
    'x-ms-lease-duration': '20',
    'x-ms-proposed-lease-id': id,
  });
  assert.equal(acquired.status, 201);
  assert.equal(acquired.headers['x-ms-lease-id'], id);
  assertError(await lease({ 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '5' }), 400, 'InvalidHeaderValue');
  const other = '99999999-2222-3333-4444-555555555555';
  assertError(
    await lease({ 'x-ms-lease-action': 'renew', 'x-ms-lease-id': other }),
    409,
    'LeaseIdMismatchWithLeaseOperation',
  );
  assertError(await put(send, `${c}/b`, 'y', { 'x-ms-lease-id': other }), 412, 'LeaseIdMismatchWithBlobOperation');
  assertError(await send({ method: 'DELETE', target: `${c}/b` }), 412, 'LeaseIdMissing');
  const head = await send({ method: 'HEAD', target: `${c}/b` });
  assert.equal(head.headers['x-ms-lease-state'], 'leased');
  assert.equal(head.headers['x-ms-lease-status'], 'locked');
  assert.equal(head.headers['x-ms-lease-duration'], 'fixed');
  const broken = await lease({ 'x-ms-lease-action': 'break' });
  assert.equal(broken.status, 202);
  assert.equal(broken.headers['x-ms-lease-time'], '20');
  clock.advance(21_000);
  assert.equal((await send({ method: 'HEAD', target: `${c}/b` })).headers['x-ms-lease-state'], 'broken');
  assertError(await put(send, `${c}/b`, 'y', { 'x-ms-lease-id': id }), 412, 'LeaseNotPresentWithBlobOperation');
  assert.equal((await send({ method: 'DELETE', target: `${c}/b` })).status, 202);
  assertError(await lease({ 'x-ms-lease-action': 'break' }), 404, 'BlobNotFound');
  const containerLease = await send({
    method: 'PUT',
    target: `${c}?restype=container&comp=lease`,
    headers: { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' },
  });
  assert.equal(containerLease.status, 201);
  assertError(await send({ method: 'DELETE', target: `${c}?restype=container` }), 412, 'LeaseIdMissing');
}

async function snapshotsAndDeletes(send: Send): Promise<void> {
  const c = await freshContainer(send);
  await put(send, `${c}/b`, 'one');
  const snap = await send({ method: 'PUT', target: `${c}/b?comp=snapshot` });
  assert.equal(snap.status, 201);
  const stamp = String(snap.headers['x-ms-snapshot']);
  assert.match(stamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
  await put(send, `${c}/b`, 'two');
  assert.equal((await send({ method: 'GET', target: `${c}/b?snapshot=${stamp}` })).text, 'one');
  assertError(await send({ method: 'GET', target: `${c}/b?snapshot=yesterday` }), 400, 'InvalidQueryParameterValue');
  assertError(await send({ method: 'DELETE', target: `${c}/b` }), 409, 'SnapshotsPresent');
  assert.equal((await send({ method: 'DELETE', target: `${c}/b?snapshot=${stamp}` })).status, 202);
  assert.equal((await send({ method: 'DELETE', target: `${c}/b` })).status, 202);
  assertError(await send({ method: 'DELETE', target: `${c}/b` }), 404, 'BlobNotFound');
  assertError(await send({ method: 'DELETE', target: `nocontainer${c}/b` }), 404, 'ContainerNotFound');
}

/** The Blob endpoint of the server under test (`http://127.0.0.1:{port}/devstoreaccount1`): copy sources name it. */
let blobEndpoint = '';

async function copies(send: Send): Promise<void> {
  const c = await freshContainer(send);
  await put(send, `${c}/src`, 'content', { 'x-ms-blob-content-type': 'text/plain', 'x-ms-meta-a': '1' });
  const source = `${blobEndpoint}/${c}/src`;
  const copied = await send({ method: 'PUT', target: `${c}/dst`, headers: { 'x-ms-copy-source': source } });
  assert.equal(copied.status, 202, copied.text);
  assert.equal(copied.headers['x-ms-copy-status'], 'success');
  const head = await send({ method: 'HEAD', target: `${c}/dst` });
  assert.equal(head.headers['x-ms-copy-id'], copied.headers['x-ms-copy-id']);
  assert.equal(head.headers['x-ms-copy-source'], source);
  assert.equal(head.headers['x-ms-copy-progress'], '7/7');
  assert.equal(head.headers['content-type'], 'text/plain');
  assert.equal(head.headers['x-ms-meta-a'], '1');
  const elsewhere = await send({
    method: 'PUT',
    target: `${c}/dst`,
    headers: { 'x-ms-copy-source': `http://example.com/other/${c}/src` },
  });
  // Cerulean makes no outbound connections: a source on another host is refused (docs/blob.md).
  assertError(elsewhere, 400, 'CannotVerifyCopySource');
  const missing = await send({
    method: 'PUT',
    target: `${c}/dst`,
    headers: { 'x-ms-copy-source': `${source}-missing` },
  });
  assertError(missing, 404, 'CannotVerifyCopySource');
  const abort = await send({
    method: 'PUT',
    target: `${c}/dst?comp=copy&copyid=${String(copied.headers['x-ms-copy-id'])}`,
    headers: { 'x-ms-copy-action': 'abort' },
  });
  assertError(abort, 409, 'NoPendingCopyOperation');
}

async function listXml(send: Send): Promise<void> {
  const c = await freshContainer(send);
  await put(send, `${c}/a`, 'xy', { 'x-ms-blob-content-type': 'text/plain', 'x-ms-meta-k': 'v' });
  for (let i = 0; i < 30; i++) await put(send, `${c}/wide/${String(i).padStart(2, '0')}`, 'z');
  await put(send, `${c}/zz`, 'z');
  const res = await send({
    method: 'GET',
    target: `${c}?restype=container&comp=list&delimiter=/&maxresults=2&include=metadata`,
  });
  assert.equal(res.status, 200, res.text);
  assert.match(String(res.headers['content-type']), /^application\/xml/);
  const root = xmlOf(res);
  assert.equal(root.name, 'EnumerationResults');
  assert.equal(root.attributes.get('ContainerName'), c);
  assert.deepEqual(
    root.children.map((e) => e.name),
    ['MaxResults', 'Delimiter', 'Blobs', 'NextMarker'],
  );
  const blobs = root.children.find((e) => e.name === 'Blobs')!;
  assert.deepEqual(
    blobs.children.map((e) => `${e.name}:${childText(e, 'Name')}`),
    ['Blob:a', 'BlobPrefix:wide/'],
  );
  const properties = blobs.children[0]!.children.find((e) => e.name === 'Properties')!;
  assert.deepEqual(
    properties.children.map((e) => e.name),
    [
      'Creation-Time',
      'Last-Modified',
      'Etag',
      'Content-Length',
      'Content-Type',
      'Content-Encoding',
      'Content-Language',
      'Content-MD5',
      'Content-Disposition',
      'Cache-Control',
      'BlobType',
      // Where the service writes them (its List Blobs replies recorded by the Java SDK's tests).
      'AccessTier',
      'AccessTierInferred',
      'LeaseStatus',
      'LeaseState',
      'ServerEncrypted',
    ],
  );
  assert.match(childText(properties, 'Etag')!, /^0x[0-9A-F]+$/);
  assert.equal(childText(properties, 'Content-Length'), '2');
  assert.equal(
    childText(
      blobs.children[0]!.children.find((e) => e.name === 'Metadata')!,
      'k',
    ),
    'v',
  );
  await nextPage(send, c, childText(root, 'NextMarker')!);
}

/** The page after `marker`: the rest, then no marker; markers and includes the service does not know are 400. */
async function nextPage(send: Send, c: string, marker: string): Promise<void> {
  assert.notEqual(marker, '');
  const next = xmlOf(
    await send({
      method: 'GET',
      target: `${c}?restype=container&comp=list&delimiter=/&maxresults=2&marker=${encodeURIComponent(marker)}`,
    }),
  );
  const rest = next.children.find((e) => e.name === 'Blobs')!.children.map((e) => childText(e, 'Name'));
  assert.deepEqual(rest, ['zz']);
  assert.equal(childText(next, 'NextMarker'), '');
  assertError(
    await send({ method: 'GET', target: `${c}?restype=container&comp=list&include=everything` }),
    400,
    'InvalidQueryParameterValue',
  );
  assertError(
    await send({ method: 'GET', target: `${c}?restype=container&comp=list&marker=garbage` }),
    400,
    'InvalidQueryParameterValue',
  );
}

/** A name XML cannot carry is `<Name Encoded="true">`, percent-encoded UTF-8; the body stays well-formed XML. */
async function encodedNames(send: Send): Promise<void> {
  const c = await freshContainer(send);
  await put(send, `${c}/${encodeURIComponent('a\uFFFFb')}`, 'x');
  await put(send, `${c}/${encodeURIComponent('d\u0001/e')}`, 'x');
  await put(send, `${c}/plain%20name`, 'x');
  const res = await send({ method: 'GET', target: `${c}?restype=container&comp=list&delimiter=/` });
  assert.equal(res.status, 200, res.text);
  assert.ok(res.text.includes('<Blob><Name Encoded="true">a%EF%BF%BFb</Name>'), res.text);
  assert.ok(res.text.includes('<BlobPrefix><Name Encoded="true">d%01%2F</Name></BlobPrefix>'), res.text);
  assert.ok(res.text.includes('<Blob><Name>plain name</Name>'), res.text);
  const blobs = xmlOf(res).children.find((e) => e.name === 'Blobs')!;
  assert.deepEqual(
    blobs.children.map((e) => e.children[0]!.attributes.get('Encoded') ?? ''),
    ['true', 'true', ''],
  );
  // Echoed request values: what XML cannot carry comes out as U+FFFD; the listings stay well-formed.
  const odd = encodeURIComponent('a\uFFFF\u0001');
  const listed = await send({
    method: 'GET',
    target: `${c}?restype=container&comp=list&prefix=${odd}&delimiter=${odd}`,
  });
  assert.equal(listed.status, 200, listed.text);
  assert.equal(childText(xmlOf(listed), 'Prefix'), 'a\uFFFD\uFFFD');
  assert.equal(childText(xmlOf(listed), 'Delimiter'), 'a\uFFFD\uFFFD');
  const containers = await send({ method: 'GET', target: `?comp=list&prefix=${odd}&marker=${odd}` });
  assert.equal(containers.status, 200, containers.text);
  assert.equal(childText(xmlOf(containers), 'Prefix'), 'a\uFFFD\uFFFD');
  assert.equal(childText(xmlOf(containers), 'Marker'), 'a\uFFFD\uFFFD');
}

/**
 * A lease action keeps the ETag clients see, yet a write that read the blob before an acquire never
 * lands after it and drops the lease: every acquire that succeeded leaves the blob leased, whatever
 * metadata writes without a lease id raced it.
 */
async function leaseRacesWrites(send: Send): Promise<void> {
  const c = await freshContainer(send);
  for (let round = 0; round < 15; round++) {
    const target = `${c}/r${round}`;
    const etag = (await put(send, target, 'x')).headers['etag'];
    const acquire = send({
      method: 'PUT',
      target: `${target}?comp=lease`,
      headers: { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' },
    });
    const writes = Array.from({ length: 4 }, (_, i) =>
      send({ method: 'PUT', target: `${target}?comp=metadata`, headers: { 'x-ms-meta-n': String(i) } }),
    );
    const [acquired, ...written] = await Promise.all([acquire, ...writes]);
    assert.equal(acquired.status, 201, acquired.text);
    // 412 LeaseIdMissing once the lease is in force; 503 ServerBusy if the races outlast the retries.
    for (const write of written) assert.ok([200, 412, 503].includes(write.status), write.text);
    const head = await send({ method: 'HEAD', target });
    assert.equal(head.headers['x-ms-lease-state'], 'leased');
    if (written.every((write) => write.status !== 200)) assert.equal(head.headers['etag'], etag);
  }
}

/**
 * A bad header or query parameter is named in elements of the error body under the service's fixed
 * message, as the service's recorded answers show (x-ms-copy-source, x-ms-blob-public-access,
 * x-ms-lease-duration; versionid with a Reason).
 */
async function badValuesNamed(send: Send): Promise<void> {
  const c = await freshContainer(send);
  assert.equal((await put(send, `${c}/b`, 'x')).status, 201);
  const header = 'The value for one of the HTTP headers is not in the correct format.';
  const query = 'Value for one of the query parameters specified in the request URI is invalid.';
  const headerCases: [BlobRequest, string, string][] = [
    [
      { method: 'PUT', target: `${c}/copy`, headers: { 'x-ms-copy-source': 'not a url' } },
      'x-ms-copy-source',
      'not a url',
    ],
    [
      {
        method: 'PUT',
        target: `${uniqueContainerName()}?restype=container`,
        headers: { 'x-ms-blob-public-access': 'all' },
      },
      'x-ms-blob-public-access',
      'all',
    ],
    [
      {
        method: 'PUT',
        target: `${c}/b?comp=lease`,
        headers: { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '1' },
      },
      'x-ms-lease-duration',
      '1',
    ],
    [{ method: 'GET', target: `${c}/b`, headers: { 'x-ms-range': 'bytes=x' } }, 'x-ms-range', 'bytes=x'],
    [{ method: 'PUT', target: `${c}/t`, body: 'x', headers: { 'x-ms-blob-type': 'Tape' } }, 'x-ms-blob-type', 'Tape'],
  ];
  for (const [request, name, value] of headerCases) {
    const response = await send(request);
    assertError(response, 400, 'InvalidHeaderValue');
    assert.deepEqual(errorFacts(response), [
      header,
      [
        ['HeaderName', name],
        ['HeaderValue', value],
      ],
    ]);
  }
  const list = await send({ method: 'GET', target: `${c}?restype=container&comp=list&include=everything` });
  assertError(list, 400, 'InvalidQueryParameterValue');
  const [message, facts] = errorFacts(list);
  assert.equal(message, query);
  assert.deepEqual(facts.slice(0, 2), [
    ['QueryParameterName', 'include'],
    ['QueryParameterValue', 'everything'],
  ]);
  assert.equal(facts[2]![0], 'Reason');
  const page = await send({ method: 'GET', target: `${c}?restype=container&comp=list&maxresults=0` });
  assertError(page, 400, 'OutOfRangeQueryParameterValue');
  assert.deepEqual(errorFacts(page)[1], [
    ['QueryParameterName', 'maxresults'],
    ['QueryParameterValue', '0'],
    ['MinimumAllowed', '1'],
    ['MaximumAllowed', '2147483647'],
  ]);
}

const cases: readonly [string, (send: Send, clock: TestClock) => Promise<void>][] = [
  ['Put Blob and Get Blob Properties headers', putBlobHeaders],
  ['Content-MD5 and x-ms-content-crc64 are verified; nothing is kept on a mismatch', checksumsVerified],
  ['ranges: 206 with Content-Range, 416 with bytes */size, range MD5', ranges],
  ['blocks: ids, block lists, Get Block List XML', blockLists],
  ['append blobs: offsets, conditions, the 4 MiB limit, blob types', appendLimits],
  ['conditional requests: 304 for reads, 412 ConditionNotMet and 409 BlobAlreadyExists for writes', conditions],
  ['leases on the wire, broken by the test clock; a container lease blocks its deletion', leasesOnTheWire],
  ['a lease action keeps the ETag yet no racing write drops the lease', leaseRacesWrites],
  ['snapshots and deletes', snapshotsAndDeletes],
  ['copies within the account; sources on other hosts refused; nothing to abort', copies],
  ['List Blobs XML: element order, folders as one result, markers', listXml],
  ['List Blobs: names XML cannot carry are Encoded; echoes stay well-formed', encodedNames],
  ['a bad header or query parameter is named in elements of the error body', badValuesNamed],
];

for (const engine of serverEngines) {
  describe(`blob operations on the wire on ${engine.label}`, () => {
    const clock = new TestClock();
    let server: RunningServer;
    let send: Send;
    before(async () => {
      server = await startServer({ ...engine.options, env: clock.env });
      send = (request) => blobSend(server, request);
      blobEndpoint = server.blobUrl!;
    });
    after(async () => {
      await server?.stop();
    });
    for (const [name, run] of cases) test(name, () => run(send, clock));
  });
}
