// Blob durability under kill -9 on SQLite on disk: a child process (tests/helpers/blob-load.ts)
// writes content and commits blobs from several loops at once and is killed with SIGKILL mid-load.
// The store opened again has every acknowledged blob complete and readable (or the one commit of
// its name that was in flight, complete too), no blob the child never intended, and once the grace
// has passed, reclaimContent leaves exactly the content files some row references.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { BlobStore } from '../../src/storage/blob-store.js';
import { contentGraceMsDefault } from '../../src/storage/sqlite/blob/store.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

const childScript = path.join(import.meta.dirname, '..', 'helpers', 'blob-load.js');
/** Acknowledged commits before the kill: enough that writes of content and rows are in flight. */
const commitsBeforeKill = 60;
const account = 'acct';
const container = 'load';

interface Version {
  readonly etag: string;
  readonly sha256: string;
  readonly sizeBytes: number;
}

/** Per blob name: the last acknowledged version, and the version in flight after it, if any. */
interface Logged {
  readonly acked: Map<string, Version>;
  readonly inFlight: Map<string, Version>;
}

async function loadThenKill(location: string): Promise<Logged> {
  const child = spawn(process.execPath, [childScript, location], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  const logged: Logged = { acked: new Map(), inFlight: new Map() };
  let acks = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    const [what, name, etag, sha256, size] = line.split(' ');
    if (what !== 'intent' && what !== 'ack') continue;
    const version = { etag: etag!, sha256: sha256!, sizeBytes: Number(size) };
    if (what === 'intent') logged.inFlight.set(name!, version);
    else {
      logged.inFlight.delete(name!);
      logged.acked.set(name!, version);
      if (++acks === commitsBeforeKill) child.kill('SIGKILL');
    }
  }
  assert.equal(await exited, 'SIGKILL', 'the child ran until it was killed');
  return logged;
}

async function sha256Of(store: BlobStore, name: string, etag: string): Promise<string> {
  const chunks = await store.readContent(account, { container, name, snapshot: '' }, etag, 0, Infinity);
  assert.notEqual(chunks, 'changed');
  const hash = createHash('sha256');
  for await (const chunk of chunks as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** Every blob present is a version the child logged, complete; every acknowledged name is present. */
async function checkBlobs(store: BlobStore, logged: Logged): Promise<void> {
  const options = { prefix: '', limit: 10_000, snapshots: true, uncommitted: false };
  const listed = await store.listBlobs(account, container, options);
  const present = new Map(listed.map((each) => [each.kind === 'blob' ? each.record.name : each.name, each]));
  for (const name of logged.acked.keys()) assert.ok(present.has(name), `acknowledged blob ${name} lost`);
  for (const each of listed) {
    assert.equal(each.kind, 'blob');
    if (each.kind !== 'blob') continue;
    const { name, etag, sizeBytes } = each.record;
    const version = [logged.acked.get(name), logged.inFlight.get(name)].find((v) => v?.etag === etag);
    assert.ok(version !== undefined, `${name} is at ${etag}, neither its acknowledged nor its in-flight version`);
    assert.equal(sizeBytes, version.sizeBytes);
    assert.equal(await sha256Of(store, name, etag), version.sha256, `${name} at ${etag} reads back whole`);
  }
}

/** Content on disk, files and inline rows, that no block row, committed or staged, names. */
function unreferencedFiles(location: string): string[] {
  const root = path.join(location, 'blobs');
  const files = readdirSync(root).flatMap((slice) => readdirSync(path.join(root, slice)));
  const db = new Database(path.join(location, 'cerulean.sqlite'), { readonly: true });
  try {
    files.push(...(db.prepare('SELECT content_id FROM blob_inline').pluck().all() as string[]));
    const named = new Set(
      db.prepare('SELECT content_id FROM blob_blocks UNION SELECT content_id FROM blob_staged').pluck().all(),
    );
    return files.filter((file) => !named.has(file));
  } finally {
    db.close();
  }
}

test('SQLite blobs after kill -9: every acknowledged blob whole, nothing half-visible, orphans reclaimed', async () => {
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-blob-crash-'));
  try {
    const logged = await loadThenKill(location);
    const tables = await SqliteStore.open({ location });
    const blobs = await tables.openBlobStore();
    try {
      await checkBlobs(blobs, logged);
      assert.ok(unreferencedFiles(location).length > 0, 'the load left content no row names');
      // Past the grace, a few times over (a dead list first, then its content).
      for (let step = 1; step <= 4; step++) {
        const nowMs = Date.now() + step * (contentGraceMsDefault + 1000);
        while ((await blobs.reclaimContent(nowMs, 0, 1000)) > 0);
      }
      assert.deepEqual(unreferencedFiles(location), [], 'every file no row names is reclaimed');
      await checkBlobs(blobs, logged);
    } finally {
      blobs.close();
      await tables.close();
    }
  } finally {
    rmSync(location, { recursive: true, force: true });
  }
});
