// A full disk, on a real small file system (a tmpfs mounted for the test; root only): writes of every
// service answer 503 ServerBusy with one log line each (never a 500 with a stack trace), a Delete
// Blob answers 202 or that 503, never a 500, and once blobs are deleted their space comes back within
// a short --blob-reclaim-grace. On PostgreSQL, a database in a tablespace on a small tmpfs: its
// disk-full SQLSTATE (53100) is the same 503.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import type { QueueClient } from '@azure/storage-queue';
import type { TableClient } from '@azure/data-tables';
import { queueServiceClient, uniqueQueueName } from '../../helpers/queue.js';
import { onDatabase, postgresUnavailable, testDatabaseUrl } from '../../helpers/postgres.js';
import { freshTable } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const diskBytes = 32 * 1024 * 1024;
const blobBytes = 1024 * 1024;
const graceSeconds = 1;

/** Mounts a tmpfs of `bytes` on a new folder; undefined (with the reason) where that cannot be done. */
function mountSmallDisk(bytes: number): { dir: string } | { reason: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cerulean-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: String((error as { stderr?: unknown }).stderr ?? error).trim() };
  }
}

/** Unmounts and removes a folder mountSmallDisk made. */
function unmount(dir: string): void {
  execFileSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
}

function freeBytes(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/** Writes zeros into `path`, `bytes` of them or until the file system refuses (ENOSPC). */
function fill(path: string, bytes = Infinity): void {
  const fd = openSync(path, 'w');
  try {
    for (let written = 0, piece = 64 * 1024; written < bytes;) {
      try {
        written += writeSync(fd, Buffer.alloc(Math.min(piece, bytes - written)));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        if (piece === 1) return;
        piece = 1; // the last bytes, one at a time, until none fits
      }
    }
  } finally {
    closeSync(fd);
  }
}

function putBlob(server: RunningServer, container: string, name: string) {
  return blobSend(server, {
    method: 'PUT',
    target: `${container}/${name}`,
    headers: { 'x-ms-blob-type': 'BlockBlob' },
    body: Buffer.alloc(blobBytes, 7),
  });
}

async function waitFor(what: string, condition: () => boolean, limitMs = 60_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > until) assert.fail(`${what}: not within ${limitMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const mounted = mountSmallDisk(diskBytes);
if ('reason' in mounted) {
  const message = `disk-full tests SKIPPED: cannot mount a small tmpfs (${mounted.reason}); run them as root`;
  if (process.env['CI']) throw new Error(`CI is set but ${message}`);
  process.stderr.write(`\n*** ${message} ***\n\n`);
}

describe('a full disk', { skip: 'reason' in mounted }, () => {
  const dir = 'dir' in mounted ? mounted.dir : '';
  // The space that comes back later, and what fills the last bytes.
  const ballast = join(dir, 'ballast');
  const filler = join(dir, 'filler');
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      location: join(dir, 'data'),
      args: ['--blob-reclaim-grace', String(graceSeconds)],
    });
  });
  after(async () => {
    await server?.stop();
    unmount(dir);
  });

  test('writes answer 503 ServerBusy with one log line; deletes free the space within the grace', async (t) => {
    const freeAtStart = freeBytes(dir);
    fill(ballast, freeAtStart - 10 * blobBytes);
    const table = await freshTable(server);
    const queue = queueServiceClient(server).getQueueClient(uniqueQueueName());
    await queue.create();
    const { container, stored } = await fillWithBlobs(server);
    assert.ok(stored.length >= 4, `${stored.length} blobs fit`);
    fill(filler);

    await tableAndQueueRefused(table, queue);
    const blob = await putBlob(server, container, 'one-more');
    assert.equal(blob.status, 503, blob.text);

    // On the full disk a delete succeeds where the engine can record it, or is refused the same way.
    const first = await blobSend(server, { method: 'DELETE', target: `${container}/${stored[0]}` });
    assert.ok([202, 503].includes(first.status), `${first.status} ${first.text}`);
    if (first.status === 202) stored.shift();
    t.diagnostic(`Delete Blob on the full disk: ${first.status}; ${stored.length} blobs stored`);

    rmSync(ballast);
    const freeBeforeDeletes = freeBytes(dir);
    for (const name of stored) {
      const response = await blobSend(server, { method: 'DELETE', target: `${container}/${name}` });
      assert.equal(response.status, 202, response.text);
    }
    await waitFor('the deleted blobs freed their space', () => freeBytes(dir) > freeBeforeDeletes + 3 * blobBytes);
    assert.equal((await putBlob(server, container, 'after')).status, 201);

    logSaysDiskFull(server);
  });
});

/** Blobs of blobBytes into a new container until one is refused: it must be 503 ServerBusy. How many fit. */
async function fillWithBlobs(server: RunningServer): Promise<{ container: string; stored: string[] }> {
  const container = uniqueContainerName();
  assert.equal((await blobSend(server, { method: 'PUT', target: `${container}?restype=container` })).status, 201);
  const stored: string[] = [];
  for (let i = 0; ; i++) {
    const response = await putBlob(server, container, `b${i}`);
    if (response.status !== 201) {
      assert.equal(response.status, 503, response.text);
      assert.equal(response.headers['x-ms-error-code'], 'ServerBusy');
      return { container, stored };
    }
    stored.push(`b${i}`);
  }
}

/** Inserting entities and sending messages of 32 KiB each is refused with 503 ServerBusy before long. */
async function tableAndQueueRefused(table: TableClient, queue: QueueClient): Promise<void> {
  const refused = (error: unknown) => {
    const { statusCode, response } = error as { statusCode?: number; response?: { headers: Headers } };
    assert.equal(statusCode, 503, String(error));
    assert.equal(response?.headers.get('x-ms-error-code'), 'ServerBusy');
    return true;
  };
  const bigText = 'x'.repeat(32 * 1024);
  await assert.rejects(async () => {
    for (let i = 0; i < 64; i++) await table.createEntity({ partitionKey: 'p', rowKey: `r${i}`, text: bigText });
  }, refused);
  await assert.rejects(async () => {
    for (let i = 0; i < 64; i++) await queue.sendMessage(bigText);
  }, refused);
}

/** Each refusal is one warn line that says the disk is full; no stack trace, no 500. */
function logSaysDiskFull(server: RunningServer): void {
  const { stderr } = server.output();
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace in the log');
  assert.doesNotMatch(stderr, / 500 /, 'no 500 in the log');
  const busyLines = stderr.split('\n').filter((line) => line.includes('503 ServerBusy answering'));
  assert.ok(busyLines.length >= 3, stderr);
  for (const line of busyLines) assert.match(line, /disk full: |No space left on device/, line);
}

describe('a full disk under PostgreSQL', { skip: 'reason' in mounted || postgresUnavailable() }, () => {
  const tablespace = `cerulean_full_${process.pid}`;
  let dir: string;
  let url: string;
  let server: RunningServer;
  before(async () => {
    const disk = mountSmallDisk(diskBytes);
    assert.ok('dir' in disk, 'mounted once, mounts again');
    dir = disk.dir;
    execFileSync('chown', ['postgres:postgres', dir]);
    const admin = testDatabaseUrl()!;
    await onDatabase(admin, async (client) => {
      await client.query(`CREATE TABLESPACE ${tablespace} LOCATION '${dir}'`);
      await client.query(`CREATE DATABASE ${tablespace} TABLESPACE ${tablespace}`);
    });
    const database = new URL(admin);
    database.pathname = `/${tablespace}`;
    url = database.href;
    server = await startServer({ database: url, args: ['--blob-reclaim-grace', String(graceSeconds)] });
  });
  after(async () => {
    await server?.stop();
    await onDatabase(testDatabaseUrl()!, async (client) => {
      await client.query(`DROP DATABASE IF EXISTS ${tablespace} WITH (FORCE)`);
      await client.query(`DROP TABLESPACE IF EXISTS ${tablespace}`);
    });
    if (dir !== undefined) unmount(dir);
  });

  test('writes of every service answer 503 ServerBusy with one log line (SQLSTATE 53100)', async () => {
    const table = await freshTable(server);
    const queue = queueServiceClient(server).getQueueClient(uniqueQueueName());
    await queue.create();
    const { stored } = await fillWithBlobs(server);
    assert.ok(stored.length >= 4, `${stored.length} blobs fit`);
    await tableAndQueueRefused(table, queue);
    logSaysDiskFull(server);
    assert.match(server.output().stderr, /\(53100\)/);
  });
});
