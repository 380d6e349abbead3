// Container soft delete under kill -9, on SQLite and PostgreSQL, with --container-soft-delete-days 7:
// writers create a container, put a blob in it, delete the container (kept), and restore every other
// one, until the server gets SIGKILL a random moment after every writer had an acknowledgement.
// After a restart on the same data, every acknowledged delete holds (the container is gone and
// listed with include=deleted) and every acknowledged restore holds (its blob reads back). SIGKILL
// ends the process, not the machine: this proves nothing is acknowledged before its commit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blobSend } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { loadUntilKilled } from '../../helpers/kill-under-load.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const writers = 3;
const killDelayMaxMs = 1_000;
const firstAcksWithinMs = 60_000;
const args = ['--container-soft-delete-days', '7'];

interface Ledger {
  readonly name: string;
  /** Containers whose soft delete was acknowledged (and no restore sent). */
  readonly deleted: Set<string>;
  /** Containers whose restore was acknowledged, with the text their blob holds. */
  readonly restored: Map<string, string>;
}

async function expect(server: RunningServer, request: Parameters<typeof blobSend>[1], status: number) {
  const answer = await blobSend(server, request);
  assert.equal(answer.status, status, `${request.method} ${request.target}: ${answer.text}`);
  return answer;
}

/** The soft-deleted containers listed with the prefix: name to versions. */
async function listedDeleted(server: RunningServer, prefix: string): Promise<Map<string, string[]>> {
  const target = `?comp=list&include=deleted&maxresults=5000&prefix=${prefix}`;
  const answer = await expect(server, { method: 'GET', target }, 200);
  const deleted = new Map<string, string[]>();
  for (const [, entry] of answer.text.matchAll(/<Container>(.*?)<\/Container>/g)) {
    const name = /<Name>(.*?)<\/Name>/.exec(entry!)?.[1];
    const version = /<Version>(.*?)<\/Version>/.exec(entry!)?.[1];
    if (name !== undefined && version !== undefined) deleted.set(name, [...(deleted.get(name) ?? []), version]);
  }
  return deleted;
}

async function deleteAndRestore(server: RunningServer, ledger: Ledger, stop: () => boolean) {
  for (let i = 0; !stop(); i++) {
    const name = `${ledger.name}-${i}`;
    const text = `${name} `.repeat(1 + (i % 50));
    await expect(server, { method: 'PUT', target: `${name}?restype=container` }, 201);
    const blob = { method: 'PUT', target: `${name}/b.txt`, headers: { 'x-ms-blob-type': 'BlockBlob' }, body: text };
    await expect(server, blob, 201);
    await expect(server, { method: 'DELETE', target: `${name}?restype=container` }, 202);
    if (i % 2 === 1) {
      ledger.deleted.add(name);
      continue;
    }
    const [version] = (await listedDeleted(server, name)).get(name) ?? [];
    assert.ok(version !== undefined, `${name} is listed as deleted`);
    const headers = { 'x-ms-deleted-container-name': name, 'x-ms-deleted-container-version': version };
    await expect(server, { method: 'PUT', target: `${name}?restype=container&comp=undelete`, headers }, 201);
    ledger.restored.set(name, text);
  }
}

const newLedger = (name: string): Ledger => ({ name, deleted: new Set(), restored: new Map() });

for (const engine of storeEngines) {
  describe(`container soft delete crash on ${engine.label}`, () => {
    test('kill -9 under container deletes and restores: every acknowledged one holds', async (t) => {
      const { options, cleanup } = await engine.data();
      const ledgers = Array.from({ length: writers }, (_, i) => newLedger(`csdcrash${i}`));
      try {
        const first = await startServer({ ...options, args });
        try {
          await loadUntilKilled(first, {
            writers: ledgers.map((ledger) => (stop: () => boolean) => deleteAndRestore(first, ledger, stop)),
            waiting: () => ledgers.some((l) => l.deleted.size === 0 || l.restored.size === 0),
            killDelayMaxMs,
            firstAcksWithinMs,
          });
        } catch (error) {
          // A failure before the kill must not leave the server running.
          if (first.process.exitCode === null && first.process.signalCode === null) await first.kill9();
          throw error;
        }
        const deletes = ledgers.reduce((sum, l) => sum + l.deleted.size, 0);
        const restores = ledgers.reduce((sum, l) => sum + l.restored.size, 0);
        t.diagnostic(`${deletes} deletes and ${restores} restores acknowledged before the kill`);

        const second = await startServer({ ...options, args });
        try {
          const listed = await listedDeleted(second, 'csdcrash');
          for (const ledger of ledgers) {
            for (const name of ledger.deleted) {
              await expect(second, { method: 'HEAD', target: `${name}?restype=container` }, 404);
              assert.equal(listed.get(name)?.length, 1, `${name} is listed as deleted`);
            }
            for (const [name, text] of ledger.restored) {
              const answer = await expect(second, { method: 'GET', target: `${name}/b.txt` }, 200);
              assert.equal(answer.text, text);
              assert.equal(listed.has(name), false, `${name} is no longer listed as deleted`);
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
