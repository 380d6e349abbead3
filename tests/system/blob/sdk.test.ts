// Blobs through the official JS SDK (@azure/storage-blob) with a connection string naming the
// server's blob endpoint, on SQLite and on PostgreSQL: block blobs put whole and in parallel
// blocks, ranged downloads, properties and metadata, snapshots, copies, append blobs, leases (time
// moves through the test clock, never by sleeping) and listings by hierarchy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { RestError, type BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { refused } from '../../helpers/rest-errors.js';
import { TestClock } from '../../helpers/queue.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

interface Context {
  readonly service: BlobServiceClient;
  readonly clock: TestClock;
}

async function freshContainer({ service }: Context): Promise<ContainerClient> {
  const container = service.getContainerClient(uniqueContainerName());
  await container.create();
  return container;
}

async function bytesOf(stream: NodeJS.ReadableStream | undefined): Promise<Buffer> {
  assert.ok(stream !== undefined);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

async function putAndGet(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('dir/hello.txt');
  const content = Buffer.from('hello, blobs');
  const put = await blob.upload(content, content.length, {
    blobHTTPHeaders: { blobContentType: 'text/plain', blobCacheControl: 'no-store' },
    metadata: { Color: 'blue' },
  });
  assert.match(put.etag ?? '', /^"0x[0-9A-F]+"$/);
  assert.equal(Buffer.from(put.contentMD5!).toString('base64'), createHash('md5').update(content).digest('base64'));
  const got = await blob.download();
  assert.deepEqual(await bytesOf(got.readableStreamBody), content);
  assert.equal(got.contentType, 'text/plain');
  assert.equal(got.cacheControl, 'no-store');
  assert.equal(got.blobType, 'BlockBlob');
  assert.deepEqual(got.metadata, { color: 'blue' });
  const properties = await blob.getProperties();
  assert.equal(properties.contentLength, content.length);
  assert.equal(properties.etag, put.etag);
  assert.equal(properties.leaseState, 'available');
  assert.equal(properties.accessTier, 'Hot');
  await refused(container.getBlobClient('missing').getProperties(), 404, 'BlobNotFound');
  await refused(
    context.service.getContainerClient('nocontainer').getBlobClient('b').download(),
    404,
    'ContainerNotFound',
  );
}

async function parallelBlocksAndRanges(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('big.bin');
  const content = randomBytes(5 * 1024 * 1024 + 123);
  await blob.uploadData(content, { blockSize: 1024 * 1024, concurrency: 4, maxSingleShotSize: 1024 * 1024 });
  const blocks = await blob.getBlockList('committed');
  assert.equal(blocks.committedBlocks?.length, 6);
  assert.equal(blocks.blobContentLength, content.length);
  assert.deepEqual(await blob.downloadToBuffer(), content);
  const streamed = container.getBlockBlobClient('streamed.bin');
  await streamed.uploadStream(
    Readable.from([content.subarray(0, 3_000_000), content.subarray(3_000_000)]),
    1024 * 1024,
    3,
  );
  assert.equal((await streamed.getBlockList('committed')).committedBlocks?.length, 6);
  assert.deepEqual(await streamed.downloadToBuffer(), content);
  const range = await blob.download(1_000_000, 2_500_000);
  assert.equal(range._response.status, 206);
  assert.equal(range.contentRange, `bytes 1000000-3499999/${content.length}`);
  assert.deepEqual(await bytesOf(range.readableStreamBody), content.subarray(1_000_000, 3_500_000));
  const tail = await blob.download(content.length - 10);
  assert.deepEqual(await bytesOf(tail.readableStreamBody), content.subarray(content.length - 10));
  await refused(blob.download(content.length + 1, 5), 416, 'InvalidRange');
  const md5Range = await blob.download(0, 1024, { rangeGetContentMD5: true });
  assert.equal(
    Buffer.from(md5Range.contentMD5!).toString('base64'),
    createHash('md5').update(content.subarray(0, 1024)).digest('base64'),
  );
}

async function stagedBlocks(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('staged');
  const id = (n: number): string => Buffer.from(`block-${String(n).padStart(4, '0')}`).toString('base64');
  await blob.stageBlock(id(1), Buffer.from('aaa'), 3);
  await blob.stageBlock(id(2), Buffer.from('bb'), 2);
  const staged = await blob.getBlockList('all');
  assert.deepEqual(
    staged.uncommittedBlocks?.map((b) => [b.name, b.size]),
    [
      [id(1), 3],
      [id(2), 2],
    ],
  );
  await blob.commitBlockList([id(2), id(1)], { metadata: { a: '1' } });
  assert.equal((await blob.downloadToBuffer()).toString(), 'bbaaa');
  await refused(blob.commitBlockList([id(3)]), 400, 'InvalidBlockList');
  // Committed blocks can be named again with new ones; staged ids are all of one length.
  await blob.stageBlock(id(3), Buffer.from('c'), 1);
  await refused(
    blob.stageBlock(Buffer.from('short').toString('base64'), Buffer.from('x'), 1),
    400,
    'InvalidBlobOrBlock',
  );
  await blob.commitBlockList([id(1), id(3)]);
  assert.equal((await blob.downloadToBuffer()).toString(), 'aaac');
}

async function propertiesAndConditions(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('p');
  const { etag } = await blob.upload('v1', 2);
  await blob.setHTTPHeaders({ blobContentType: 'application/json', blobContentLanguage: 'en' });
  const after = await blob.getProperties();
  assert.equal(after.contentType, 'application/json');
  assert.equal(after.contentLanguage, 'en');
  assert.notEqual(after.etag, etag);
  await refused(blob.setMetadata({ x: 'y' }, { conditions: { ifMatch: etag } }), 412, 'ConditionNotMet');
  await blob.setMetadata({ x: 'y' }, { conditions: { ifMatch: after.etag } });
  assert.deepEqual((await blob.getProperties()).metadata, { x: 'y' });
  await refused(blob.upload('v2', 2, { conditions: { ifNoneMatch: '*' } }), 409, 'BlobAlreadyExists');
  const notModified = await blob.getProperties({ conditions: { ifNoneMatch: (await blob.getProperties()).etag } }).then(
    () => 'answered',
    (error: RestError) => error.statusCode,
  );
  assert.equal(notModified, 304);
}

async function snapshotsAndCopies(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('s');
  await blob.upload('first', 5);
  const snapshot = await blob.createSnapshot({ metadata: { at: 'one' } });
  assert.ok(snapshot.snapshot);
  await blob.upload('second!', 7);
  const old = blob.withSnapshot(snapshot.snapshot);
  assert.equal((await old.downloadToBuffer()).toString(), 'first');
  assert.deepEqual((await old.getProperties()).metadata, { at: 'one' });
  await refused(blob.delete(), 409, 'SnapshotsPresent');
  const copy = container.getBlockBlobClient('copy-of-s');
  const copied = await (await copy.beginCopyFromURL(blob.url)).pollUntilDone();
  assert.equal(copied.copyStatus, 'success');
  assert.equal((await copy.downloadToBuffer()).toString(), 'second!');
  const synced = await copy.syncCopyFromURL(old.url);
  assert.equal(synced.copyStatus, 'success');
  assert.equal((await copy.downloadToBuffer()).toString(), 'first');
  await blob.delete({ deleteSnapshots: 'only' });
  await refused(old.getProperties(), 404, 'BlobNotFound');
  assert.equal((await blob.downloadToBuffer()).toString(), 'second!');
  await blob.createSnapshot();
  await blob.delete({ deleteSnapshots: 'include' });
  await refused(blob.getProperties(), 404, 'BlobNotFound');
}

async function appendBlobs(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const log = container.getAppendBlobClient('log');
  await log.create();
  const first = await log.appendBlock('one,', 4);
  assert.equal(first.blobAppendOffset, '0');
  assert.equal(first.blobCommittedBlockCount, 1);
  const second = await log.appendBlock('two', 3, { conditions: { appendPosition: 4 } });
  assert.equal(second.blobAppendOffset, '4');
  await refused(log.appendBlock('x', 1, { conditions: { appendPosition: 4 } }), 412, 'AppendPositionConditionNotMet');
  await refused(log.appendBlock('x', 1, { conditions: { maxSize: 7 } }), 412, 'MaxBlobSizeConditionNotMet');
  assert.equal((await log.downloadToBuffer()).toString(), 'one,two');
  const properties = await log.getProperties();
  assert.equal(properties.blobType, 'AppendBlob');
  assert.equal(properties.blobCommittedBlockCount, 2);
  const block = container.getBlockBlobClient('block');
  await block.upload('b', 1);
  await refused(container.getAppendBlobClient('block').appendBlock('x', 1), 409, 'InvalidBlobType');
}

async function leases(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('leased');
  await blob.upload('x', 1);
  const lease = blob.getBlobLeaseClient();
  await lease.acquireLease(15);
  assert.equal((await blob.getProperties()).leaseState, 'leased');
  await refused(blob.upload('y', 1), 412, 'LeaseIdMissing');
  await blob.upload('y', 1, { conditions: { leaseId: lease.leaseId } });
  await refused(blob.getBlobLeaseClient().acquireLease(15), 409, 'LeaseAlreadyPresent');
  context.clock.advance(16_000);
  assert.equal((await blob.getProperties()).leaseState, 'expired');
  await blob.upload('z', 1);
  await lease.acquireLease(-1);
  const broken = await lease.breakLease(10);
  assert.equal(broken.leaseTime, 10);
  assert.equal((await blob.getProperties()).leaseState, 'breaking');
  await refused(lease.renewLease(), 409, 'LeaseIsBrokenAndCannotBeRenewed');
  context.clock.advance(11_000);
  assert.equal((await blob.getProperties()).leaseState, 'broken');
  await lease.releaseLease();
  assert.equal((await blob.getProperties()).leaseState, 'available');
  const containerLease = container.getBlobLeaseClient();
  await containerLease.acquireLease(-1);
  await refused(container.delete(), 412, 'LeaseIdMissing');
  await containerLease.changeLease('11111111-2222-3333-4444-555555555555');
  await container.delete({ conditions: { leaseId: '11111111-2222-3333-4444-555555555555' } });
}

/**
 * Every lease action on a blob and on a container answers, and leaves, the ETag and Last-Modified
 * the resource had: conditions on that ETag keep holding, the listings show it too.
 */
async function leasesKeepEtag(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('b');
  const { etag, lastModified } = await blob.upload('x', 1);
  const same = async (response: { etag?: string; lastModified?: Date }): Promise<void> => {
    assert.equal(response.etag, etag);
    assert.equal(response.lastModified?.getTime(), lastModified?.getTime());
    const properties = await blob.getProperties();
    assert.equal(properties.etag, etag);
    assert.equal(properties.lastModified?.getTime(), lastModified?.getTime());
  };
  const lease = blob.getBlobLeaseClient();
  context.clock.advance(2_000); // a lease action a while after the write still keeps its date
  await same(await lease.acquireLease(15));
  await same(await lease.renewLease());
  await same(await lease.changeLease('11111111-2222-3333-4444-555555555555'));
  await same(await lease.breakLease(5));
  await same(await lease.releaseLease());
  await same(await lease.acquireLease(-1));
  for await (const item of container.listBlobsFlat()) assert.equal(`"${item.properties.etag}"`, etag);
  await blob.setMetadata({ k: 'v' }, { conditions: { ifMatch: etag, leaseId: lease.leaseId } });
  assert.notEqual((await blob.getProperties()).etag, etag);
  const before = await container.getProperties();
  const containerLease = container.getBlobLeaseClient();
  const containerSame = async (response: { etag?: string; lastModified?: Date }): Promise<void> => {
    assert.equal(response.etag, before.etag);
    assert.equal(response.lastModified?.getTime(), before.lastModified?.getTime());
    assert.equal((await container.getProperties()).etag, before.etag);
  };
  await containerSame(await containerLease.acquireLease(20));
  await containerSame(await containerLease.renewLease());
  await containerSame(await containerLease.breakLease(0));
  await containerSame(await containerLease.releaseLease());
  for await (const item of context.service.listContainers({ prefix: container.containerName })) {
    assert.equal(item.properties.etag, before.etag);
  }
}

async function listByHierarchy(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const names = ['a.txt', 'photos/1.jpg', 'photos/2.jpg', 'photos/deep/3.jpg', 'videos/v.mp4', 'z.txt'];
  for (const name of names)
    await container.getBlockBlobClient(name).upload(name, name.length, { metadata: { n: '1' } });
  const top: string[] = [];
  for await (const item of container.listBlobsByHierarchy('/')) top.push(`${item.kind}:${item.name}`);
  // The SDK yields a page's prefixes before its blobs.
  assert.deepEqual(top.sort(), ['blob:a.txt', 'blob:z.txt', 'prefix:photos/', 'prefix:videos/']);
  const inside: string[] = [];
  for await (const item of container.listBlobsByHierarchy('/', { prefix: 'photos/' })) inside.push(item.name);
  assert.deepEqual(inside.sort(), ['photos/1.jpg', 'photos/2.jpg', 'photos/deep/']);
  const paged: string[] = [];
  for await (const page of container.listBlobsByHierarchy('/').byPage({ maxPageSize: 1 })) {
    assert.ok(page.segment.blobItems.length + page.segment.blobPrefixes!.length <= 1);
    paged.push(...page.segment.blobItems.map((b) => b.name), ...page.segment.blobPrefixes!.map((p) => p.name));
  }
  assert.deepEqual(paged, ['a.txt', 'photos/', 'videos/', 'z.txt']);
  const flat: string[] = [];
  for await (const item of container.listBlobsFlat({ includeMetadata: true })) {
    assert.deepEqual(item.metadata, { n: '1' });
    assert.equal(item.properties.contentLength, item.name.length);
    flat.push(item.name);
  }
  assert.deepEqual(flat, names);
}

async function listSnapshotsAndUncommitted(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('b');
  await blob.upload('v1', 2);
  const { snapshot } = await blob.createSnapshot();
  await container.getBlockBlobClient('staged-only').stageBlock(Buffer.from('id').toString('base64'), 'x', 1);
  const listed: string[] = [];
  const options = { includeSnapshots: true, includeUncommitedBlobs: true, includeCopy: true, includeDeleted: true };
  for await (const item of container.listBlobsFlat(options)) listed.push(`${item.name}@${item.snapshot ?? ''}`);
  assert.deepEqual(listed, [`b@${snapshot!}`, 'b@', 'staged-only@']);
  const plain: string[] = [];
  for await (const item of container.listBlobsFlat()) plain.push(item.name);
  assert.deepEqual(plain, ['b']);
}

/**
 * Names with characters XML 1.0 cannot carry (U+FFFE, U+FFFF, control characters) and a carriage
 * return come back from listBlobsFlat and listBlobsByHierarchy exactly as they were put, in Blob and
 * BlobPrefix alike (the service writes them `<Name Encoded="true">`, percent-encoded).
 */
async function namesXmlCannotCarry(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const names = ['a\uFFFEb', 'c\u0001d/e', 'f\uFFFF/g', 'h\ri', 'j%41 & <k>'];
  for (const name of names) await container.getBlockBlobClient(name).upload('x', 1);
  const flat: string[] = [];
  for await (const item of container.listBlobsFlat()) flat.push(item.name);
  assert.deepEqual(flat, [...names].sort());
  const byPage: string[] = [];
  for await (const page of container.listBlobsFlat().byPage({ maxPageSize: 2 })) {
    byPage.push(...page.segment.blobItems.map((item) => item.name));
  }
  assert.deepEqual(byPage, [...names].sort());
  const tree: string[] = [];
  for await (const item of container.listBlobsByHierarchy('/')) tree.push(`${item.kind}:${item.name}`);
  // Each page's prefixes come before its blobs in the SDK's iterator: compare as sets.
  const expectedTree = ['blob:a\uFFFEb', 'prefix:c\u0001d/', 'prefix:f\uFFFF/', 'blob:h\ri', 'blob:j%41 & <k>'];
  assert.deepEqual(tree.sort(), expectedTree.sort());
  const inFolder: string[] = [];
  for await (const item of container.listBlobsByHierarchy('/', { prefix: 'f\uFFFF/' })) inFolder.push(item.name);
  assert.deepEqual(inFolder, ['f\uFFFF/g']);
}

/** DefaultServiceVersion is kept and returned; a set that leaves it out keeps it, and keeps CORS when it sets it. */
async function defaultServiceVersion({ service }: Context): Promise<void> {
  assert.equal((await service.getProperties()).defaultServiceVersion, undefined);
  const rule = {
    allowedOrigins: '*',
    allowedMethods: 'GET',
    allowedHeaders: '*',
    exposedHeaders: '*',
    maxAgeInSeconds: 5,
  };
  await service.setProperties({ defaultServiceVersion: '2020-10-02', cors: [rule] });
  let properties = await service.getProperties();
  assert.equal(properties.defaultServiceVersion, '2020-10-02');
  assert.deepEqual(properties.cors, [rule]);
  await service.setProperties({ cors: [] });
  properties = await service.getProperties();
  assert.equal(properties.defaultServiceVersion, '2020-10-02');
  assert.deepEqual(properties.cors, []);
  await service.setProperties({ defaultServiceVersion: '2021-08-06' });
  properties = await service.getProperties();
  assert.equal(properties.defaultServiceVersion, '2021-08-06');
  assert.deepEqual(properties.cors, []);
  assert.equal(properties.staticWebsite?.enabled, false);
  await refused(service.setProperties({ defaultServiceVersion: 'latest' }), 400, 'InvalidXmlNodeValue');
  assert.equal((await service.getProperties()).defaultServiceVersion, '2021-08-06');
}

const cases: readonly [string, (context: Context) => Promise<void>][] = [
  ['put, get, properties; missing blob and container', putAndGet],
  ['uploadData in parallel blocks; ranged downloads; 416; range MD5', parallelBlocksAndRanges],
  ['staged blocks, block lists, mixed id lengths', stagedBlocks],
  ['content headers, metadata, conditional requests', propertiesAndConditions],
  ['snapshots, deletes with snapshots, copies', snapshotsAndCopies],
  ['append blobs and their conditions', appendBlobs],
  ['blob and container leases over the test clock', leases],
  ['lease actions keep ETag and Last-Modified of blobs and containers', leasesKeepEtag],
  ['list blobs flat and by hierarchy, paged', listByHierarchy],
  ['list snapshots and names with only staged blocks on request', listSnapshotsAndUncommitted],
  ['names XML cannot carry round-trip through listBlobsFlat and listBlobsByHierarchy', namesXmlCannotCarry],
  ['Set/Get Blob Service Properties keep DefaultServiceVersion', defaultServiceVersion],
];

for (const engine of serverEngines) {
  describe(`blobs through the JS SDK on ${engine.label}`, () => {
    const clock = new TestClock();
    let server: RunningServer;
    let context: Context;
    before(async () => {
      server = await startServer({ ...engine.options, env: clock.env });
      context = { service: blobServiceClient(server), clock };
    });
    after(async () => {
      await server?.stop();
    });
    for (const [name, run] of cases) test(name, () => run(context));
  });
}
