// Content: ranges clamped and across blocks, 'changed' once a version is no longer current, a
// reader that keeps its version while the blob is replaced, deleted and reclaimed, a failing
// source, and 64 MiB through writeContent and readContent in bounded memory.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BlobRecord, BlobStore } from '../../../../src/storage/blob-store.js';
import type { BlobCase } from '../suite.js';
import { blob, blockOf, chunksOf, collect, readAll, reclaimAll } from '../support.js';

const key = (name: string, snapshot = '') => ({ container: 'c', name, snapshot });
const mebibyte = 1024 * 1024;

/** `count` chunks of 1 MiB, each filled from its index; hashed into `hash` as they go. */
async function* generated(count: number, hash: ReturnType<typeof createHash>): AsyncIterable<Uint8Array> {
  for (let i = 0; i < count; i++) {
    const chunk = Buffer.alloc(mebibyte, `chunk ${i} `);
    hash.update(chunk);
    yield chunk;
  }
}

// The memory bound is on live memory: every engine's stream leaves garbage (copied chunks; the
// PostgreSQL driver's hex text, three times the bytes read) that a busy machine may not collect for
// tens of MiB, so each sample collects first. Exposed here once for every engine's test file.
setFlagsFromString('--expose-gc');
global.gc ??= runInNewContext('gc') as typeof global.gc;

/** The most memory (JS heap and buffers) above the level at the start, sampled while `run` runs. */
async function peakMemoryAbove<T>(run: () => Promise<T>): Promise<{ result: T; peakBytes: number }> {
  const used = () => {
    global.gc?.();
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    return heapUsed + arrayBuffers;
  };
  const start = used();
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, used() - start)), 5);
  try {
    const result = await run();
    peak = Math.max(peak, used() - start);
    return { result, peakBytes: peak };
  } finally {
    clearInterval(sampler);
  }
}

/** Blob `b` of container `c`: "abcdefg" in three blocks, the middle one empty. */
async function putAbcdefg(store: BlobStore, acct: string): Promise<BlobRecord> {
  const blocks = [
    await blockOf(store, 'abcd', 'QQ=='),
    await blockOf(store, '', 'Qg=='),
    await blockOf(store, 'efg', 'Qw=='),
  ];
  const record = blob('c', 'b', 7);
  await store.putBlob(acct, record, { kind: 'replace', blocks }, null);
  return record;
}

export const contentCases: readonly BlobCase[] = [
  {
    name: 'getBlobAndContent (if the engine has it): the record, and its whole content when small enough',
    async run({ store, account, withContainer }) {
      if (store.getBlobAndContent === undefined) return;
      const acct = await withContainer();
      const record = await putAbcdefg(store, acct);
      const whole = await store.getBlobAndContent(acct, key('b'), 7);
      assert.deepEqual(whole?.record, record);
      assert.equal(whole?.bytes?.toString(), 'abcdefg');
      assert.deepEqual(await store.getBlobAndContent(acct, key('b'), 6), { record, bytes: undefined }, 'too large');
      const snapshot = { ...record, snapshot: '2026-01-01T00:00:00.0000000Z', etag: '"snap"' };
      assert.equal(await store.snapshotBlob(acct, snapshot, record.etag), 'ok');
      const empty = blob('c', 'b', 0);
      await store.putBlob(acct, empty, { kind: 'replace', blocks: [] }, record.etag);
      assert.equal((await store.getBlobAndContent(acct, key('b'), 7))?.bytes?.length, 0);
      const kept = await store.getBlobAndContent(acct, key('b', snapshot.snapshot), 100);
      assert.equal(kept?.bytes?.toString(), 'abcdefg', "a snapshot's content");
      assert.equal(await store.getBlobAndContent(acct, key('none'), 7), undefined);
      assert.equal(await store.getBlobAndContent(account(), key('b'), 7), undefined);
    },
  },
  {
    name: 'readContent clamps its range, reads across block boundaries, answers changed for an old ETag',
    async run({ store, account, withContainer }) {
      const acct = await withContainer();
      const record = await putAbcdefg(store, acct);
      assert.equal(await readAll(store, acct, record), 'abcdefg');
      assert.equal(await readAll(store, acct, record, 2, 6), 'cdef');
      assert.equal(await readAll(store, acct, record, 4, 5), 'e');
      assert.equal(await readAll(store, acct, record, 3, 100), 'defg');
      assert.equal(await readAll(store, acct, record, 7, 100), '');
      assert.equal(await readAll(store, acct, record, 50, 100), '');
      assert.equal(await readAll(store, acct, record, 5, 2), '');
      assert.equal(await store.readContent(acct, key('b'), '"stale"', 0, 7), 'changed');
      assert.equal(await store.readContent(acct, key('none'), record.etag, 0, 7), 'changed');
      assert.equal(await store.readContent(account(), key('b'), record.etag, 0, 7), 'changed');
      const next = blob('c', 'b', 7, 'props');
      await store.putBlob(acct, next, { kind: 'keep' }, record.etag);
      assert.equal(await store.readContent(acct, key('b'), record.etag, 0, 7), 'changed');
      assert.equal(await readAll(store, acct, next), 'abcdefg');
    },
  },
  {
    name: 'a reader keeps reading its version while the blob is replaced, deleted and content reclaimed',
    async run({ store, subject, withContainer }) {
      const acct = await withContainer();
      const texts = ['first block,', 'second block,', 'third block'];
      const blocks = [];
      for (const text of texts) blocks.push(await blockOf(store, text));
      const record = blob('c', 'b', texts.join('').length);
      await store.putBlob(acct, record, { kind: 'replace', blocks }, null);
      const chunks = await store.readContent(acct, key('b'), record.etag, 0, Number.POSITIVE_INFINITY);
      assert.notEqual(chunks, 'changed');
      const reader = (chunks as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      const first = await reader.next();
      assert.equal(first.done, false);
      const replaced = blob('c', 'b', 3);
      await store.putBlob(acct, replaced, { kind: 'replace', blocks: [await blockOf(store, 'new')] }, record.etag);
      assert.equal(await store.deleteBlob(acct, key('b'), { base: true, snapshots: true }, undefined), 'ok');
      await reclaimAll(subject);
      let rest = '';
      for (let next = await reader.next(); next.done !== true; next = await reader.next())
        rest += next.value.toString();
      assert.equal(first.value.toString() + rest, texts.join(''));
      // Once the reader is done, the old content goes.
      await reclaimAll(subject);
      for (const each of blocks) assert.equal(await subject.contentExists(each.content), false);
    },
  },
  {
    name: 'writeContent rethrows the error of a failing source',
    async run({ store }) {
      async function* failing(): AsyncIterable<Uint8Array> {
        yield Buffer.from('partial');
        throw new Error('the client went away');
      }
      await assert.rejects(store.writeContent(failing()), /the client went away/);
      const empty = await store.writeContent(chunksOf(Buffer.alloc(0)));
      assert.equal(empty.sizeBytes, 0);
    },
  },
  {
    name: '64 MiB written and read back whole and in a range, in memory far below its size',
    async run({ store, withContainer }) {
      const acct = await withContainer();
      const written = createHash('sha256');
      const { result: ref, peakBytes: writePeak } = await peakMemoryAbove(() =>
        store.writeContent(generated(64, written)),
      );
      assert.equal(ref.sizeBytes, 64 * mebibyte);
      const record = blob('c', 'big', ref.sizeBytes);
      await store.putBlob(acct, record, { kind: 'replace', blocks: [{ blockId: '', content: ref }] }, null);
      const { result: readHash, peakBytes: readPeak } = await peakMemoryAbove(async () => {
        const chunks = await store.readContent(acct, key('big'), record.etag, 0, Number.POSITIVE_INFINITY);
        const hash = createHash('sha256');
        for await (const chunk of chunks as AsyncIterable<Buffer>) hash.update(chunk);
        return hash.digest('hex');
      });
      assert.equal(readHash, written.digest('hex'));
      // A whole-blob buffer would take 64 MiB; streaming takes a few chunks (garbage not yet collected aside).
      const boundBytes = 48 * mebibyte;
      assert.ok(writePeak < boundBytes, `writing took ${writePeak} bytes above the start`);
      assert.ok(readPeak < boundBytes, `reading took ${readPeak} bytes above the start`);
      const middle = await store.readContent(acct, key('big'), record.etag, 10 * mebibyte - 3, 10 * mebibyte + 9);
      const expected =
        Buffer.alloc(mebibyte, 'chunk 9 ')
          .subarray(mebibyte - 3)
          .toString() + Buffer.alloc(9, 'chunk 10 ').toString();
      assert.equal(await collect(middle as AsyncIterable<Buffer>), expected);
    },
  },
];
