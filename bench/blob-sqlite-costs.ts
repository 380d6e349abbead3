// The costs of the SQLite engine's blob store below the HTTP layer (docs/blob-storage.md, Costs):
// streaming 256 MiB in and out, a Put Block List and a snapshot of 50,000 blocks, and sequential
// Append Blocks, each fsync included, in a throwaway data directory.
//   node dist/bench/blob-sqlite-costs.js
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BlobRecord } from '../src/storage/blob-store.js';
import { SqliteStore } from '../src/storage/sqlite/sqlite-store.js';

const mebibyte = 1024 * 1024;
const account = 'bench';
const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-blob-costs-'));
const tables = await SqliteStore.open({ location });
const blobs = await tables.openBlobStore();
await blobs.createContainer(account, { name: 'c', etag: '"c"', lastModifiedMs: 0, state: '' });

const record = (name: string, etag: string, sizeBytes: number, snapshot = ''): BlobRecord => ({
  container: 'c',
  name,
  snapshot,
  etag,
  lastModifiedMs: 0,
  sizeBytes,
  state: '',
});

async function* mebibytes(count: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < count; i++) yield Buffer.alloc(mebibyte, i);
}

async function timed(what: string, run: () => Promise<unknown>, times = 1): Promise<void> {
  const startMs = performance.now();
  for (let i = 0; i < times; i++) await run();
  console.log(`${what}: ${((performance.now() - startMs) / times).toFixed(2)} ms`);
}

try {
  const big = await blobs.writeContent(mebibytes(1));
  await timed('writeContent of 256 MiB (1 MiB chunks)', async () => {
    Object.assign(big, await blobs.writeContent(mebibytes(256)));
  });
  await blobs.putBlob(
    account,
    record('big', '"1"', big.sizeBytes),
    { kind: 'replace', blocks: [{ blockId: '', content: big }] },
    null,
  );
  await timed('readContent of 256 MiB', async () => {
    const chunks = await blobs.readContent(account, { container: 'c', name: 'big', snapshot: '' }, '"1"', 0, Infinity);
    for await (const chunk of chunks as AsyncIterable<Buffer>) void chunk;
  });
  const empty = await blobs.writeContent(mebibytes(0));
  const blocks = Array.from({ length: 50_000 }, (_, i) => ({ blockId: `block-${i}`, content: empty }));
  let round = 0;
  await timed(
    'Put Block List of 50,000 blocks (mean of 3)',
    () => blobs.putBlob(account, record('many', `"m${round++}"`, 0), { kind: 'replace', blocks }, undefined),
    3,
  );
  await timed('snapshot of 50,000 blocks', () =>
    blobs.snapshotBlob(account, record('many', '"s"', 0, 's'), `"m${round - 1}"`),
  );
  let etag = '"a"';
  await blobs.putBlob(account, record('log', etag, 0), { kind: 'replace', blocks: [] }, null);
  let appends = 0;
  await timed(
    'Append Block, one after another (mean of 1000)',
    async () => {
      const next = `"a${appends++}"`;
      await blobs.putBlob(
        account,
        record('log', next, 0),
        { kind: 'append', block: { blockId: '', content: empty } },
        etag,
      );
      etag = next;
    },
    1000,
  );
} finally {
  blobs.close();
  await tables.close();
  rmSync(location, { recursive: true, force: true });
}
