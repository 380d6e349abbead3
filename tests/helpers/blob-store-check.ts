// After a crash test: opens the server's blob store directly (the server stopped), lets
// reclaimContent run as if hours had passed, and answers which content the store holds and which
// content its records and staged blocks name, so a test can say nothing is orphaned and nothing
// named is missing. On SQLite the content is files under <location>/blobs/ (src/storage/sqlite/
// blob-content.ts) and, when small, rows of blob_inline (sqlite/blob/inline.ts); on PostgreSQL rows of
// blob_contents (docs/blob-storage-postgres.md).
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BlobRecord, BlobStore } from '../../src/storage/blob-store.js';
import { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import { databaseFileName } from '../../src/storage/sqlite/schema.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { createDatabase, dropDatabase, onDatabase, testDatabaseUrl } from './postgres.js';
import { makeTempDir, removeDir, type ServerOptions } from './server.js';

export type StoreAt = { readonly location: string } | { readonly database: string };

/** An engine a test runs servers on, then opens its store directly (the server stopped). */
export interface StoreEngine {
  readonly label: string;
  /** A new data directory or database: server options for it, where its store is, how to remove it. */
  data(): Promise<{ options: ServerOptions; at: StoreAt; cleanup: () => Promise<void> }>;
}

/** SQLite on disk, and PostgreSQL when the tests have a cluster. */
export const storeEngines: readonly StoreEngine[] = [
  {
    label: 'SQLite',
    data: async () => {
      const location = makeTempDir();
      return { options: { location }, at: { location }, cleanup: async () => removeDir(location) };
    },
  },
  ...(testDatabaseUrl() === undefined
    ? []
    : [
        {
          label: 'PostgreSQL',
          data: async () => {
            const database = await createDatabase();
            return { options: { database }, at: { database }, cleanup: () => dropDatabase(database) };
          },
        },
      ]),
];

export interface ContentCensus {
  /** Content ids the store holds. */
  readonly stored: ReadonlySet<string>;
  /** Content ids a blob version's committed blocks or a staged block names. */
  readonly referenced: ReadonlySet<string>;
  /** What the reclaim passes removed, in total. */
  readonly reclaimed: number;
}

const account = 'devstoreaccount1';
/** Longer than any engine's content grace (an hour by default). */
const passApartMs = 3 * 60 * 60_000;
const reclaimPasses = 4;
const entriesMax = 1_000_000;

export async function contentCensus(at: StoreAt): Promise<ContentCensus> {
  if ('location' in at) {
    const tables = await SqliteStore.open({ location: at.location });
    try {
      const blobs = await tables.openBlobStore();
      try {
        const { referenced, reclaimed } = await reclaimAndList(blobs);
        const stored = new Set([...(await contentFiles(at.location)), ...inlineContent(at.location)]);
        return { stored, referenced, reclaimed };
      } finally {
        blobs.close();
      }
    } finally {
      await tables.close();
    }
  }
  const store = await PostgresStore.open({ url: at.database });
  try {
    const { referenced, reclaimed } = await reclaimAndList(store.openBlobStore());
    const stored = await onDatabase(at.database, async (client) => {
      const { rows } = await client.query<{ id: string }>('SELECT id::text AS id FROM cerulean.blob_contents');
      return new Set(rows.map((row) => row.id));
    });
    return { stored, referenced, reclaimed };
  } finally {
    await store.close();
  }
}

/**
 * Reclaim passes a grace apart (the first marks, a later one removes), keeping staged blocks (the
 * service keeps uncommitted blocks for days); then the content every container's blobs and
 * uncommitted names refer to.
 */
async function reclaimAndList(blobs: BlobStore): Promise<{ referenced: Set<string>; reclaimed: number }> {
  let reclaimed = 0;
  const startMs = Date.now() + passApartMs;
  for (let pass = 0; pass < reclaimPasses; pass++) {
    reclaimed += await blobs.reclaimContent(startMs + pass * passApartMs, 0, entriesMax);
  }
  const referenced = new Set<string>();
  for (const container of await blobs.listContainers(account, '', undefined, entriesMax)) {
    const options = { prefix: '', limit: entriesMax, snapshots: true, uncommitted: true };
    for (const listed of await blobs.listBlobs(account, container.name, options)) {
      const key =
        listed.kind === 'blob' ? listed.record : { container: container.name, name: listed.name, snapshot: '' };
      const { committed, staged } = await blobs.getBlocks(account, key);
      for (const block of [...committed, ...staged]) referenced.add(block.content.id);
      if (listed.kind === 'blob') for (const id of await pageContent(blobs, listed.record)) referenced.add(id);
    }
  }
  return { referenced, reclaimed };
}

/**
 * After reclaim passes (contentCensus): no content nothing names is kept, and none a blob, a staged
 * block or a page extent names is missing; answers a diagnostic line.
 */
export async function assertContentWhole(at: StoreAt): Promise<string> {
  const census = await contentCensus(at);
  const orphans = [...census.stored].filter((id) => !census.referenced.has(id));
  const missing = [...census.referenced].filter((id) => !census.stored.has(id));
  assert.deepEqual(orphans, [], 'content nothing names, after reclaim');
  assert.deepEqual(missing, [], 'content a blob, a staged block or a page names, missing');
  return `${census.stored.size} pieces of content kept, ${census.reclaimed} reclaimed`;
}

/** The content ids a page blob version's extents name (none for other blobs). */
async function pageContent(blobs: BlobStore, record: BlobRecord): Promise<string[]> {
  const ids: string[] = [];
  for (let at = 0; at < record.sizeBytes;) {
    const extents = await blobs.pageExtents(account, record, record.etag, at, record.sizeBytes, entriesMax);
    assert(extents !== 'changed', 'the server is stopped: nothing changes');
    ids.push(...extents.map((extent) => extent.contentId));
    if (extents.length < entriesMax) break;
    at = extents.at(-1)!.endByteExclusive;
  }
  return ids;
}

/** The content ids of the inline rows of the SQLite database at `location`. */
function inlineContent(location: string): string[] {
  const db = new Database(join(location, databaseFileName), { readonly: true });
  try {
    return db.prepare('SELECT content_id FROM blob_inline').pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** The content files under <location>/blobs/<2 hex digits>/, temporary ones included. */
async function contentFiles(location: string): Promise<Set<string>> {
  const root = join(location, 'blobs');
  const files = new Set<string>();
  for (const slice of await readdir(root)) {
    for (const name of await readdir(join(root, slice))) files.add(name);
  }
  return files;
}
