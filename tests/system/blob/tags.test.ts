// Blob index tags through the official JS SDK (@azure/storage-blob) and raw HTTP, on every engine:
// Set/Get Blob Tags, x-ms-tags on uploads, x-ms-tag-count, List Blobs' include=tags, Find Blobs by
// Tags in the account and a container with paging, and x-ms-if-tags honoured on reads and writes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RestError, type ContainerClient } from '@azure/storage-blob';
import { blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { assertQueueError } from '../../helpers/queue.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

async function status(action: Promise<unknown>): Promise<[number, string | undefined]> {
  try {
    await action;
  } catch (error) {
    if (error instanceof RestError) return [error.statusCode ?? 0, error.code];
    throw error;
  }
  return [200, undefined];
}

async function findAll(iterator: AsyncIterable<{ name: string; containerName: string }>): Promise<string[]> {
  const names: string[] = [];
  for await (const item of iterator) names.push(`${item.containerName}/${item.name}`);
  return names;
}

for (const engine of serverEngines) {
  describe(`blob index tags on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    async function newContainer(prefix: string): Promise<ContainerClient> {
      const container = blobServiceClient(server).getContainerClient(uniqueContainerName(prefix));
      await container.create();
      return container;
    }

    test('x-ms-if-tags on a blob without the tag: 412 for download, properties, delete, metadata', async () => {
      const container = await newContainer('ift');
      const blob = container.getBlockBlobClient('b.txt');
      await blob.upload('hello', 5, { tags: { stage: 'draft' } });
      const tagConditions = "stage = 'done'";
      const conditions = { tagConditions };
      assert.deepEqual(await status(blob.download(0, undefined, { conditions })), [412, 'ConditionNotMet']);
      // A HEAD answer has no body: the SDK sees the status (the code is in x-ms-error-code).
      assert.equal((await status(blob.getProperties({ conditions })))[0], 412);
      assert.deepEqual(await status(blob.setMetadata({ a: 'b' }, { conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.setHTTPHeaders({}, { conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.createSnapshot({ conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.setAccessTier('Cool', { conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.upload('x', 1, { conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.getTags({ conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.setTags({ a: 'b' }, { conditions })), [412, 'ConditionNotMet']);
      assert.deepEqual(await status(blob.getBlockList('committed', { conditions })), [412, 'ConditionNotMet']);
      const lease = blob.getBlobLeaseClient();
      assert.deepEqual(await status(lease.acquireLease(15, { conditions })), [412, 'ConditionNotMet']);
      const copied = await blobSend(server, {
        method: 'PUT',
        target: `${container.containerName}/copy.txt`,
        headers: { 'x-ms-copy-source': blob.url, 'x-ms-source-if-tags': tagConditions },
      });
      assertQueueError(copied, 412, 'SourceConditionNotMet');
      assert.deepEqual(await status(blob.delete({ conditions })), [412, 'ConditionNotMet']);
      // The same requests with a condition that holds go through.
      const holds = { tagConditions: `"stage" = 'draft' AND "stage" <> 'done' OR x = 'y'` };
      assert.equal((await blob.downloadToBuffer(0, undefined, { conditions: holds })).toString(), 'hello');
      assert.equal((await blob.getProperties({ conditions: holds })).tagCount, 1);
      await blob.delete({ conditions: holds });
      // A condition that does not parse: 400.
      const bad = { tagConditions: "stage = 'unclosed" };
      assert.equal((await status(container.getBlobClient('x').getProperties({ conditions: bad })))[0], 400);
    });

    test('setTags, getTags, upload with tags, tag count, listing include=tags, snapshots keep tags', async () => {
      const container = await newContainer('tag');
      const blob = container.getBlockBlobClient('b.txt');
      await blob.upload('hello', 5, { tags: { project: 'contoso', 'a b': 'x+y/z:=._-' } });
      assert.deepEqual((await blob.getTags()).tags, { project: 'contoso', 'a b': 'x+y/z:=._-' });
      const before = await blob.getProperties();
      assert.equal(before.tagCount, 2);
      const snapshot = (await blob.createSnapshot()).snapshot!;
      await blob.setTags({ stage: 'done' });
      const afterSet = await blob.getProperties();
      // Setting tags changes neither the ETag nor Last-Modified.
      assert.equal(afterSet.etag, before.etag);
      assert.equal(afterSet.lastModified?.getTime(), before.lastModified?.getTime());
      assert.deepEqual((await blob.getTags()).tags, { stage: 'done' });
      assert.deepEqual((await blob.withSnapshot(snapshot).getTags()).tags, { project: 'contoso', 'a b': 'x+y/z:=._-' });
      // Metadata and properties do not touch tags; an overwrite without tags clears them.
      await blob.setMetadata({ m: '1' });
      assert.deepEqual((await blob.getTags()).tags, { stage: 'done' });
      const listed = [];
      for await (const item of container.listBlobsFlat({ includeTags: true })) listed.push([item.name, item.tags]);
      assert.deepEqual(listed, [['b.txt', { stage: 'done' }]]);
      await blob.upload('again', 5);
      assert.deepEqual((await blob.getTags()).tags, {});
      assert.equal((await blob.getProperties()).tagCount, undefined);
      // Put Block List with tags.
      const staged = container.getBlockBlobClient('staged.txt');
      await staged.stageBlock('AAAA', 'abc', 3);
      await staged.commitBlockList(['AAAA'], { tags: { kind: 'staged' } });
      assert.deepEqual((await staged.getTags()).tags, { kind: 'staged' });
      // Copy Blob: x-ms-tags on the destination, not the source's tags.
      const copy = container.getBlobClient('copy.txt');
      await copy.syncCopyFromURL(staged.url, { tags: { copied: 'yes' } });
      assert.deepEqual((await copy.getTags()).tags, { copied: 'yes' });
      // Invalid tags: 400 InvalidTag.
      const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v']));
      assert.deepEqual(await status(blob.setTags(eleven)), [400, 'InvalidTag']);
      assert.deepEqual(await status(blob.setTags({ 'bad!': 'v' })), [400, 'InvalidTag']);
      assert.deepEqual(await status(blob.setTags({ ['k'.repeat(129)]: 'v' })), [400, 'InvalidTag']);
      assert.deepEqual(await status(blob.setTags({ k: 'v'.repeat(257) })), [400, 'InvalidTag']);
      assert.deepEqual(await status(container.getBlobClient('missing').getTags()), [404, 'BlobNotFound']);
    });

    test('findBlobsByTags in the account and a container, paged, with ranges and @container', async () => {
      const one = await newContainer('fa');
      const two = await newContainer('fb');
      const run = uniqueContainerName('r');
      for (let i = 0; i < 7; i++) {
        await one.getBlockBlobClient(`one${i}`).upload('x', 1, { tags: { run, n: String(i) } });
      }
      for (let i = 0; i < 3; i++) await two.getBlockBlobClient(`two${i}`).upload('x', 1, { tags: { run, n: '9' } });
      await one.getBlockBlobClient('other').upload('x', 1, { tags: { run: 'not-this-one' } });
      const service = blobServiceClient(server);
      const all = await findAll(service.findBlobsByTags(`"run" = '${run}'`));
      assert.equal(all.length, 10);
      const pages: number[] = [];
      for await (const page of service.findBlobsByTags(`"run" = '${run}'`).byPage({ maxPageSize: 3 })) {
        pages.push(page.blobs.length);
        for (const item of page.blobs) assert.deepEqual(item.tags, { run });
      }
      assert.deepEqual(pages, [3, 3, 3, 1]);
      const ranged = await findAll(service.findBlobsByTags(`"run" = '${run}' AND "n" >= '2' AND "n" < '5'`));
      assert.deepEqual(ranged, [`${one.containerName}/one2`, `${one.containerName}/one3`, `${one.containerName}/one4`]);
      const inTwo = await findAll(service.findBlobsByTags(`@container = '${two.containerName}' AND "run" = '${run}'`));
      assert.equal(inTwo.length, 3);
      const containerScoped = await findAll(one.findBlobsByTags(`run = '${run}' AND n > '5'`));
      assert.deepEqual(containerScoped, [`${one.containerName}/one6`]);
      // Tags set later are found; a deleted blob is not.
      await one.getBlockBlobClient('one0').setTags({ run: 'moved' });
      await one.getBlockBlobClient('one1').delete();
      assert.equal((await findAll(service.findBlobsByTags(`"run" = '${run}'`))).length, 8);
      // A deleted container's blobs are not found.
      await two.delete();
      assert.equal((await findAll(service.findBlobsByTags(`"run" = '${run}'`))).length, 5);
      // Bad expressions: 400.
      for (const where of [`"run" = '${run}' OR "n" = '1'`, `"n" > '1' AND "n" >= '2'`, `"run" <> 'x'`, `"run" =`]) {
        const [code] = await status(findAll(service.findBlobsByTags(where)));
        assert.equal(code, 400, where);
      }
    });

    test('Blob Batch: Delete Blob and Set Blob Tier parts honour x-ms-if-tags', async () => {
      const container = await newContainer('bat');
      const kept = container.getBlockBlobClient('kept');
      const gone = container.getBlockBlobClient('gone');
      await kept.upload('x', 1, { tags: { keep: 'yes' } });
      await gone.upload('x', 1, { tags: { keep: 'no' } });
      const batch = blobServiceClient(server).getBlobBatchClient();
      const conditions = { tagConditions: "keep = 'no'" };
      const deleted = await batch.deleteBlobs([kept, gone], { conditions });
      assert.deepEqual(
        deleted.subResponses.map((part) => part.status),
        [412, 202],
      );
      const tiered = await batch.setBlobsAccessTier([kept], 'Cool', { conditions });
      assert.deepEqual(
        tiered.subResponses.map((part) => part.status),
        [412],
      );
      assert.equal((await kept.getProperties()).accessTier, 'Hot');
    });

    test('raw: Set Blob Tags XML, x-ms-tags header, container ops refuse x-ms-if-tags', async () => {
      const name = uniqueContainerName('raw');
      assert.equal((await blobSend(server, { method: 'PUT', target: `${name}?restype=container` })).status, 201);
      const put = await blobSend(server, {
        method: 'PUT',
        target: `${name}/b`,
        headers: { 'x-ms-blob-type': 'BlockBlob', 'x-ms-tags': 'k%201=v%2B1&k2=' },
        body: 'x',
      });
      assert.equal(put.status, 201, put.text);
      const got = await blobSend(server, { method: 'GET', target: `${name}/b?comp=tags` });
      assert.equal(got.status, 200);
      assert.match(
        got.text,
        /<Tags><TagSet><Tag><Key>k 1<\/Key><Value>v\+1<\/Value><\/Tag><Tag><Key>k2<\/Key><Value\s*\/?>/,
      );
      const set = await blobSend(server, {
        method: 'PUT',
        target: `${name}/b?comp=tags`,
        body: '<?xml version="1.0" encoding="utf-8"?><Tags><TagSet><Tag><Key>a</Key><Value>1</Value></Tag></TagSet></Tags>',
      });
      assert.equal(set.status, 204, set.text);
      const refused = await blobSend(server, {
        method: 'DELETE',
        target: `${name}?restype=container`,
        headers: { 'x-ms-if-tags': "a = '1'" },
      });
      assertQueueError(refused, 400, 'UnsupportedHeader');
    });
  });
}
