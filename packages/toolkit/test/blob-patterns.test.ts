// The patterns' Blob storage options, against Cerulean and Azurite: large values kept in blobs
// (written before the head row that names them; old and orphaned blobs removed), and index lists
// kept in blobs, updated under ETag conditions by concurrent writers without losing a key, beyond
// what a list row may hold.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import {
  codecs,
  defineModel,
  IndexEntityTable,
  IntegrityError,
  LargeObjectStore,
  LimitError,
  limits,
  readRaw,
  t,
} from '../src/index.js';
import { newTable, seededRandom, serverKinds, serversForFile, testRetry } from './fixtures.js';
import { uniqueTableName, type TestServer } from './servers.js';

const servers = serversForFile();

async function newContainer(server: TestServer): Promise<ContainerClient> {
  // No retries, so no keep-alive either: a pooled socket Azurite closes for idleness (after 5 s)
  // just as a request goes out would fail it with "socket hang up", unretried.
  const service = BlobServiceClient.fromConnectionString(server.blobConnectionString, {
    retryOptions: { maxTries: 1 },
    keepAliveOptions: { enable: false },
  });
  const container = service.getContainerClient(uniqueTableName('c').toLowerCase());
  await container.create();
  return container;
}

async function blobNames(container: ContainerClient): Promise<string[]> {
  const names: string[] = [];
  for await (const blob of container.listBlobsFlat()) names.push(blob.name);
  return names.sort();
}

const Person = defineModel({
  kind: 'person',
  schema: { team: t.string(), id: t.int32(), lastName: t.string() },
  partitionKey: ['team'],
  rowKey: [{ literal: 'person' }, { field: 'id', codec: codecs.uint(4) }],
});

/** RowKeys of 255 characters: 140 of them are more than one list row may hold. */
const Document = defineModel({
  kind: 'doc',
  schema: { folder: t.string(), path: t.string(), state: t.string() },
  partitionKey: ['folder'],
  rowKey: [{ field: 'path', codec: codecs.text() }],
});

describe('blob options of the patterns', () => {
  for (const kind of serverKinds) {
    test(`${kind}: a large value in a blob: blob first, then the head; old and orphaned blobs removed`, async () => {
      const server = servers.get(kind)!;
      const { client } = await newTable(server, 'LargeBlob');
      const blobs = await newContainer(server);
      const store = new LargeObjectStore(client, { retry: testRetry(21), blobs });
      const data = randomBytes(3 * 1024 * 1024 + 17); // more than three entities may hold
      const info = await store.put('p', 'report.pdf', data);
      assert.equal(info.chunks, 0);
      assert.deepEqual(await blobNames(blobs), [info.blob]);
      assert.deepEqual(Buffer.from((await store.get('p', 'report.pdf'))!), data);

      const smaller = randomBytes(1000);
      const second = await store.put('p', 'report.pdf', smaller);
      assert.deepEqual(await blobNames(blobs), [second.blob], 'the replaced blob is deleted');
      assert.deepEqual(Buffer.from((await store.get('p', 'report.pdf'))!), smaller);

      // A put that died after its upload leaves a blob no head names: kept while young, then collected.
      const orphan = `${store.blobPrefix('p', 'report.pdf')}00000000-dead`;
      await blobs.getBlockBlobClient(orphan).upload('partial', 7);
      assert.equal(await store.collect('p', 'report.pdf'), 0, 'a young orphan may be a put under way');
      assert.equal(await store.collect('p', 'report.pdf', Date.now() + 16 * 60_000), 1);
      assert.deepEqual(await blobNames(blobs), [second.blob]);

      await blobs.getBlockBlobClient(second.blob!).upload('tampered', 8);
      await assert.rejects(store.get('p', 'report.pdf'), IntegrityError, 'a changed blob fails the check');
      await store.delete('p', 'report.pdf');
      assert.equal(await store.get('p', 'report.pdf'), undefined);
      assert.deepEqual(await blobNames(blobs), []);
    });

    test(`${kind}: a chunked value stays readable with the blob option and moves to a blob at its next put`, async () => {
      const server = servers.get(kind)!;
      const { client } = await newTable(server, 'LargeMove');
      const blobs = await newContainer(server);
      const chunked = new LargeObjectStore(client, { retry: testRetry(22) });
      const data = randomBytes(800_000);
      await chunked.put('p', 'v', data);
      const store = new LargeObjectStore(client, { retry: testRetry(23), blobs });
      assert.deepEqual(Buffer.from((await store.get('p', 'v'))!), data);
      const moved = await store.put('p', 'v', data);
      await assert.rejects(chunked.get('p', 'v'), /needs the store's blobs option/);
      assert.deepEqual(Buffer.from((await store.get('p', 'v'))!), data);
      const rows = [];
      for await (const row of client.listEntities()) rows.push(row.rowKey);
      assert.deepEqual(rows, ['v'], 'only the head row is left; the chunks were collected');
      assert.deepEqual(await blobNames(blobs), [moved.blob]);
    });

    test(`${kind}: index lists in blobs: concurrent writers lose no key, lookups see exactly the holders`, async () => {
      const server = servers.get(kind)!;
      const { client } = await newTable(server, 'IndexBlob');
      const blobs = await newContainer(server);
      const byLastName = new IndexEntityTable(client, Person, 'lastName', { retry: testRetry(24), blobs });
      // 16 writers insert 16 entities with one value at once: every insert races for the same blob.
      await Promise.all(
        Array.from({ length: 16 }, (_, id) => byLastName.write({ team: 'core', id }, () => person(id, 'Hall'))),
      );
      assert.equal((await byLastName.find({ team: 'core' }, 'Hall')).length, 16);

      // Then random changes of the value and deletions by concurrent writers.
      const names = ['Hall', 'Cao', "O'Brien", 'Smith/Jones'];
      await Promise.all(
        Array.from({ length: 8 }, async (_, w) => {
          const random = seededRandom(100 + w);
          for (let i = 0; i < 10; i++) {
            const id = Math.floor(random() * 16);
            const name = random() < 0.15 ? null : names[Math.floor(random() * names.length)]!;
            await byLastName.write({ team: 'core', id }, () => (name === null ? null : person(id, name)));
          }
        }),
      );
      const holders = new Map<string, number[]>(names.map((name) => [name, []]));
      for (let id = 0; id < 16; id++) {
        const raw = await readRaw(client, 'core', Person.keysOf({ team: 'core', id }).rowKey);
        if (raw) holders.get(Person.fromEntity(raw).lastName)!.push(id);
      }
      for (const [name, ids] of holders) {
        const found = (await byLastName.find({ team: 'core' }, name)).map((entity) => entity.id).sort((a, b) => a - b);
        assert.deepEqual(found, ids, `the entities named ${name}`);
      }
    });

    test(`${kind}: an index list beyond what a list row holds lives in its blob`, async () => {
      const server = servers.get(kind)!;
      const { client } = await newTable(server, 'IndexLong');
      const blobs = await newContainer(server);
      const count = 140;
      const path = (i: number) => `${String(i).padStart(4, '0')}/${'x'.repeat(250)}`;
      const rows = new IndexEntityTable(client, Document, 'state', { retry: testRetry(25) });
      const doc = (i: number) => ({ folder: 'f', path: path(i), state: 'draft' });
      let refused: unknown;
      for (let i = 0; i < count && refused === undefined; i++)
        await rows.write({ folder: 'f', path: path(i) }, () => doc(i)).catch((error: unknown) => (refused = error));
      assert.ok(refused instanceof LimitError, `the list row option refuses the list: ${String(refused)}`);
      const listed = new IndexEntityTable(client, Document, 'state', { retry: testRetry(26), blobs });
      let next = 0;
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          for (let i = next++; i < count; i = next++) await listed.write({ folder: 'f', path: path(i) }, () => doc(i));
        }),
      );
      const found = await listed.find({ folder: 'f' }, 'draft');
      assert.equal(found.length, count);
      const [list] = await blobNames(blobs);
      const bytes = (await blobs.getBlobClient(list!).getProperties()).contentLength!;
      assert.ok(bytes > limits.stringUtf16Units, `the list blob holds ${bytes} bytes, more than a list row may`);
    });
  }
});

function person(id: number, lastName: string) {
  return { team: 'core', id, lastName };
}
