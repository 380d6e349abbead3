// Page blobs on PostgreSQL (page-store.ts): a page blob version's page table is its blob_pages rows
// (blob_id, start_byte), each an extent of content from content_offset (blob/schema.ts,
// blobPagesMigration). A Put Page, in the transaction of putBlob that locked the version
// (postgres/blob/writes.ts), deletes the extents it overlaps, inserts what is left of them on
// either side and then its own extent, whose small content is written by the same statement
// (postgres/blob/unwritten.ts). Rows deleted release their content to reclaim (the trigger), as
// block rows do. Reads page through the table by (blob_id, start_byte).
import assert from 'node:assert/strict';
import type pg from 'pg';
import type { BlobKey, BlobRecord, WriteOutcome } from '../../blob-store.js';
import type { PageChange, PageExtent, PageRange } from '../../page-store.js';
import { readSegments } from './content-read.js';
import { named, run } from './statements.js';
import { namedContents, unwrittenAmong, unwrittenSql, unwrittenValues } from './unwritten.js';
import { RaceLost, type PostgresConnection } from '../connection.js';
import { schemaName as s } from '../schema.js';

/** A row of blob_pages; bigint columns arrive as text. */
interface PageRow {
  readonly start_byte: string;
  readonly end_byte: string;
  readonly content_id: string;
  readonly content_offset: string;
}

const pageColumns = 'p.start_byte, p.end_byte, p.content_id, p.content_offset';
/** The extents of blob $1 that may overlap [$2, $3): from the last starting at or before $2. */
const overlappingSql = `SELECT ${pageColumns} FROM ${s}.blob_pages p WHERE p.blob_id = $1 AND p.start_byte >= coalesce(
    (SELECT max(start_byte) FROM ${s}.blob_pages WHERE blob_id = $1 AND start_byte <= $2), 0)
  AND p.start_byte < $3 ORDER BY p.start_byte`;
const deletePagesSql = `DELETE FROM ${s}.blob_pages WHERE blob_id = $1 AND start_byte = ANY($2::bigint[])`;
const insertPagesSql = `INSERT INTO ${s}.blob_pages (blob_id, start_byte, end_byte, content_id, content_offset)
  SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[])`;
const copyPagesSql = `INSERT INTO ${s}.blob_pages (blob_id, start_byte, end_byte, content_id, content_offset)
  SELECT $2, start_byte, end_byte, content_id, content_offset FROM ${s}.blob_pages WHERE blob_id = $1`;
const dropVersionContentSql = `WITH k AS (DELETE FROM ${s}.blob_blocks WHERE blob_id = $1),
  p AS (DELETE FROM ${s}.blob_pages WHERE blob_id = $1) SELECT 1`;
const updateBlobSql = `UPDATE ${s}.blobs SET etag = $2, last_modified_ms = $3, size_bytes = $4, state = $5 WHERE id = $1`;
const insertBlobSql = `INSERT INTO ${s}.blobs (container_id, name, snapshot, etag, last_modified_ms, size_bytes, state)
  VALUES ($1, $2, '', $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id`;
const deleteStagedSql = `DELETE FROM ${s}.blob_staged WHERE container_id = $1 AND name = $2`;
const sourceSql = `SELECT b.id, b.etag, b.size_bytes FROM ${s}.blobs b JOIN ${s}.blob_containers c ON c.id = b.container_id
  WHERE c.account = $1 AND c.name = $2 AND b.name = $3 AND b.is_base = ($4 = '') AND b.snapshot = $4 FOR SHARE OF b`;
/** Extent $2..$3 of content $4 ($5 bytes, complete) for blob $1, the content written if unwritten (from $6). */
const insertWrittenSql = (unwritten: number): string => `WITH ${unwrittenSql(unwritten, 6)}
  c AS (${namedContents('ARRAY[$4::bigint]', unwritten)})
  INSERT INTO ${s}.blob_pages (blob_id, start_byte, end_byte, content_id, content_offset)
  SELECT $1, $2, $3, c.id, 0 FROM c WHERE c.size_bytes = $5 RETURNING 1`;

/** The end of every blob: a range to it covers whatever a page table holds. */
const pagesEndByte = Number.MAX_SAFE_INTEGER;

/** A version locked by putBlob: its container, and its row (undefined: none). */
export interface LockedVersion {
  readonly containerId: string;
  readonly version: { readonly id: string; readonly size_bytes: string } | undefined;
}

/** putBlob's page change (page-store.ts) on the locked base blob, in its transaction. */
export async function changePages(
  client: pg.ClientBase,
  record: BlobRecord,
  locked: LockedVersion,
  change: PageChange,
  chunkBytes: number,
): Promise<WriteOutcome> {
  const { containerId, version } = locked;
  const { etag, lastModifiedMs, sizeBytes, state } = record;
  if (change.kind === 'create' || change.kind === 'copy') {
    let source: { id: string; etag: string; size_bytes: string } | undefined;
    if (change.kind === 'copy') {
      const { container, name, snapshot } = change.source;
      source = (
        await run<{ id: string; etag: string; size_bytes: string }>(
          client,
          named(sourceSql, [change.sourceAccount, container, name, snapshot]),
        )
      ).rows[0];
      if (source === undefined || source.etag !== change.sourceEtag) return 'etagMismatch';
      assert.equal(Number(source.size_bytes), sizeBytes, 'a copy has its source page blob size');
    }
    let id = version?.id;
    if (id === undefined) {
      const values = [containerId, record.name, etag, lastModifiedMs, sizeBytes, state];
      id = (await run<{ id: string }>(client, named(insertBlobSql, values))).rows[0]?.id;
      // Another transaction created the blob since this one looked: start over, and meet its row.
      if (id === undefined) throw new RaceLost();
    } else {
      await run(client, named(dropVersionContentSql, [id]));
      await run(client, named(updateBlobSql, [id, etag, lastModifiedMs, sizeBytes, state]));
    }
    await run(client, named(deleteStagedSql, [containerId, record.name]));
    if (source !== undefined) await run(client, named(copyPagesSql, [source.id, id]));
    return 'ok';
  }
  if (version === undefined) return 'blobNotFound';
  const current = Number(version.size_bytes);
  const range = changedRange(change, current, sizeBytes);
  assert(range.endByteExclusive <= Math.max(current, sizeBytes) || change.kind === 'resize', 'pages within the blob');
  await clearPages(client, version.id, range);
  if (change.kind === 'write') {
    const ref = change.content;
    const unwritten = unwrittenAmong([ref]);
    const values: unknown[] = [version.id, change.startByte, change.startByte + ref.sizeBytes, ref.id, ref.sizeBytes];
    values.push(...unwrittenValues(unwritten, chunkBytes));
    const { rowCount } = await run(client, named(insertWrittenSql(unwritten.length), values));
    assert.equal(rowCount, 1, 'a page write names complete content of its stated size');
  }
  await run(client, named(updateBlobSql, [version.id, etag, lastModifiedMs, sizeBytes, state]));
  return 'ok';
}

/** The range a write, clear or resize takes from the current extents. */
function changedRange(change: PageChange, currentBytes: number, sizeBytes: number): PageRange {
  switch (change.kind) {
    case 'write':
      assert.equal(sizeBytes, currentBytes, 'a page write keeps the size');
      assert(change.startByte + change.content.sizeBytes <= sizeBytes, 'a page write is within the blob');
      return { startByte: change.startByte, endByteExclusive: change.startByte + change.content.sizeBytes };
    case 'clear':
      assert.equal(sizeBytes, currentBytes, 'a page clear keeps the size');
      return change.range;
    case 'resize':
      return { startByte: sizeBytes, endByteExclusive: pagesEndByte };
    default:
      assert.fail('create and copy replace the version');
  }
}

/** Removes `range` from the blob's extents, keeping their parts outside it. */
async function clearPages(client: pg.ClientBase, blobId: string, range: PageRange): Promise<void> {
  const { startByte: start, endByteExclusive: end } = range;
  const rows = (await run<PageRow>(client, named(overlappingSql, [blobId, start, end]))).rows;
  const gone: number[] = [];
  const kept: [number, number, string, number][] = [];
  for (const row of rows) {
    const [from, to, offset] = [Number(row.start_byte), Number(row.end_byte), Number(row.content_offset)];
    if (to <= start) continue;
    gone.push(from);
    if (from < start) kept.push([from, start, row.content_id, offset]);
    if (to > end) kept.push([end, to, row.content_id, offset + (end - from)]);
  }
  if (gone.length === 0) return;
  await run(client, named(deletePagesSql, [blobId, gone]));
  if (kept.length === 0) return;
  const columns = [0, 1, 2, 3].map((i) => kept.map((piece) => piece[i]));
  await run(client, named(insertPagesSql, [blobId, ...columns]));
}

/** snapshotBlob's copy of the base blob's extents to its snapshot. */
export async function copyPages(client: pg.ClientBase, fromBlobId: string, toBlobId: string): Promise<void> {
  await run(client, named(copyPagesSql, [fromBlobId, toBlobId]));
}

/** The blob version named by $1 to $4 if its ETag is $5, and its extents overlapping [$6, $7), at most $8. */
const extentsSql = `WITH v AS (SELECT b.id, b.etag FROM ${s}.blobs b JOIN ${s}.blob_containers c ON c.id = b.container_id
    WHERE c.account = $1 AND c.name = $2 AND b.name = $3 AND b.is_base = ($4 = '') AND b.snapshot = $4)
  SELECT v.etag, p.start_byte, p.end_byte, p.content_id, p.content_offset, p.chunk_bytes FROM v LEFT JOIN LATERAL (
    SELECT ${pageColumns}, t.chunk_bytes FROM ${s}.blob_pages p JOIN ${s}.blob_contents t ON t.id = p.content_id
    WHERE p.blob_id = v.id AND v.etag = $5 AND p.start_byte >= coalesce(
      (SELECT max(start_byte) FROM ${s}.blob_pages WHERE blob_id = v.id AND start_byte <= $6), 0)
      AND p.start_byte < $7 ORDER BY p.start_byte LIMIT $8
  ) p ON true ORDER BY p.start_byte`;

type ExtentRow = { readonly etag: string; readonly chunk_bytes: number | null } & {
  readonly [K in keyof PageRow]: PageRow[K] | null;
};

type ChunkedExtent = PageExtent & { readonly chunkBytes: number };

/** PageStore.pageExtents, with each content's chunk size (for reading it). */
export async function readExtents(
  connection: PostgresConnection,
  account: string,
  key: BlobKey,
  etag: string,
  fromByte: number,
  toByte: number,
  limit: number,
): Promise<ChunkedExtent[] | 'changed'> {
  assert(Number.isSafeInteger(limit) && limit >= 1, 'an extent limit is a count');
  // One more than asked: the first row may end before fromByte.
  const values = [account, key.container, key.name, key.snapshot, etag, fromByte, toByte, limit + 1];
  const { rows } = await connection.query<ExtentRow>('read', named(extentsSql, values));
  if (rows[0] === undefined || rows[0].etag !== etag) return 'changed';
  const extents: ChunkedExtent[] = [];
  for (const row of rows) {
    if (row.start_byte === null || Number(row.end_byte) <= fromByte) continue;
    extents.push({
      startByte: Number(row.start_byte),
      endByteExclusive: Number(row.end_byte),
      contentId: row.content_id!,
      contentOffsetBytes: Number(row.content_offset),
      chunkBytes: row.chunk_bytes!,
    });
  }
  return extents.slice(0, limit);
}

/** Extents one read of a page table takes at once. */
const pageReadRows = 64;
/** Zeros a reader sends at once for unwritten pages. */
const zeroChunk = Buffer.alloc(64 * 1024);

function* zeros(lengthBytes: number): Generator<Buffer> {
  for (let left = lengthBytes; left > 0; left -= zeroChunk.length) {
    yield zeroChunk.subarray(0, Math.min(left, zeroChunk.length));
  }
}

/**
 * The bytes [start, end) of a page blob version, zeros where no extent is; the extents read a few
 * at a time as the reader goes. A version replaced or deleted under the reader ends the stream
 * with an error (the client sees a short body), never with bytes of another version.
 */
export async function* readPages(
  connection: PostgresConnection,
  account: string,
  key: BlobKey,
  etag: string,
  start: number,
  end: number,
  holding: boolean,
): AsyncGenerator<Buffer> {
  let offset = start;
  while (offset < end) {
    const extents = await readExtents(connection, account, key, etag, offset, end, pageReadRows);
    if (extents === 'changed') throw new Error(`page blob ${key.name} changed while it was read`);
    for (const extent of extents) {
      const from = Math.max(offset, extent.startByte);
      const to = Math.min(end, extent.endByteExclusive);
      yield* zeros(from - offset);
      const segment = {
        contentId: extent.contentId,
        chunkBytes: extent.chunkBytes,
        offsetBytes: extent.contentOffsetBytes + (from - extent.startByte),
        lengthBytes: to - from,
      };
      yield* readSegments(connection, [segment], holding);
      offset = to;
    }
    if (extents.length < pageReadRows) break;
  }
  yield* zeros(end - offset);
}

/** Whether readBlocksSql's rows show a page blob: a non-empty range no block holds a byte of. */
export function isPageRead(contentIds: readonly (string | null)[], fromByte: number, toByte: number): boolean {
  return fromByte < toByte && contentIds.every((id) => id === null);
}
