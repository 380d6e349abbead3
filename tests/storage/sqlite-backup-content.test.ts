// The blob content of a data-directory backup (src/storage/sqlite/backup.ts, backup-content.ts)
// against the reclaim of a live store, between the snapshot and the copy of the files it names:
// within the grace nothing the snapshot names can go; past it (a backup slower than the grace) the
// backup sees the file gone, finds no row naming it any more and takes a new snapshot; a file gone
// while a row names it is damage, and the backup says so. Real SQLite, real files, the store's own
// reclaimContent (the CLI test tests/cli/blob-data-backup.test.ts runs the commands against a server).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { BlobRecord } from '../../src/storage/blob-store.js';
import { backupSqlite, restoreSqlite } from '../../src/storage/sqlite/backup.js';
import { contentFilePath } from '../../src/storage/sqlite/blob/content.js';
import type { SqliteBlobStore } from '../../src/storage/sqlite/blob/store.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { blob, chunksOf, container, readAll } from './blob-conformance/support.js';

const account = 'devstoreaccount1';
const contentGraceMs = 60_000;
/** More than 64 KiB: a file, not an inline row. */
const sizeBytes = 100 * 1024;

describe('SQLite data-directory backup of blob content against reclaim', () => {
  let dir: string;
  let tables: SqliteStore;
  let blobs: SqliteBlobStore;
  let doomed: { record: BlobRecord; contentId: string };
  let kept: { record: BlobRecord; contentId: string };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'cerulean-backup-content-'));
    tables = await SqliteStore.open({ location: path.join(dir, 'data') });
    blobs = await tables.openBlobStore({ contentGraceMs });
    await blobs.createContainer(account, container('c'));
    doomed = await putFileBlob(blobs, 'doomed');
    kept = await putFileBlob(blobs, 'kept');
  });
  afterEach(async () => {
    blobs.close();
    await tables.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Deletes `doomed` and runs reclaim passes at `nowMs` (each), as the server's periodic pass does. */
  async function deleteAndReclaim(times: readonly number[]): Promise<void> {
    const key = { container: 'c', name: 'doomed', snapshot: '' };
    assert.equal(await blobs.deleteBlob(account, key, { base: true, snapshots: true }, undefined), 'ok');
    for (const nowMs of times) while ((await blobs.reclaimContent(nowMs, 0, 1000)) > 0);
  }

  /**
   * Backs up with `duringFirst` run between the first snapshot and its copy (with the time the
   * backup started); the attempts it made (snapshots) and what it holds.
   */
  async function backUpAround(duringFirst: (startMs: number) => Promise<void>) {
    const startMs = Date.now();
    const attempts: number[] = [];
    const file = path.join(dir, 'backup.sqlite');
    const summary = await backupSqlite(path.join(dir, 'data'), file, {
      afterSnapshot: async (attempt) => {
        attempts.push(attempt);
        if (attempt === 1) await duringFirst(startMs);
      },
    });
    return { file, attempts, content: summary.content };
  }

  test('within the grace after the snapshot, reclaim leaves every file it names: one snapshot suffices', async () => {
    const { file, attempts, content } = await backUpAround((startMs) =>
      deleteAndReclaim([startMs, startMs + contentGraceMs - 1, startMs + contentGraceMs - 1]),
    );
    assert.deepEqual(attempts, [1]);
    assert.deepEqual(content, { files: 2, bytes: 2 * sizeBytes });
    await assertRestored(file, ['doomed', 'kept']);
  });

  test('a file the snapshot names, reclaimed before it was copied: a new snapshot without it', async () => {
    const { file, attempts, content } = await backUpAround(async (startMs) => {
      // Each step waits a grace after the one before: the list dies, then its content goes.
      await deleteAndReclaim([1, 2, 3, 4].map((step) => startMs + step * (contentGraceMs + 1)));
      assert.equal(existsSync(contentFilePath(path.join(dir, 'data'), doomed.contentId)), false, 'reclaimed');
    });
    assert.deepEqual(attempts, [1, 2]);
    assert.deepEqual(content, { files: 1, bytes: sizeBytes });
    await assertRestored(file, ['kept']);
  });

  test('a file missing while a row still names it: the backup fails, the directory is damaged', async () => {
    const file = path.join(dir, 'backup.sqlite');
    const backup = backupSqlite(path.join(dir, 'data'), file, {
      afterSnapshot: async () => rmSync(contentFilePath(path.join(dir, 'data'), kept.contentId)),
    });
    await assert.rejects(backup, /the data directory is damaged: blob content [0-9a-f]{32} is named .* missing/);
    assert.equal(existsSync(file), false);
    assert.equal(existsSync(`${file}.partial`), false);
  });

  test('a 256 MiB blob is backed up and restored in bounded memory, byte-exact', async () => {
    const mebibyte = 1024 * 1024;
    const chunk = Buffer.alloc(mebibyte, 'big ');
    const chunks = async function* () {
      for (let i = 0; i < 256; i++) yield chunk;
    };
    const ref = await blobs.writeContent(chunks());
    const record = blob('c', 'big', ref.sizeBytes);
    const change = { kind: 'replace', blocks: [{ blockId: '', content: ref }] } as const;
    assert.equal(await blobs.putBlob(account, record, change, undefined), 'ok');
    const peakBeforeBytes = process.resourceUsage().maxRSS * 1024;
    const file = path.join(dir, 'backup.sqlite');
    await backupSqlite(path.join(dir, 'data'), file);
    const location = path.join(dir, 'restored');
    restoreSqlite(file, location);
    // The peak resident memory of the process, which holds SQLite's caches as well as the heap: a
    // copy that held the blob whole would add its 256 MiB.
    const growthBytes = process.resourceUsage().maxRSS * 1024 - peakBeforeBytes;
    assert.ok(growthBytes < 96 * mebibyte, `the peak resident memory grew by ${growthBytes} bytes`);
    const restored = createHash('sha256');
    for await (const piece of createReadStream(contentFilePath(location, ref.id))) restored.update(piece as Buffer);
    const expected = createHash('sha256');
    for await (const piece of chunks()) expected.update(piece);
    assert.equal(restored.digest('hex'), expected.digest('hex'));
  });

  /** Restores `file` into a new directory and reads the blobs there: exactly `names`, each whole. */
  async function assertRestored(file: string, names: readonly string[]): Promise<void> {
    const location = path.join(dir, 'restored');
    restoreSqlite(file, location);
    const restored = await SqliteStore.open({ location });
    const store = await restored.openBlobStore({ contentGraceMs });
    try {
      const options = { prefix: '', limit: 10, snapshots: false, uncommitted: false };
      const listed = await store.listBlobs(account, 'c', options);
      assert.deepEqual(
        listed.map((each) => (each.kind === 'blob' ? each.record.name : each.name)),
        names,
      );
      for (const name of names) {
        const record = name === 'kept' ? kept.record : doomed.record;
        assert.equal(await readAll(store, account, record), contentOf(name).toString());
      }
    } finally {
      store.close();
      await restored.close();
    }
  }
});

function contentOf(name: string): Buffer {
  return Buffer.alloc(sizeBytes, name);
}

async function putFileBlob(store: SqliteBlobStore, name: string) {
  const ref = await store.writeContent(chunksOf(contentOf(name), 8192));
  const record = blob('c', name, sizeBytes);
  const outcome = await store.putBlob(
    account,
    record,
    { kind: 'replace', blocks: [{ blockId: '', content: ref }] },
    undefined,
  );
  assert.equal(outcome, 'ok');
  return { record, contentId: ref.id };
}
