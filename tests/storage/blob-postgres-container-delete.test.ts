// Delete Container on PostgreSQL: the request changes one row however many blobs the container
// holds; reclaim passes, from any number of processes at once, remove its rows in bounded
// batches (a blob of more block rows than a batch over several), then its content; writes racing
// the delete either land before it (and are reclaimed with it) or find no container. Skipped,
// loudly, without a PostgreSQL: tests/helpers/postgres.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BlobRecord, BlobStore, ContentRef } from '../../src/storage/blob-store.js';
import { blockRowsPerBatchMax } from '../../src/storage/postgres/blob/container-reclaim.js';
import type { PostgresBlobStore } from '../../src/storage/postgres/blob/store.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { createDatabase, dropDatabase, onDatabase, postgresUnavailable } from '../helpers/postgres.js';

const account = 'devstoreaccount1';
const t0 = Date.UTC(2026, 0, 1);
const graceMs = 60_000;
let sequence = 0;

const etag = () => `"0x${(++sequence).toString(16).padStart(15, '0')}"`;

const blob = (container: string, name: string, sizeBytes: number): BlobRecord => ({
  container,
  name,
  snapshot: '',
  etag: etag(),
  lastModifiedMs: t0,
  sizeBytes,
  state: '{}',
});

async function* pieces(text: string): AsyncGenerator<Uint8Array> {
  yield Buffer.from(text);
}

async function rowCount(url: string, sql: string): Promise<number> {
  return onDatabase(url, async (client) => Number((await client.query<{ n: string }>(sql)).rows[0]!.n));
}

const count = (table: string) => `SELECT count(*) AS n FROM cerulean.${table}`;

async function createContainer(store: BlobStore, name: string): Promise<void> {
  assert.equal(await store.createContainer(account, { name, etag: etag(), lastModifiedMs: t0, state: '{}' }), true);
}

/** Passes at `atMs` in both stores at once, `limit` each, until both remove nothing; what each pass removed. */
async function reclaimTogether(stores: readonly BlobStore[], atMs: number, limit: number): Promise<number[]> {
  const removed: number[] = [];
  for (let round = 0; round < 1000; round++) {
    const counts = await Promise.all(stores.map((store) => store.reclaimContent(atMs, t0 - 1, limit)));
    removed.push(...counts);
    if (counts.every((each) => each === 0)) return removed;
  }
  assert.fail('reclaim comes to an end');
}

const unavailable = postgresUnavailable();

describe('PostgreSQL Delete Container', { skip: unavailable }, () => {
  let url = '';
  let first: PostgresStore | undefined;
  let second: PostgresStore | undefined;
  let stores: PostgresBlobStore[] = [];
  before(async () => {
    url = await createDatabase();
    [first, second] = await Promise.all([PostgresStore.open({ url }), PostgresStore.open({ url })]);
    stores = [first, second].map((each) => each!.openBlobStore({ chunkBytes: 5, contentGraceMs: graceMs }));
  });
  after(async () => {
    await Promise.all([first?.close(), second?.close()]);
    if (url !== '') await dropDatabase(url);
  });

  test('rows go in bounded batches from two processes at once, a blob of many blocks over several', async () => {
    const [store] = stores;
    await createContainer(store!, 'big');
    const contents: ContentRef[] = [];
    for (let i = 0; i < 40; i++) {
      const content = await store!.writeContent(pieces(`blob ${i}`));
      contents.push(content);
      const record = blob('big', `b${i}`, content.sizeBytes);
      assert.equal(
        await store!.putBlob(account, record, { kind: 'replace', blocks: [{ blockId: '', content }] }, null),
        'ok',
      );
      if (i % 8 === 0)
        assert.equal(await store!.stageBlock(account, 'big', `s${i}`, { blockId: 'QQ==', content }), 'ok');
    }
    // One blob of more block rows than a batch deletes: 2.5 batches of the same content.
    const many = await store!.writeContent(pieces('x'));
    const blocks = Array.from({ length: blockRowsPerBatchMax * 2.5 }, (_, i) => ({ blockId: `k${i}`, content: many }));
    const manyRecord = blob('big', 'many', blocks.length);
    assert.equal(await store!.putBlob(account, manyRecord, { kind: 'replace', blocks }, null), 'ok');
    assert.equal(await store!.deleteContainer(account, 'big', undefined), 'ok');
    assert.equal(await store!.getContainer(account, 'big'), undefined);
    assert.equal(await rowCount(url, count('blobs')), 41, 'the request deleted no blob row');
    const removed = await reclaimTogether(stores, t0, 7);
    for (const each of removed) assert.ok(each <= 7, `a pass removed ${each} pieces with a limit of 7`);
    // Each blob, staged block and the container; and each pass that took only block rows (of the
    // big blob, three at most), whichever process ran it.
    const total = removed.reduce((sum, each) => sum + each, 0);
    assert.ok(total >= 41 + 5 + 1 && total <= 41 + 5 + 1 + 3, `${total} pieces`);
    for (const table of ['blobs', 'blob_blocks', 'blob_staged', 'blob_containers'])
      assert.equal(await rowCount(url, count(table)), 0, table);
    await reclaimTogether(stores, t0 + graceMs, 1000);
    assert.equal(await rowCount(url, count('blob_contents')), 0);
    assert.equal(await rowCount(url, count('blob_chunks')), 0);
  });

  test('writes racing Delete Container land before it or find no container; nothing is left after', async () => {
    const [a, b] = stores;
    const content = await a!.writeContent(pieces('raced'));
    for (let round = 0; round < 10; round++) {
      const name = `race${round}`;
      await createContainer(a!, name);
      const writes = Array.from({ length: 6 }, (_, i) => {
        const store = i % 2 === 0 ? a! : b!;
        return i % 3 === 0
          ? store.stageBlock(account, name, `s${i}`, { blockId: 'QQ==', content })
          : store.putBlob(
              account,
              blob(name, `b${i}`, content.sizeBytes),
              {
                kind: 'replace',
                blocks: [{ blockId: '', content }],
              },
              undefined,
            );
      });
      const [deleted, ...outcomes] = await Promise.all([b!.deleteContainer(account, name, undefined), ...writes]);
      assert.equal(deleted, 'ok');
      for (const outcome of outcomes) assert.ok(['ok', 'containerNotFound'].includes(outcome), outcome);
      assert.equal(await a!.getContainer(account, name), undefined);
      assert.equal(await a!.getBlob(account, { container: name, name: 'b1', snapshot: '' }), undefined);
    }
    await reclaimTogether(stores, t0 + 10 * graceMs, 3);
    for (const table of ['blobs', 'blob_blocks', 'blob_staged', 'blob_containers'])
      assert.equal(await rowCount(url, count(table)), 0, table);
  });
});

if (unavailable !== undefined) test('PostgreSQL Delete Container', { skip: unavailable }, () => undefined);
