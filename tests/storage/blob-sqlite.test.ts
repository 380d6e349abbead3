// The SQLite engine's blob store against the blob conformance suite, in memory (writer inline,
// content in memory) and on disk (writer thread, content files beside the database and small
// content in rows; and files only); then what is particular to it: the content files' layout and
// fsync order (under strace), small content as rows (no file, across a reopen, and a database made
// before there were such rows), the sweep of what a crash leaves, reclaim across a restart, and a
// 50,000-block blob read by its end-byte index.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { BlobRecord } from '../../src/storage/blob-store.js';
import { DiskContent } from '../../src/storage/sqlite/blob/content.js';
import { blobReaderSql, type SqliteBlobStore } from '../../src/storage/sqlite/blob/store.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { runBlobConformance, type BlobStoreUnderTest } from './blob-conformance/index.js';
import { blob, chunksOf, container, readAll, reclaimAll, write } from './blob-conformance/support.js';

const contentGraceMs = 60_000;

async function inMemory(): Promise<BlobStoreUnderTest> {
  const tables = await SqliteStore.open({ location: undefined });
  const store = await tables.openBlobStore({ contentGraceMs });
  return { store, contentGraceMs, contentExists: (ref) => store.contentExists(ref), close: () => tables.close() };
}

async function onDisk(inlineBytesMax?: number): Promise<BlobStoreUnderTest> {
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-blob-conformance-'));
  let tables = await SqliteStore.open({ location });
  let blobs: SqliteBlobStore = await tables.openBlobStore({ contentGraceMs, inlineBytesMax });
  const close = async () => {
    blobs.close();
    await tables.close();
  };
  return {
    get store() {
      return blobs;
    },
    contentGraceMs,
    contentExists: (ref) => blobs.contentExists(ref),
    async close() {
      await close();
      rmSync(location, { recursive: true, force: true });
    },
    async reopen() {
      await close();
      tables = await SqliteStore.open({ location });
      blobs = await tables.openBlobStore({ contentGraceMs, inlineBytesMax });
      return blobs;
    },
  };
}

runBlobConformance('SQLite in memory', inMemory, {
  skip: {
    'after reopening: containers, blobs, snapshots, blocks and content as acknowledged':
      'an in-memory database keeps nothing once closed',
    'a deleted container stays deleted across a reopen, and its rows are reclaimed after it':
      'an in-memory database keeps nothing once closed',
    'previous versions are there after reopening, their content too': 'an in-memory database keeps nothing once closed',
    'soft-deleted rows are there after reopening': 'an in-memory database keeps nothing once closed',
    'a kept container and a restore survive reopening the store': 'an in-memory database keeps nothing once closed',
    '64 MiB written and read back whole and in a range, in memory far below its size':
      'an in-memory store keeps its content in memory',
  },
});
runBlobConformance('SQLite on disk', () => onDisk());
// The suite's content is small: without rows for it, every piece is a file.
runBlobConformance('SQLite on disk, files only', () => onDisk(0));

// -- SQLite on disk only: the files beside the database --------------------------------------

const loadScript = path.join(import.meta.dirname, '..', 'helpers', 'blob-load.js');
const account = 'acct';
const key = (container: string, name: string) => ({ container, name, snapshot: '' });

/** Content files under `<location>/blobs/<2 hex>/`, by name. */
function contentFiles(location: string): string[] {
  const root = path.join(location, 'blobs');
  return readdirSync(root).flatMap((slice) => readdirSync(path.join(root, slice)));
}

/** Content ids of the inline rows of the database at `location`. */
function inlineIds(location: string): string[] {
  const db = new Database(path.join(location, 'cerulean.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT content_id FROM blob_inline ORDER BY content_id').pluck().all() as string[];
  } finally {
    db.close();
  }
}

async function withStore<T>(location: string, run: (blobs: SqliteBlobStore) => Promise<T>): Promise<T> {
  const tables = await SqliteStore.open({ location });
  const blobs = await tables.openBlobStore({ contentGraceMs });
  try {
    return await run(blobs);
  } finally {
    blobs.close();
    await tables.close();
  }
}

function under(blobs: SqliteBlobStore): BlobStoreUnderTest {
  return { store: blobs, contentGraceMs, contentExists: (ref) => blobs.contentExists(ref), close: async () => {} };
}

async function putText(blobs: SqliteBlobStore, name: string, text: string): Promise<BlobRecord> {
  const block = { blockId: '', content: await write(blobs, text) };
  const record = { ...blob('c', name, Buffer.byteLength(text)) };
  assert.equal(await blobs.putBlob(account, record, { kind: 'replace', blocks: [block] }, undefined), 'ok');
  return record;
}

describe('SQLite blob content files', () => {
  let location = '';
  beforeEach(() => {
    location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-blob-files-'));
  });
  afterEach(() => rmSync(location, { recursive: true, force: true }));

  test(
    'content is created at its name, the file and its directory fsynced, before the commit naming it',
    {
      skip: spawnSync('strace', ['-V']).status === 0 ? false : 'needs strace',
    },
    async () => {
      const trace = path.join(location, 'trace');
      const calls = ['trace=openat,fsync,fdatasync,rename'];
      const traced = spawnSync(
        'strace',
        ['-f', '-y', '-o', trace, '-e', ...calls, process.execPath, loadScript, location, '1'],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(traced.status, 0, traced.stderr);
      const acked = traced.stdout
        .split('\n')
        .find((line) => line.startsWith('ack '))!
        .split(' ');
      const lines = readFileSync(trace, 'utf8').split('\n');
      const blocks = await withStore(location, (blobs) => blobs.getBlocks(account, key('load', acked[1]!)));
      assert.ok(blocks.committed.length >= 1);
      const logSyncs = lines.flatMap((line, at) => (/fsync\(\d+<[^>]*cerulean\.sqlite-wal>/.test(line) ? [at] : []));
      const lastLogSync = logSyncs.at(-1) ?? -1;
      const inline = new Set(inlineIds(location));
      for (const { content } of blocks.committed) {
        const file = path.join(location, 'blobs', content.id.slice(0, 2), content.id);
        if (inline.has(content.id)) {
          // A row (the load's sizes are random): its durability is the log's fsync alone.
          assert.ok(content.sizeBytes <= 64 * 1024 && lastLogSync >= 0);
          assert.ok(!lines.some((line) => line.includes(content.id)), 'small content has no file');
          continue;
        }
        assert.ok(statSync(file).isFile(), `${file} is where the layout says`);
        const created = lines.findIndex(
          (line) => line.includes(`openat(`) && line.includes(`"${file}", O_WRONLY|O_CREAT|O_EXCL`),
        );
        const fileSync = lines.findIndex((line) => line.includes(`fsync(`) && line.includes(`<${file}>`));
        const directory = path.dirname(file);
        const directorySync = lines.findIndex(
          (line, at) => at > created && line.includes(`fsync(`) && line.includes(`<${directory}>`),
        );
        assert.ok(
          created >= 0 && created < fileSync,
          `the file is created exclusively, then fsynced (${created}, ${fileSync})`,
        );
        assert.ok(directorySync > created, 'its directory is fsynced after the file was created');
        assert.ok(!lines.some((line) => line.includes('rename(') && line.includes(content.id)), 'no rename');
        assert.ok(Math.max(fileSync, directorySync) < lastLogSync, 'the commit that names it is fsynced after both');
      }
    },
  );

  describe('a body that stalls for longer than the grace', () => {
    /** Starts a write whose body ends only on `resume`; gives its file once a piece is written there. */
    async function stalledWrite(
      content: DiskContent,
    ): Promise<{ written: Promise<unknown>; file: string; resume(): void }> {
      let resume = (): void => undefined;
      const stalled = new Promise<void>((resolve) => (resume = resolve));
      async function* body(): AsyncIterable<Uint8Array> {
        // One whole piece (blob-content.ts writes 256 KiB at once), then nothing more: the file's
        // last write is the one before the stall.
        yield Buffer.alloc(256 * 1024, 1);
        await stalled;
      }
      const written = content.write(body());
      written.catch(() => undefined);
      for (let tries = 0; contentFiles(location).length === 0; tries++) {
        assert.ok(tries < 1_000, 'the write creates its file');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const [name] = contentFiles(location);
      const file = path.join(location, 'blobs', name!.slice(0, 2), name!);
      // Its first piece is written (the size shows it) before the file is made to look abandoned.
      for (let tries = 0; statSync(file).size === 0; tries++) {
        assert.ok(tries < 1_000, 'the first piece is written');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
      utimesSync(file, twoHoursAgo, twoHoursAgo);
      return { written, file, resume };
    }

    test('fails its write when the sweep removed the file meanwhile', async () => {
      const content = await DiskContent.open(location);
      const { written, resume } = await stalledWrite(content);
      const swept = await content.sweep(Date.now() - contentGraceMs, 10_000);
      assert.equal(swept.length, 1, 'the sweep takes the stalled file for abandoned');
      await content.remove(swept);
      resume();
      await assert.rejects(written, /swept/);
      assert.deepEqual(contentFiles(location), []);
    });

    test('leaves a file the sweep will not take for a grace once its write resolves', async () => {
      const content = await DiskContent.open(location);
      const { written, file, resume } = await stalledWrite(content);
      resume();
      await written;
      assert.deepEqual(await content.sweep(Date.now() - contentGraceMs, 10_000), []);
      assert.equal(statSync(file).size, 256 * 1024);
    });
  });

  test('a content write whose source fails leaves no file', async () => {
    await withStore(location, async (blobs) => {
      const before = contentFiles(location);
      async function* failing(): AsyncIterable<Uint8Array> {
        yield Buffer.alloc(300 * 1024, 1);
        throw new Error('gone');
      }
      await assert.rejects(blobs.writeContent(failing()), /gone/);
      assert.deepEqual(contentFiles(location), before);
    });
  });

  test('the sweep reclaims what a crash leaves: uncommitted content, temporary and unknown files', async () => {
    const kept = await withStore(location, async (blobs) => {
      await blobs.createContainer(account, container('c'));
      const record = await putText(blobs, 'kept', 'committed');
      await write(blobs, 'written, never committed');
      await blobs.writeContent(chunksOf(Buffer.alloc(100 * 1024, 7), 16 * 1024));
      return record;
    });
    // Small content is written with the record naming it (ContentRef.unwritten): what none named is no row.
    assert.equal(inlineIds(location).length, 1, 'the small content committed is a row, the other none');
    const stray = ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210.tmp'];
    writeFileSync(path.join(location, 'blobs', '01', stray[0]!), 'unknown to the database');
    writeFileSync(path.join(location, 'blobs', 'fe', stray[1]!), 'a write cut short');
    writeFileSync(path.join(location, 'blobs', '00', 'notes.txt'), 'not content');
    assert.equal(contentFiles(location).length, 1 + 3);
    await withStore(location, async (blobs) => {
      await reclaimAll(under(blobs));
      assert.deepEqual(contentFiles(location), ['notes.txt']);
      const { committed } = await blobs.getBlocks(account, key('c', 'kept'));
      assert.deepEqual(
        inlineIds(location),
        committed.map((each) => each.content.id),
      );
      assert.equal(await readAll(blobs, account, kept), 'committed');
    });
  });

  test('after a restart, content dereferenced before it is still reclaimed; the rest is kept', async () => {
    const [old, current] = await withStore(location, async (blobs) => {
      await blobs.createContainer(account, container('c'));
      await putText(blobs, 'b', 'first');
      const { committed } = await blobs.getBlocks(account, key('c', 'b'));
      return [committed[0]!.content, await putText(blobs, 'b', 'second')] as const;
    });
    await withStore(location, async (blobs) => {
      await reclaimAll(under(blobs));
      assert.equal(await blobs.contentExists(old), false);
      assert.equal(await readAll(blobs, account, current), 'second');
    });
  });

  test('small content is a row, no file: read whole and in ranges, shared by a snapshot, after a reopen', async () => {
    const text = 'x'.repeat(64 * 1024 - 5) + 'small';
    const record = await withStore(location, async (blobs) => {
      await blobs.createContainer(account, container('c'));
      const put = await putText(blobs, 'b', text);
      await blobs.snapshotBlob(account, { ...put, snapshot: 'snap', etag: '"s"' }, put.etag);
      return put;
    });
    assert.deepEqual(contentFiles(location), [], 'no file for content of 64 KiB or less');
    assert.equal(inlineIds(location).length, 1, 'one row, named by the blob and its snapshot');
    await withStore(location, async (blobs) => {
      assert.equal(await readAll(blobs, account, record), text);
      assert.equal(await readAll(blobs, account, record, text.length - 7, text.length - 2), 'xxsma');
      assert.equal(await readAll(blobs, account, { ...record, snapshot: 'snap', etag: '"s"' }, 65_531), 'small');
      await blobs.deleteBlob(account, key('c', 'b'), { base: true, snapshots: false }, undefined);
      await reclaimAll(under(blobs));
      assert.equal(inlineIds(location).length, 1, 'the snapshot still names it');
      await blobs.deleteBlob(
        account,
        { ...key('c', 'b'), snapshot: 'snap' },
        { base: true, snapshots: false },
        undefined,
      );
      await reclaimAll(under(blobs));
      assert.deepEqual(inlineIds(location), [], 'reclaimed once nothing names it');
    });
  });

  test('content that grows past 64 KiB on the way is a file, with every byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 64 * 1024 + 1 }, (_, i) => i % 251));
    await withStore(location, async (blobs) => {
      const ref = await blobs.writeContent(chunksOf(bytes, 1000));
      assert.equal(ref.sizeBytes, bytes.length);
      assert.deepEqual(contentFiles(location), [ref.id]);
      assert.deepEqual(inlineIds(location), []);
      const file = path.join(location, 'blobs', ref.id.slice(0, 2), ref.id);
      assert.ok(readFileSync(file).equals(bytes));
    });
  });

  test('a database made before content rows existed opens, reads its files and takes rows', async () => {
    const big = 'b'.repeat(100 * 1024);
    const old = await withStore(location, async (blobs) => {
      await blobs.createContainer(account, container('c'));
      return putText(blobs, 'old', big);
    });
    const db = new Database(path.join(location, 'cerulean.sqlite'));
    db.exec('DROP TABLE blob_inline');
    db.close();
    await withStore(location, async (blobs) => {
      assert.equal(await readAll(blobs, account, old), big);
      const record = await putText(blobs, 'new', 'small');
      assert.equal(await readAll(blobs, account, record), 'small');
    });
    assert.equal(inlineIds(location).length, 1);
  });

  test('a blob of 50,000 blocks: one commit, ranged reads find their first block by the end-byte index', async () => {
    await withStore(location, async (blobs) => {
      await blobs.createContainer(account, container('c'));
      const pieces = await Promise.all(['0123456789', 'abcdefghij'].map((text) => write(blobs, text)));
      const blocks = Array.from({ length: 50_000 }, (_, i) => ({ blockId: `b${i}`, content: pieces[i % 2]! }));
      const record = blob('c', 'many', 500_000);
      assert.equal(await blobs.putBlob(account, record, { kind: 'replace', blocks }, null), 'ok');
      assert.equal(await readAll(blobs, account, record, 250_005, 250_025), '56789abcdefghij01234');
      assert.equal(await readAll(blobs, account, record, 499_998), 'ij');
      assert.equal((await blobs.getBlocks(account, key('c', 'many'))).committed.length, 50_000);
    });
    const db = new Database(path.join(location, 'cerulean.sqlite'), { readonly: true });
    try {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${blobReaderSql.firstBlock}`).all(1, 0) as { detail: string }[];
      assert.match(plan.map((row) => row.detail).join('\n'), /USING (COVERING )?INDEX blob_blocks_by_end/);
    } finally {
      db.close();
    }
  });
});

test('blob stores of one database share content and readers: one reads what another wrote while it reclaims', async () => {
  for (const location of [undefined, mkdtempSync(path.join(os.tmpdir(), 'cerulean-blob-two-'))]) {
    const tables = await SqliteStore.open({ location });
    const [first, second] = [
      await tables.openBlobStore({ contentGraceMs }),
      await tables.openBlobStore({ contentGraceMs }),
    ];
    try {
      await first.createContainer(account, container('c'));
      const blocks = [
        { blockId: '', content: await write(first, 'one,') },
        { blockId: '', content: await write(first, 'two') },
      ];
      const record = blob('c', 'b', 7);
      await first.putBlob(account, record, { kind: 'replace', blocks }, null);
      const chunks = await second.readContent(account, key('c', 'b'), record.etag, 0, Infinity);
      const reader = (chunks as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      const head = await reader.next();
      await first.deleteBlob(account, key('c', 'b'), { base: true, snapshots: true }, undefined);
      await reclaimAll(under(first));
      const rest = await reader.next();
      assert.equal(`${head.value}${rest.value}`, 'one,two', location === undefined ? 'in memory' : 'on disk');
    } finally {
      first.close();
      second.close();
      await tables.close();
      if (location !== undefined) rmSync(location, { recursive: true, force: true });
    }
  }
});
