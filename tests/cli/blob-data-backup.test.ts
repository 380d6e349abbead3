// `cerulean backup FILE --location DIR` of a running server's data directory with blobs, and
// `cerulean restore` of it into a new directory: the content of every blob (inline rows and the
// files of more than 64 KiB beside the database) comes back byte-exact, with its properties, and a
// reclaim pass over the restored directory finds no content missing and none left over.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ContainerClient } from '@azure/storage-blob';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { describeRun, runCli } from '../helpers/cli.js';
import { makeTempDir, removeDir } from '../helpers/server.js';
import { patternBytes, startCeruleanBlob, type BlobTestEndpoint } from './blob-endpoints.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const containerName = 'data';

describe('cerulean backup / restore --location of a data directory with blobs', () => {
  let dir: string;
  let origin: BlobTestEndpoint;

  before(async () => {
    dir = makeTempDir('cerulean-blob-data-backup-');
    origin = await startCeruleanBlob({ location: join(dir, 'data') });
  });
  after(async () => {
    await origin?.stop();
    if (dir) removeDir(dir);
  });

  test('a backup taken while uploads go on restores every blob byte-exact, and a reclaim pass keeps them', async () => {
    const container = origin.service.getContainerClient(containerName);
    await container.create({ metadata: { purpose: 'backup' } });
    await seedBlobs(container);
    const churn = new Churn(container);
    const running = churn.run();
    let expected: Map<string, BlobState>;
    let liveBefore: number;
    const file = join(dir, 'nightly.sqlite');
    try {
      while (churn.liveAcked < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      expected = await describeBlobs(container, (name) => !name.startsWith('live-') && name !== 'churn');
      liveBefore = churn.liveAcked;
      const backup = await runCli(['backup', file, '--location', join(dir, 'data')]);
      assert.equal(backup.code, 0, describeRun(backup));
      assert.match(
        backup.stderr,
        /bytes written to .*nightly\.sqlite \(with [1-9]\d* blob content files, [\d,]+ bytes/,
      );
    } finally {
      churn.stop = true;
      await running;
    }
    await origin.stop();

    await assertRefused(file, dir);

    const restoredDir = join(dir, 'restored');
    const restore = await runCli(['restore', file, '--location', restoredDir]);
    assert.equal(restore.code, 0, describeRun(restore));
    assert.match(
      restore.stderr,
      /restore: \d+ tables \(\d+ entities\), \d+ queues \(\d+ messages\), \d+ containers \(\d+ blobs\) restored into .*restored \(with \d+ blob content files, [\d,]+ bytes\)\n$/,
    );
    const again = await runCli(['restore', file, '--location', restoredDir]);
    assert.equal(again.code, 1, describeRun(again));
    assert.match(again.stderr, /is not empty; restore only into an empty or new directory/);

    const filesBefore = contentFiles(restoredDir);
    await reclaimEverything(restoredDir);
    assert.deepEqual(contentFiles(restoredDir), filesBefore, 'the reclaim pass removed no restored content file');

    const restored = await startCeruleanBlob({ location: restoredDir });
    try {
      const copy = restored.service.getContainerClient(containerName);
      const after = await describeBlobs(copy, () => true);
      for (const [name, state] of expected) assert.deepEqual(after.get(name), state, `${name} restored as it was`);
      await churn.check(after, liveBefore);
      // The staged block came back too: committing it now gives its bytes.
      await copy.getBlockBlobClient('pending').commitBlockList([blockId(0)]);
      const pending = await copy.getBlobClient('pending').downloadToBuffer();
      assert.equal(sha256(pending), sha256(patternBytes(300 * KiB, 'pending')));
    } finally {
      await restored.stop();
    }
  });
});

/** Damaged copies of backup `file` are refused, and leave no database in the directory given. */
async function assertRefused(file: string, dir: string): Promise<void> {
  const damaged = join(dir, 'damaged.sqlite');
  copyFileSync(file, damaged);
  flipOneByte(damaged);
  const refused = await runCli(['restore', damaged, '--location', join(dir, 'from-damaged')]);
  assert.equal(refused.code, 1, describeRun(refused));
  assert.match(
    refused.stderr,
    /damaged\.sqlite is damaged: blob content [0-9a-f]{32} differs from its size or SHA-256/,
  );
  assert.ok(!existsSync(join(dir, 'from-damaged', 'cerulean.sqlite')), 'no database put in place');

  // A backup as made before backups held blob content: the snapshot alone.
  const older = join(dir, 'older.sqlite');
  copyFileSync(file, older);
  withDatabase(older, (db) => db.exec('DROP TABLE cerulean_backup_chunks; DROP TABLE cerulean_backup_files'));
  const lossy = await runCli(['restore', older, '--location', join(dir, 'from-older')]);
  assert.equal(lossy.code, 1, describeRun(lossy));
  assert.match(
    lossy.stderr,
    /older\.sqlite does not hold \d+ pieces of blob content its blobs need .*: restore refused/,
  );
  assert.ok(!existsSync(join(dir, 'from-older', 'cerulean.sqlite')), 'no database put in place');
}

/**
 * Blobs of every kind and size: empty, 4 KiB (inline), 1 MiB and a few MiB from blocks (files), an
 * append blob of file and inline blocks, a snapshot of a blob since rewritten, a copy sharing its
 * source's content, and a block staged but not committed.
 */
async function seedBlobs(container: ContainerClient): Promise<void> {
  await container.getBlockBlobClient('empty').upload('', 0);
  const small = patternBytes(4 * KiB, 'small');
  await container.getBlockBlobClient('small').upload(small, small.length, { metadata: { kind: 'small' } });
  const one = patternBytes(MiB, 'one');
  await container.getBlockBlobClient('one').upload(one, one.length, {
    blobHTTPHeaders: { blobContentType: 'application/x-test', blobCacheControl: 'no-cache' },
  });
  const blocks = container.getBlockBlobClient('blocks');
  const sizes = [2 * MiB, MiB + 7, 40 * KiB];
  for (const [i, size] of sizes.entries()) await blocks.stageBlock(blockId(i), patternBytes(size, `b${i}`), size);
  await blocks.commitBlockList(
    sizes.map((_, i) => blockId(i)),
    { metadata: { version: 'first' } },
  );
  await blocks.createSnapshot();
  const rewrite = patternBytes(3 * MiB + 1, 'rewrite');
  await blocks.stageBlock(blockId(9), rewrite, rewrite.length);
  await blocks.commitBlockList([blockId(2), blockId(9)], { metadata: { version: 'second' } });
  const log = container.getAppendBlobClient('log');
  await log.create({ blobHTTPHeaders: { blobContentType: 'text/plain' } });
  for (const [i, size] of [100 * KiB, 3 * KiB, 200 * KiB].entries())
    await log.appendBlock(patternBytes(size, `append${i}`), size);
  const poller = await container.getBlobClient('one-copy').beginCopyFromURL(container.getBlobClient('one').url);
  await poller.pollUntilDone();
  const pending = patternBytes(300 * KiB, 'pending');
  await container.getBlockBlobClient('pending').stageBlock(blockId(0), pending, pending.length);
}

/** Uploads new blobs of 100 KiB (files) and rewrites one blob, until told to stop. */
class Churn {
  stop = false;
  liveAcked = 0;
  churnAcked = -1;

  constructor(private readonly container: ContainerClient) {}

  async run(): Promise<void> {
    for (let i = 0; !this.stop; i++) {
      const live = patternBytes(100 * KiB, `live-${i}`);
      await this.container.getBlockBlobClient(`live-${i}`).upload(live, live.length);
      this.liveAcked = i + 1;
      const churn = patternBytes(80 * KiB + i, `churn-${i}`);
      await this.container.getBlockBlobClient('churn').upload(churn, churn.length, { metadata: { i: String(i) } });
      this.churnAcked = i;
    }
  }

  /** Every upload acknowledged before the backup is there; every blob there is some whole version. */
  async check(restored: Map<string, BlobState>, liveBefore: number): Promise<void> {
    for (let i = 0; i < liveBefore; i++) assert.ok(restored.has(`live-${i}`), `live-${i} was acknowledged before`);
    for (const [name, state] of restored) {
      if (name.startsWith('live-'))
        assert.equal(state.sha256, sha256(patternBytes(100 * KiB, name)), `${name} is whole`);
    }
    const churn = restored.get('churn');
    assert.ok(churn !== undefined);
    const i = Number(churn.metadata['i']);
    assert.ok(i >= 0 && i <= this.churnAcked + 1, `churn version ${i}`);
    assert.equal(churn.sha256, sha256(patternBytes(80 * KiB + i, `churn-${i}`)), 'churn is one whole version');
  }
}

interface BlobState {
  readonly type: string | undefined;
  readonly size: number | undefined;
  readonly sha256: string;
  readonly contentType: string | undefined;
  readonly cacheControl: string | undefined;
  readonly etag: string | undefined;
  readonly lastModified: string | undefined;
  readonly metadata: Record<string, string>;
}

/** Each blob and snapshot (`name@snapshot`) `include` picks: its content's hash and its properties. */
async function describeBlobs(container: ContainerClient, include: (name: string) => boolean) {
  const states = new Map<string, BlobState>();
  for await (const item of container.listBlobsFlat({ includeSnapshots: true, includeMetadata: true })) {
    if (!include(item.name)) continue;
    const client = container.getBlobClient(item.name).withSnapshot(item.snapshot ?? '');
    const content = await client.downloadToBuffer();
    const p = await client.getProperties();
    states.set(item.snapshot ? `${item.name}@${item.snapshot}` : item.name, {
      type: p.blobType,
      size: p.contentLength,
      sha256: sha256(content),
      contentType: p.contentType,
      cacheControl: p.cacheControl,
      etag: p.etag,
      lastModified: p.lastModified?.toISOString(),
      metadata: p.metadata ?? {},
    });
  }
  return states;
}

/**
 * Runs the blob store's reclaim over the restored directory (in this process, on its SQLite
 * database and files, as the server's periodic pass does), at times past every grace, so that the
 * sweep looks at every file: a restored file no row names, or a row naming no file, would show.
 */
async function reclaimEverything(location: string): Promise<void> {
  const tables = await SqliteStore.open({ location });
  const blobs = await tables.openBlobStore({ contentGraceMs: 1000 });
  try {
    const startMs = Date.now();
    for (let step = 1; step <= 4; step++) {
      const nowMs = startMs + step * 10_000;
      // stagedBeforeMs 0: staged blocks are a week from being dropped.
      while ((await blobs.reclaimContent(nowMs, 0, 1000)) > 0);
    }
  } finally {
    blobs.close();
    await tables.close();
  }
}

function contentFiles(location: string): string[] {
  const root = join(location, 'blobs');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .flatMap((slice) => readdirSync(join(root, slice)))
    .sort();
}

/** Damages one byte of the backup's copy of one content file, through SQLite (the file stays a sound database). */
function flipOneByte(file: string): void {
  withDatabase(file, (db) => {
    const row = db.prepare('SELECT rowid, bytes FROM cerulean_backup_chunks LIMIT 1').get() as
      { rowid: number; bytes: Buffer } | undefined;
    assert.ok(row !== undefined, 'the backup holds content files');
    row.bytes[0] = row.bytes[0]! ^ 0xff;
    db.prepare('UPDATE cerulean_backup_chunks SET bytes = ? WHERE rowid = ?').run(row.bytes, row.rowid);
  });
}

function withDatabase(file: string, use: (db: Database.Database) => void): void {
  const db = new Database(file);
  try {
    use(db);
  } finally {
    db.close();
  }
}

function blockId(i: number): string {
  return Buffer.from(`block-${String(i).padStart(4, '0')}`).toString('base64');
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
