// Blob soft delete under kill -9, on SQLite and PostgreSQL: with a DeleteRetentionPolicy on, writers
// put a blob, delete it (soft), and undelete every other one, or overwrite it, until the server gets
// SIGKILL a random moment after every writer had an acknowledgement. After a restart on the same
// data, every acknowledged soft delete holds (the blob is not readable, it is listed with
// include=deleted), every acknowledged undelete holds (the blob reads back as written), and every
// acknowledged overwrite kept the blob it replaced (a soft-deleted snapshot that Undelete restores),
// and every acknowledged permanent delete of a soft-deleted snapshot holds.
// SIGKILL ends the process, not the machine: this proves nothing is acknowledged before its commit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { loadUntilKilled } from '../../helpers/kill-under-load.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const writers = 3;
const killDelayMaxMs = 1_000;
const firstAcksWithinMs = 60_000;
const policy =
  '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><DeleteRetentionPolicy>' +
  '<Enabled>true</Enabled><Days>7</Days><AllowPermanentDelete>true</AllowPermanentDelete>' +
  '</DeleteRetentionPolicy></StorageServiceProperties>';

interface Ledger {
  readonly name: string;
  /** Names whose soft delete was acknowledged (and no undelete sent). */
  readonly deleted: Set<string>;
  /** Names whose undelete was acknowledged, with the text each holds. */
  readonly restored: Map<string, string>;
  /** Names whose overwrite was acknowledged: the text it replaced, and the text it holds. */
  readonly overwritten: Map<string, readonly [before: string, now: string]>;
  /** Names one of whose snapshots was soft-deleted, then deleted permanently (acknowledged): that snapshot. */
  readonly purged: Map<string, string>;
}

async function expect(server: RunningServer, request: Parameters<typeof blobSend>[1], status: number) {
  const answer = await blobSend(server, request);
  assert.equal(answer.status, status, `${request.method} ${request.target}: ${answer.text}`);
}

async function deleteAndUndelete(server: RunningServer, container: string, ledger: Ledger, stop: () => boolean) {
  for (let i = 0; !stop(); i++) {
    const name = `${ledger.name}-${i}`;
    const target = `${container}/${name}`;
    const text = `${name} `.repeat(1 + (i % 50));
    const put = (body: string) => ({ method: 'PUT', target, headers: { 'x-ms-blob-type': 'BlockBlob' }, body });
    await expect(server, put(text), 201);
    if (i % 4 === 2) {
      await expect(server, put(`${text}again`), 201);
      ledger.overwritten.set(name, [text, `${text}again`]);
      continue;
    }
    if (i % 4 === 3) {
      const snapshot = (await blobSend(server, { method: 'PUT', target: `${target}?comp=snapshot` })).headers[
        'x-ms-snapshot'
      ] as string;
      const snapshotTarget = `${target}?snapshot=${encodeURIComponent(snapshot)}`;
      await expect(server, { method: 'DELETE', target: snapshotTarget }, 202);
      await expect(server, { method: 'DELETE', target: `${snapshotTarget}&deletetype=permanent` }, 202);
      ledger.purged.set(name, snapshot);
    }
    await expect(server, { method: 'DELETE', target }, 202);
    if (i % 2 === 1) {
      ledger.deleted.add(name);
      continue;
    }
    await expect(server, { method: 'PUT', target: `${target}?comp=undelete` }, 200);
    ledger.restored.set(name, text);
  }
}

/** The names listed with include=deleted as deleted. */
async function listedDeleted(server: RunningServer, container: string): Promise<Set<string>> {
  const target = `${container}?restype=container&comp=list&include=deleted&maxresults=5000`;
  const answer = await blobSend(server, { method: 'GET', target });
  assert.equal(answer.status, 200, answer.text);
  const deleted = new Set<string>();
  for (const [, entry] of answer.text.matchAll(/<Blob>(.*?)<\/Blob>/g)) {
    const name = /<Name>(.*?)<\/Name>/.exec(entry!)?.[1];
    if (name !== undefined && entry!.includes('<Deleted>true</Deleted>')) deleted.add(name);
  }
  return deleted;
}

/** name@snapshot of every snapshot listed, soft-deleted ones too. */
async function everySnapshot(server: RunningServer, container: string): Promise<Set<string>> {
  const target = `${container}?restype=container&comp=list&include=deleted,snapshots&maxresults=5000`;
  const answer = await blobSend(server, { method: 'GET', target });
  assert.equal(answer.status, 200, answer.text);
  const found = new Set<string>();
  for (const [, entry] of answer.text.matchAll(/<Blob>(.*?)<\/Blob>/g)) {
    const snapshot = /<Snapshot>(.*?)<\/Snapshot>/.exec(entry!)?.[1];
    if (snapshot !== undefined) found.add(`${/<Name>(.*?)<\/Name>/.exec(entry!)?.[1]}@${snapshot}`);
  }
  return found;
}

/** The texts of the name's snapshots and blob, sorted. */
async function texts(server: RunningServer, container: string, name: string): Promise<string[]> {
  const target = `${container}?restype=container&comp=list&include=snapshots&prefix=${encodeURIComponent(name)}`;
  const answer = await blobSend(server, { method: 'GET', target });
  const found: string[] = [];
  for (const [, entry] of answer.text.matchAll(/<Blob>(.*?)<\/Blob>/g)) {
    if (/<Name>(.*?)<\/Name>/.exec(entry!)?.[1] !== name) continue;
    const snapshot = /<Snapshot>(.*?)<\/Snapshot>/.exec(entry!)?.[1];
    const query = snapshot === undefined ? '' : `?snapshot=${encodeURIComponent(snapshot)}`;
    found.push((await blobSend(server, { method: 'GET', target: `${container}/${name}${query}` })).text);
  }
  return found.sort();
}

const newLedger = (name: string): Ledger => ({
  name,
  deleted: new Set(),
  restored: new Map(),
  overwritten: new Map(),
  purged: new Map(),
});

for (const engine of storeEngines) {
  describe(`blob soft delete crash on ${engine.label}`, () => {
    test('kill -9 under soft deletes and undeletes: every acknowledged one holds', async (t) => {
      const { options, cleanup } = await engine.data();
      const container = uniqueContainerName('softcrash');
      const ledgers = Array.from({ length: writers }, (_, i) => newLedger(`w${i}`));
      try {
        const first = await startServer({ ...options });
        try {
          await expect(first, { method: 'PUT', target: '?restype=service&comp=properties', body: policy }, 202);
          await expect(first, { method: 'PUT', target: `${container}?restype=container` }, 201);
          await loadUntilKilled(first, {
            writers: ledgers.map(
              (ledger) => (stop: () => boolean) => deleteAndUndelete(first, container, ledger, stop),
            ),
            waiting: () =>
              ledgers.some((l) => [l.deleted, l.restored, l.overwritten, l.purged].some((kind) => kind.size === 0)),
            killDelayMaxMs,
            firstAcksWithinMs,
          });
        } catch (error) {
          // A failure before the kill must not leave the server running.
          if (first.process.exitCode === null && first.process.signalCode === null) await first.kill9();
          throw error;
        }
        const deletes = ledgers.reduce((sum, l) => sum + l.deleted.size, 0);
        const undeletes = ledgers.reduce((sum, l) => sum + l.restored.size, 0);
        const overwrites = ledgers.reduce((sum, l) => sum + l.overwritten.size, 0);
        const purges = ledgers.reduce((sum, l) => sum + l.purged.size, 0);
        t.diagnostic(`${deletes} soft deletes, ${undeletes} undeletes, ${overwrites} overwrites, ${purges} purges`);

        const second = await startServer({ ...options });
        try {
          const listed = await listedDeleted(second, container);
          const listedSnapshots = await everySnapshot(second, container);
          for (const ledger of ledgers) {
            for (const name of ledger.deleted) {
              await expect(second, { method: 'HEAD', target: `${container}/${name}` }, 404);
              assert.ok(listed.has(name), `${name} is listed as soft-deleted`);
            }
            for (const [name, text] of ledger.restored) {
              const answer = await blobSend(second, { method: 'GET', target: `${container}/${name}` });
              assert.equal(answer.status, 200, `${name}: ${answer.text}`);
              assert.equal(answer.text, text);
            }
            for (const [name, snapshot] of ledger.purged) {
              assert.ok(!listedSnapshots.has(`${name}@${snapshot}`), `${name}: its purged snapshot stays gone`);
            }
            for (const [name, [before, now]] of ledger.overwritten) {
              assert.ok(listed.has(name), `${name}: the blob it replaced is listed as soft-deleted`);
              await expect(second, { method: 'PUT', target: `${container}/${name}?comp=undelete` }, 200);
              assert.deepEqual(await texts(second, container, name), [before, now].sort());
            }
          }
        } finally {
          await second.stop();
        }
      } finally {
        await cleanup();
      }
    });
  });
}
