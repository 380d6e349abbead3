// Access tiers, the archive and its rehydration, and append blob seal, through the official JS SDK
// (@azure/storage-blob) and raw HTTP against a real server on every engine. Rehydration takes an
// hour here (--blob-rehydrate-delay) and time moves by the test clock, never by sleeping.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BlobServiceClient, ContainerClient } from '@azure/storage-blob';
import { blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { refused } from '../../helpers/rest-errors.js';
import { TestClock } from '../../helpers/queue.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const rehydrateMs = 60 * 60 * 1000;

interface Context {
  readonly server: RunningServer;
  readonly service: BlobServiceClient;
  readonly clock: TestClock;
}

async function freshContainer({ service }: Context): Promise<ContainerClient> {
  const container = service.getContainerClient(uniqueContainerName());
  await container.create();
  return container;
}

async function listed(container: ContainerClient, name: string) {
  for await (const item of container.listBlobsFlat({ includeSnapshots: true })) {
    if (item.name === name && item.snapshot === undefined) return item.properties;
  }
  assert.fail(`${name} is not listed`);
}

async function tiersOnline(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('b');
  const put = await blob.upload('hello', 5);
  let properties = await blob.getProperties();
  assert.equal(properties.accessTier, 'Hot');
  assert.equal(properties.accessTierInferred, true);
  assert.equal(properties.accessTierChangedOn, undefined);
  const set = await blob.setAccessTier('Cool');
  assert.equal(set._response.status, 200);
  properties = await blob.getProperties();
  assert.equal(properties.accessTier, 'Cool');
  assert.equal(properties.accessTierInferred, undefined);
  assert.ok(properties.accessTierChangedOn instanceof Date);
  // set-blob-tier: "This operation does not update the blob's ETag"; nor Last-Modified.
  assert.equal(properties.etag, put.etag);
  assert.equal(properties.lastModified?.getTime(), put.lastModified?.getTime());
  let item = await listed(container, 'b');
  assert.equal(item.accessTier, 'Cool');
  assert.equal(item.accessTierInferred, undefined);
  assert.ok(item.accessTierChangedOn instanceof Date);
  // A write conditioned on the ETag read before the tier change still lands, and keeps the tier.
  await blob.setMetadata({ a: '1' }, { conditions: { ifMatch: put.etag } });
  assert.equal((await blob.getProperties()).accessTier, 'Cool');
  await blob.upload('again', 5, { tier: 'Cold' });
  assert.equal((await blob.getProperties()).accessTier, 'Cold');
  await blob.upload('plain', 5); // a new blob: the account's default again
  assert.equal((await blob.getProperties()).accessTierInferred, true);
  const blocks = container.getBlockBlobClient('blocks');
  await blocks.stageBlock('AAAA', 'xyz', 3);
  await blocks.commitBlockList(['AAAA'], { tier: 'Cool' });
  item = await listed(container, 'blocks');
  assert.equal(item.accessTier, 'Cool');
  await refused(container.getBlockBlobClient('missing').setAccessTier('Cool'), 404, 'BlobNotFound');
}

async function archiveAndRehydrate(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('cold-storage');
  await blob.upload('archived bytes', 14, { metadata: { keep: 'me' } });
  assert.equal((await blob.setAccessTier('Archive'))._response.status, 200);
  await refused(blob.download(), 409, 'BlobArchived');
  const properties = await blob.getProperties();
  assert.equal(properties.accessTier, 'Archive');
  assert.deepEqual(properties.metadata, { keep: 'me' });
  await refused(blob.setMetadata({ other: 'x' }), 409, 'BlobArchived');
  await refused(blob.setHTTPHeaders({ blobContentType: 'text/plain' }), 409, 'BlobArchived');
  await refused(blob.createSnapshot(), 409, 'BlobArchived');
  assert.equal((await blob.setAccessTier('Archive'))._response.status, 200);
  assert.equal((await blob.setAccessTier('Hot'))._response.status, 202);
  let pending = await blob.getProperties();
  assert.equal(pending.accessTier, 'Archive');
  assert.equal(pending.archiveStatus, 'rehydrate-pending-to-hot');
  assert.equal(pending.rehydratePriority, 'Standard');
  const item = await listed(container, 'cold-storage');
  assert.equal(item.archiveStatus, 'rehydrate-pending-to-hot');
  assert.equal(item.rehydratePriority, 'Standard');
  await refused(blob.download(), 409, 'BlobBeingRehydrated');
  await refused(blob.setAccessTier('Cool'), 409, 'BlobBeingRehydrated');
  await refused(blob.setAccessTier('Archive'), 409, 'BlobBeingRehydrated');
  assert.equal((await blob.setAccessTier('Hot', { rehydratePriority: 'High' }))._response.status, 202);
  pending = await blob.getProperties();
  assert.equal(pending.rehydratePriority, 'High');
  context.clock.advance(rehydrateMs);
  const online = await blob.getProperties();
  assert.equal(online.accessTier, 'Hot');
  assert.equal(online.archiveStatus, undefined);
  assert.equal(online.rehydratePriority, undefined);
  assert.equal((await blob.downloadToBuffer()).toString(), 'archived bytes');
  await blob.setMetadata({ other: 'x' });
}

async function snapshotTiers(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const blob = container.getBlockBlobClient('b');
  await blob.upload('v1', 2);
  const { snapshot } = await blob.createSnapshot();
  const old = blob.withSnapshot(snapshot!);
  await old.setAccessTier('Cool');
  assert.equal((await old.getProperties()).accessTier, 'Cool');
  assert.equal((await blob.getProperties()).accessTierInferred, true);
  await old.setAccessTier('Archive');
  await refused(old.download(), 409, 'BlobArchived');
  // set-blob-tier: a snapshot tiered to archive cannot be brought back online.
  await refused(old.setAccessTier('Hot'), 409, 'BlobArchived');
  let listedSnapshot = false;
  for await (const item of container.listBlobsFlat({ includeSnapshots: true })) {
    if (item.snapshot === snapshot) listedSnapshot = item.properties.accessTier === 'Archive';
  }
  assert.ok(listedSnapshot);
  assert.equal((await blob.downloadToBuffer()).toString(), 'v1');
}

async function copiesAndTiers(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const source = container.getBlockBlobClient('source');
  await source.upload('copied bytes', 12);
  await source.setAccessTier('Cool');
  const plain = container.getBlobClient('plain-copy');
  await (await plain.beginCopyFromURL(source.url)).pollUntilDone();
  assert.equal((await plain.getProperties()).accessTierInferred, true); // the source's tier is not carried over
  const tiered = container.getBlobClient('tiered-copy');
  await (await tiered.beginCopyFromURL(source.url, { tier: 'Cold' })).pollUntilDone();
  assert.equal((await tiered.getProperties()).accessTier, 'Cold');
  await source.setAccessTier('Archive');
  await refused(source.beginCopyFromURL(source.url), 409, 'BlobArchived');
  const fromArchive = container.getBlobClient('from-archive');
  await (await fromArchive.beginCopyFromURL(source.url, { tier: 'Cool', rehydratePriority: 'High' })).pollUntilDone();
  const pending = await fromArchive.getProperties();
  assert.equal(pending.accessTier, 'Archive');
  assert.equal(pending.archiveStatus, 'rehydrate-pending-to-cool');
  assert.equal(pending.rehydratePriority, 'High');
  await refused(fromArchive.download(), 409, 'BlobBeingRehydrated');
  context.clock.advance(rehydrateMs);
  assert.equal((await fromArchive.getProperties()).accessTier, 'Cool');
  assert.equal((await fromArchive.downloadToBuffer()).toString(), 'copied bytes');
  assert.equal((await source.getProperties()).accessTier, 'Archive'); // the source stays archived
}

async function sealAppendBlobs(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const log = container.getAppendBlobClient('log');
  await log.create();
  await log.appendBlock('one', 3);
  // The SDK types seal's answer as Append Block's; its headers are Append Blob Seal's.
  const sealedOf = (answer: object) => (answer as { isSealed?: boolean }).isSealed;
  assert.equal(sealedOf(await log.seal()), true);
  assert.equal((await log.getProperties()).isSealed, true);
  assert.equal((await log.download()).isSealed, true);
  await refused(log.appendBlock('two', 3), 409, 'BlobIsSealed');
  assert.equal(sealedOf(await log.seal()), true); // idempotent
  let item = await listed(container, 'log');
  assert.equal(item.isSealed, true);
  await log.setMetadata({ still: 'writable' }); // properties and metadata may change (append-blob-seal)
  const { snapshot } = await log.createSnapshot();
  assert.equal((await log.withSnapshot(snapshot!).getProperties()).isSealed, true);
  const copy = container.getAppendBlobClient('copy');
  await (await copy.beginCopyFromURL(log.url)).pollUntilDone();
  assert.equal((await copy.getProperties()).isSealed, true);
  const unsealed = container.getAppendBlobClient('unsealed-copy');
  await (await unsealed.beginCopyFromURL(log.url, { sealBlob: false })).pollUntilDone();
  assert.equal((await unsealed.getProperties()).isSealed, undefined);
  await unsealed.appendBlock('two', 3);
  assert.equal((await unsealed.downloadToBuffer()).toString(), 'onetwo');
  await log.create(); // overwritten: a new, unsealed append blob
  assert.equal((await log.getProperties()).isSealed, undefined);
  await log.appendBlock('new', 3);
  item = await listed(container, 'log');
  assert.equal(item.isSealed, undefined);
  await refused(log.setAccessTier('Cool'), 409, 'InvalidBlobType');
  const block = container.getBlockBlobClient('block');
  await block.upload('x', 1);
  await refused(container.getAppendBlobClient('block').seal(), 409, 'InvalidBlobType');
  await refused(container.getAppendBlobClient('missing').seal(), 404, 'BlobNotFound');
}

/** What the SDKs do not send: the raw answers, header names and codes. */
async function rawAnswers(context: Context): Promise<void> {
  const container = await freshContainer(context);
  const c = container.containerName;
  const { server } = context;
  await blobSend(server, { method: 'PUT', target: `${c}/b`, headers: { 'x-ms-blob-type': 'BlockBlob' }, body: 'x' });
  const missing = await blobSend(server, { method: 'PUT', target: `${c}/b?comp=tier` });
  assert.equal(missing.status, 400);
  assert.equal(missing.headers['x-ms-error-code'], 'MissingRequiredHeader');
  const bad = await blobSend(server, {
    method: 'PUT',
    target: `${c}/b?comp=tier`,
    headers: { 'x-ms-access-tier': 'garbage' },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers['x-ms-error-code'], 'InvalidHeaderValue');
  assert.match(bad.text, /<HeaderName>x-ms-access-tier<\/HeaderName><HeaderValue>garbage<\/HeaderValue>/);
  const priority = { 'x-ms-access-tier': 'Hot', 'x-ms-rehydrate-priority': 'Urgent' };
  const badPriority = await blobSend(server, { method: 'PUT', target: `${c}/b?comp=tier`, headers: priority });
  assert.equal(badPriority.headers['x-ms-error-code'], 'InvalidHeaderValue');
  const ok = await blobSend(server, {
    method: 'PUT',
    target: `${c}/b?comp=tier`,
    headers: { 'x-ms-access-tier': 'cool' },
  });
  assert.equal(ok.status, 200);
  assert.equal(ok.headers['etag'], undefined); // set-blob-tier answers no ETag
  const appendWithTier = await blobSend(server, {
    method: 'PUT',
    target: `${c}/a`,
    headers: { 'x-ms-blob-type': 'AppendBlob', 'x-ms-access-tier': 'Cool' },
  });
  assert.equal(appendWithTier.status, 400);
  assert.equal(appendWithTier.headers['x-ms-error-code'], 'InvalidHeaderValue');
  const list = await blobSend(server, { method: 'GET', target: `${c}?restype=container&comp=list` });
  // After BlobType, as the service writes them.
  assert.match(list.text, /<BlobType>BlockBlob<\/BlobType><AccessTier>Cool<\/AccessTier><AccessTierChangeTime>/);
}

const cases: readonly [string, (context: Context) => Promise<void>][] = [
  ['Hot, Cool and Cold: Set Blob Tier, on write, inferred, listed; ETag kept', tiersOnline],
  ['archive: content offline, rehydration pending then done by the clock', archiveAndRehydrate],
  ['tiers of snapshots; an archived snapshot stays archived', snapshotTiers],
  ['copies take x-ms-access-tier, not the source tier; copying from the archive rehydrates', copiesAndTiers],
  ['append blob seal: appends refused, kept by snapshots and copies, dropped by overwrite', sealAppendBlobs],
  ['raw answers: missing and invalid tier headers, listing order', rawAnswers],
];

for (const engine of serverEngines) {
  describe(`access tiers and seal on ${engine.label}`, () => {
    const clock = new TestClock();
    let context: Context;
    before(async () => {
      const args = ['--blob-rehydrate-delay', String(rehydrateMs)];
      const server = await startServer({ ...engine.options, env: clock.env, args });
      context = { server, service: blobServiceClient(server), clock };
    });
    after(async () => {
      await context?.server.stop();
    });
    for (const [name, run] of cases) test(name, () => run(context));
  });
}
