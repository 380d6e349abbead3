// Blob versions under kill -9, on SQLite and PostgreSQL, with --blob-versioning: writers overwrite
// blobs of their own with Put Blob (each answer's x-ms-version-id noted with what it wrote), others
// put and then delete theirs, until the server gets SIGKILL a random moment after every writer had
// an acknowledgement. After a restart on the same data, every acknowledged version reads back as
// written by its id, and every acknowledged delete holds (the base blob is gone, its last version is
// kept). SIGKILL ends the process, not the machine: this proves nothing is acknowledged before its
// commit.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { loadUntilKilled, type KillPlan } from '../../helpers/kill-under-load.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const writers = 3;
const killDelayMaxMs = 1_000;
const firstAcksWithinMs = 60_000;
const args = ['--blob-versioning'];

interface Ledger {
  readonly name: string;
  /** Version id → the text that version holds, for each acknowledged write. */
  readonly acked: Map<string, string>;
  /** Names whose delete was acknowledged, with the version id each was written with. */
  readonly deleted: Map<string, string>;
}

async function putText(server: RunningServer, target: string, text: string): Promise<string> {
  const headers = { 'x-ms-blob-type': 'BlockBlob' };
  const answer = await blobSend(server, { method: 'PUT', target, headers, body: text });
  assert.equal(answer.status, 201, `${target}: ${answer.text}`);
  const versionId = answer.headers['x-ms-version-id'];
  assert.ok(typeof versionId === 'string', `${target}: a version id`);
  return versionId;
}

async function overwrite(server: RunningServer, container: string, ledger: Ledger, stop: () => boolean) {
  for (let i = 0; !stop(); i++) {
    const text = `${ledger.name} write ${i} `.repeat(1 + (i % 50));
    ledger.acked.set(await putText(server, `${container}/${ledger.name}`, text), text);
  }
}

async function putAndDelete(server: RunningServer, container: string, ledger: Ledger, stop: () => boolean) {
  for (let i = 0; !stop(); i++) {
    const target = `${container}/${ledger.name}-${i}`;
    const text = `${ledger.name} ${i}`;
    const versionId = await putText(server, target, text);
    ledger.acked.set(`${i}/${versionId}`, text);
    const answer = await blobSend(server, { method: 'DELETE', target });
    assert.equal(answer.status, 202, `${target}: ${answer.text}`);
    ledger.deleted.set(`${ledger.name}-${i}`, versionId);
  }
}

function killPlan(server: RunningServer, container: string, ledgers: Ledger[], deleters: Ledger[]): KillPlan {
  return {
    writers: [
      ...ledgers.map((ledger) => (stop: () => boolean) => overwrite(server, container, ledger, stop)),
      ...deleters.map((ledger) => (stop: () => boolean) => putAndDelete(server, container, ledger, stop)),
    ],
    waiting: () => ledgers.some((l) => l.acked.size < 2) || deleters.some((l) => l.deleted.size === 0),
    killDelayMaxMs,
    firstAcksWithinMs,
  };
}

async function readVersion(server: RunningServer, target: string, versionId: string): Promise<string> {
  const answer = await blobSend(server, { method: 'GET', target: `${target}?versionid=${versionId}` });
  assert.equal(answer.status, 200, `${target} version ${versionId}: ${answer.text}`);
  return answer.text;
}

const newLedger = (name: string): Ledger => ({ name, acked: new Map(), deleted: new Map() });

for (const engine of storeEngines) {
  describe(`blob versions crash on ${engine.label}`, () => {
    test('kill -9 under versioned overwrites and deletes: every acknowledged version and delete holds', async (t) => {
      const { options, cleanup } = await engine.data();
      const container = uniqueContainerName('vercrash');
      const ledgers = Array.from({ length: writers }, (_, i) => newLedger(`over-${i}`));
      const deleters = Array.from({ length: writers }, (_, i) => newLedger(`gone-${i}`));
      try {
        const first = await startServer({ ...options, args });
        try {
          const made = await blobSend(first, { method: 'PUT', target: `${container}?restype=container` });
          assert.equal(made.status, 201, made.text);
          await loadUntilKilled(first, killPlan(first, container, ledgers, deleters));
        } catch (error) {
          // A failure before the kill must not leave the server running.
          if (first.process.exitCode === null && first.process.signalCode === null) await first.kill9();
          throw error;
        }
        const versions = ledgers.reduce((sum, l) => sum + l.acked.size, 0);
        const deletes = deleters.reduce((sum, l) => sum + l.deleted.size, 0);
        t.diagnostic(`${versions} versions and ${deletes} deletes acknowledged before the kill`);

        const second = await startServer({ ...options, args });
        try {
          for (const ledger of ledgers) {
            for (const [versionId, text] of ledger.acked) {
              assert.equal(await readVersion(second, `${container}/${ledger.name}`, versionId), text);
            }
          }
          for (const ledger of deleters) {
            for (const [name, versionId] of ledger.deleted) {
              const target = `${container}/${name}`;
              const base = await blobSend(second, { method: 'HEAD', target });
              assert.equal(base.status, 404, `${target} stays deleted`);
              assert.equal(await readVersion(second, target, versionId), `${ledger.name} ${name.split('-').at(-1)}`);
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
