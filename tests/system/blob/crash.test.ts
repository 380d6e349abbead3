// Blob durability under kill -9, on SQLite and PostgreSQL: concurrent clients put blobs, stage and
// commit block lists and append blocks, each to a blob of its own, until the server gets SIGKILL a
// random moment after every writer had at least one acknowledgement. After a restart on the same
// data, every acknowledged version is there byte for byte (SHA-256), no blob shows a version that
// is neither its last acknowledged one nor the one in flight at the kill (nothing partially
// visible), every acknowledged append is there in order, and the listing agrees with the content.
// Then, the server stopped, reclaim passes as if hours had passed leave no content that nothing
// names, and remove none that something names.
// A second test kills the server under Blob Batch deletes: every part answered 202 stays deleted.
// SIGKILL ends the process, not the machine: this proves nothing is acknowledged before its
// commit, not that the commit was fsynced.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import {
  appendBlocks,
  checkAppends,
  checkVersion,
  commitBlockLists,
  download,
  putVersions,
  type AppendLedger,
  type VersionLedger,
} from '../../helpers/blob-crash-load.js';
import { blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { assertContentWhole, storeEngines } from '../../helpers/blob-store-check.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const writersPerKind = 3;
/** After every writer's first acknowledgement, the kill comes within this. */
const killDelayMaxMs = 1_500;
const firstAcksWithinMs = 60_000;

interface Ledgers {
  readonly versions: VersionLedger[];
  readonly appends: AppendLedger[];
}

function ledgers(): Ledgers {
  const versions: VersionLedger[] = [];
  for (let i = 0; i < writersPerKind; i++) {
    versions.push({ kind: 'put', name: `put-${i}`, ackedCount: 0 });
    versions.push({ kind: 'blocks', name: `dir/blocks-${i}`, ackedCount: 0 });
  }
  const appends = Array.from({ length: writersPerKind }, (_, i): AppendLedger => {
    return { kind: 'append', name: `append-${i}`, sent: [], ackedCount: 0 };
  });
  return { versions, appends };
}

/** Runs every writer until the kill; fails on any writer error before it. */
async function loadUntilKilled(server: RunningServer, container: string, ledger: Ledgers): Promise<string> {
  let killing = false;
  const errorsBeforeKill: string[] = [];
  const guard = (work: Promise<void>) =>
    work.catch((error: unknown) => {
      if (!killing) errorsBeforeKill.push(error instanceof Error ? error.message : String(error));
    });
  const writers = [
    ...ledger.versions.map((v) =>
      guard(v.kind === 'put' ? putVersions(server, container, v) : commitBlockLists(server, container, v)),
    ),
    ...ledger.appends.map((a) => guard(appendBlocks(server, container, a))),
  ];
  const all = [...ledger.versions, ...ledger.appends];
  const deadline = Date.now() + firstAcksWithinMs;
  while (all.some((l) => l.ackedCount === 0) && errorsBeforeKill.length === 0 && Date.now() < deadline) {
    await delay(20);
  }
  const delayMs = Math.floor(Math.random() * killDelayMaxMs);
  await delay(delayMs);
  killing = true;
  await server.kill9();
  await Promise.all(writers);
  assert.deepEqual(errorsBeforeKill, [], 'no writer failed before the kill');
  for (const l of all) assert.ok(l.ackedCount > 0, `${l.name}: acknowledged something before the kill`);
  const acked = (kind: string) => all.filter((l) => l.kind === kind).reduce((sum, l) => sum + l.ackedCount, 0);
  return (
    `killed ${delayMs} ms after every writer's first acknowledgement: ${acked('put')} Put Blob, ` +
    `${acked('blocks')} Put Block List, ${acked('append')} Append Block acknowledged`
  );
}

/** Name and Content-Length of every blob the listing shows (one page: the test has few blobs). */
async function listed(server: RunningServer, container: string): Promise<Map<string, number>> {
  const answer = await blobSend(server, { method: 'GET', target: `${container}?restype=container&comp=list` });
  assert.equal(answer.status, 200, answer.text);
  const sizes = new Map<string, number>();
  for (const [, blob] of answer.text.matchAll(/<Blob>([\s\S]*?)<\/Blob>/g)) {
    const name = /<Name>([^<]*)<\/Name>/.exec(blob!)?.[1];
    const length = /<Content-Length>(\d+)<\/Content-Length>/.exec(blob!)?.[1];
    assert.ok(name !== undefined && length !== undefined, `a listed blob without name or length: ${blob}`);
    sizes.set(name, Number(length));
  }
  return sizes;
}

async function checkAfterRestart(server: RunningServer, container: string, ledger: Ledgers): Promise<void> {
  const sizes = await listed(server, container);
  for (const version of ledger.versions) {
    const content = await download(server, container, version.name);
    checkVersion(version, content);
    assert.equal(sizes.get(version.name), content?.length, `${version.name}: listed with its content's length`);
  }
  for (const appended of ledger.appends) {
    const content = await download(server, container, appended.name);
    checkAppends(appended, content);
    assert.equal(sizes.get(appended.name), content?.length, `${appended.name}: listed with its content's length`);
  }
}

for (const engine of storeEngines) {
  describe(`blob crash on ${engine.label}`, () => {
    test('kill -9 under uploads, block commits and appends: acknowledged writes whole, nothing orphaned', async (t) => {
      const { options, at, cleanup } = await engine.data();
      const container = uniqueContainerName('crash');
      const ledger = ledgers();
      try {
        const first = await startServer(options);
        const created = await blobSend(first, { method: 'PUT', target: `${container}?restype=container` });
        assert.equal(created.status, 201, created.text);
        t.diagnostic(await loadUntilKilled(first, container, ledger));

        const second = await startServer(options);
        try {
          await checkAfterRestart(second, container, ledger);
        } finally {
          await second.stop();
        }
        t.diagnostic(await assertContentWhole(at));
      } finally {
        await cleanup();
      }
    });
  });
}

const batchBlobs = 400;
const batchSize = 25;

/** Deletes the blobs in batches, two batches at a time, until the kill; returns the names answered 202. */
async function batchDeletesUntilKilled(server: RunningServer, container: string): Promise<Set<string>> {
  const client = blobServiceClient(server).getContainerClient(container);
  const names = Array.from({ length: batchBlobs }, (_, i) => `b${i}`);
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map((name) => client.getBlockBlobClient(name).upload('x', 1)));
  }
  const acknowledged = new Set<string>();
  let killing = false;
  const errors: string[] = [];
  const lane = async (lane: number) => {
    for (let start = lane * batchSize; start < names.length && !killing; start += 2 * batchSize) {
      const parts = names.slice(start, start + batchSize).map((name) => client.getBlobClient(name));
      const answer = await client.getBlobBatchClient().deleteBlobs(parts);
      answer.subResponses.forEach((part, index) => {
        if (part.status === 202) acknowledged.add(parts[index]!.name);
      });
    }
  };
  const lanes = [0, 1].map((n) =>
    lane(n).catch((error: unknown) => {
      if (!killing) errors.push(String(error));
    }),
  );
  while (acknowledged.size === 0 && errors.length === 0) await delay(5);
  await delay(Math.floor(Math.random() * 300));
  killing = true;
  await server.kill9();
  await Promise.all(lanes);
  assert.deepEqual(errors, [], 'no batch failed before the kill');
  return acknowledged;
}

for (const engine of storeEngines) {
  describe(`blob batch crash on ${engine.label}`, () => {
    test('kill -9 under Blob Batch deletes: every part answered 202 is deleted after restart', async (t) => {
      const { options, cleanup } = await engine.data();
      const container = uniqueContainerName('crashbatch');
      try {
        const first = await startServer(options);
        const created = await blobSend(first, { method: 'PUT', target: `${container}?restype=container` });
        assert.equal(created.status, 201, created.text);
        const acknowledged = await batchDeletesUntilKilled(first, container);
        const second = await startServer(options);
        try {
          const left = await listed(second, container);
          t.diagnostic(`${acknowledged.size} deletes acknowledged, ${left.size} of ${batchBlobs} blobs left`);
          const resurrected = [...acknowledged].filter((name) => left.has(name));
          assert.deepEqual(resurrected, [], 'blobs whose delete was acknowledged');
        } finally {
          await second.stop();
        }
      } finally {
        await cleanup();
      }
    });
  });
}
