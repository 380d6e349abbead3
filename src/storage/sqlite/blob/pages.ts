// Page blobs on the SQLite engine (page-store.ts): a page blob version's page table is the
// blob_pages rows under its list id (schema.ts). Writes are steps of the writer's jobs
// (sqlite/blob/writer.ts): a Put Page deletes the extents it overlaps, inserts what is left of
// them on either side (same content, offset moved), then its own extent; a clear does the same
// without the last. Content an extent let go of becomes garbage, which reclaim removes a grace later
// if nothing names it then. Reads page through the table by (list_id, start_byte).
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import type { PageExtent, PageRange } from '../../page-store.js';
import { boundLimit } from '../schema.js';

type Statement = Database.Statement<unknown[], unknown>;

/** A row of blob_pages. */
interface PageRow {
  readonly start_byte: number;
  readonly end_byte: number;
  readonly content_id: string;
  readonly content_offset: number;
}

/** The extents of list ? (twice) that may overlap [?, ?): from the last starting at or before the start. */
const overlapping =
  'SELECT start_byte, end_byte, content_id, content_offset FROM blob_pages WHERE list_id = ? AND start_byte >= ' +
  'coalesce((SELECT max(start_byte) FROM blob_pages WHERE list_id = ? AND start_byte <= ?), 0) AND start_byte < ? ' +
  'ORDER BY start_byte';

/** The reads, on the store's read connection (exported for the query-plan test). */
export const pageReaderSql = {
  pagesFrom: `${overlapping} ${boundLimit()}`,
  referencedByPage: 'SELECT 1 FROM blob_pages WHERE content_id = ? LIMIT 1',
} as const;

const writerSql = {
  overlapping,
  deletePage: 'DELETE FROM blob_pages WHERE list_id = ? AND start_byte = ?',
  insertPage:
    'INSERT INTO blob_pages (list_id, start_byte, end_byte, content_id, content_offset) VALUES (?, ?, ?, ?, ?)',
  copyPages:
    'INSERT INTO blob_pages (list_id, start_byte, end_byte, content_id, content_offset) ' +
    'SELECT ?, start_byte, end_byte, content_id, content_offset FROM blob_pages WHERE list_id = ?',
  referencedByPage: 'SELECT 1 FROM blob_pages WHERE content_id = ? LIMIT 1',
  tailStart:
    'SELECT min(start_byte) AS first, count(*) AS rows FROM ' +
    `(SELECT start_byte FROM blob_pages WHERE list_id = ? ORDER BY start_byte DESC ${boundLimit()})`,
  tailToGarbage:
    'INSERT INTO blob_garbage (content_id, stamp_ms) SELECT content_id, NULL FROM blob_pages ' +
    'WHERE list_id = ? AND start_byte >= ? ON CONFLICT (content_id) DO UPDATE SET stamp_ms = NULL',
  deleteTail: 'DELETE FROM blob_pages WHERE list_id = ? AND start_byte >= ?',
  garbage:
    'INSERT INTO blob_garbage (content_id, stamp_ms) VALUES (?, NULL) ON CONFLICT (content_id) DO UPDATE SET stamp_ms = NULL',
} as const;

/** The end of every blob: a range to it covers whatever a page table holds. */
export const pagesEndByte = Number.MAX_SAFE_INTEGER;

/** The page table writes of the writer's jobs; each runs inside the calling job's transaction. */
export class PageWrites {
  private readonly sql: Record<keyof typeof writerSql, Statement>;

  constructor(db: Database.Database) {
    this.sql = Object.fromEntries(Object.entries(writerSql).map(([key, text]) => [key, db.prepare(text)])) as Record<
      keyof typeof writerSql,
      Statement
    >;
    this.sql.referencedByPage.pluck();
  }

  /** Sets [startByte, startByte + sizeBytes) of list `listId` to content `contentId` from its first byte. */
  write(listId: number, startByte: number, sizeBytes: number, contentId: string): void {
    this.clear(listId, { startByte, endByteExclusive: startByte + sizeBytes });
    if (sizeBytes > 0) this.sql.insertPage.run(listId, startByte, startByte + sizeBytes, contentId, 0);
  }

  /** Removes `range` from list `listId`'s extents, keeping their parts outside it. */
  clear(listId: number, range: PageRange): void {
    const { startByte: start, endByteExclusive: end } = range;
    assert(Number.isSafeInteger(start) && start >= 0 && end >= start, 'a page range is a byte range');
    for (const row of this.sql.overlapping.all(listId, listId, start, end) as PageRow[]) {
      if (row.end_byte <= start) continue;
      this.sql.deletePage.run(listId, row.start_byte);
      if (row.start_byte < start) {
        this.sql.insertPage.run(listId, row.start_byte, start, row.content_id, row.content_offset);
      }
      if (row.end_byte > end) {
        const offset = row.content_offset + (end - row.start_byte);
        this.sql.insertPage.run(listId, end, row.end_byte, row.content_id, offset);
      }
      // Its content may be named by nothing now: reclaim looks again a grace later.
      this.sql.garbage.run(row.content_id);
    }
  }

  /** Copies list `fromListId`'s extents to list `toListId` (empty): the content is shared. */
  copy(fromListId: number, toListId: number): void {
    this.sql.copyPages.run(toListId, fromListId);
  }

  referenced(contentId: string): boolean {
    return this.sql.referencedByPage.get(contentId) !== undefined;
  }

  /**
   * Drops up to `rowsMax` of a dead list's extents, from its end (their content to garbage);
   * answers how many went.
   */
  dropTail(listId: number, rowsMax: number): number {
    const from = this.sql.tailStart.get(listId, rowsMax) as { first: number | null; rows: number };
    if (from.rows > 0) {
      this.sql.tailToGarbage.run(listId, from.first);
      this.sql.deleteTail.run(listId, from.first);
    }
    return from.rows;
  }
}

/** Extents one read of a page table takes at once. */
const pageReadRows = 64;
/** Zeros a reader sends at once for unwritten pages. */
const zeroChunk = Buffer.alloc(64 * 1024);

/** A row of pagesFrom, which the store reads raw (as arrays): the columns of PageRow in order. */
type RawPageRow = [start_byte: number, end_byte: number, content_id: string, content_offset: number];

/**
 * A list's extents overlapping [fromByte, toByte), at most `limit`, in order (PageStore.pageExtents);
 * `pagesFrom` is pageReaderSql.pagesFrom in raw mode.
 */
export function readExtents(
  pagesFrom: Statement,
  listId: number,
  fromByte: number,
  toByte: number,
  limit: number,
): PageExtent[] {
  assert(Number.isSafeInteger(limit) && limit >= 1, 'an extent limit is a count');
  // One more than asked: the first row may end before fromByte.
  const rows = pagesFrom.all(listId, listId, fromByte, toByte, limit + 1) as RawPageRow[];
  const extents: PageExtent[] = [];
  for (const [startByte, endByteExclusive, contentId, contentOffsetBytes] of rows) {
    if (endByteExclusive <= fromByte) continue;
    if (extents.length === limit) break;
    extents.push({ startByte, endByteExclusive, contentId, contentOffsetBytes });
  }
  return extents;
}

/** `lengthBytes` zeros, in chunks. */
function* zeros(lengthBytes: number): Generator<Buffer> {
  for (let left = lengthBytes; left > 0; left -= zeroChunk.length)
    yield zeroChunk.subarray(0, Math.min(left, zeroChunk.length));
}

/**
 * The bytes [start, end) of a page table: each extent's content (`piece` reads [from, to) of a
 * content), zeros between. The extents are read a few at a time, as the reader goes.
 */
export async function* streamPages(
  pagesFrom: Statement,
  listId: number,
  start: number,
  end: number,
  piece: (contentId: string, from: number, to: number) => AsyncIterable<Buffer> | Iterable<Buffer>,
): AsyncGenerator<Buffer> {
  let offset = start;
  while (offset < end) {
    const extents = readExtents(pagesFrom, listId, offset, end, pageReadRows);
    for (const extent of extents) {
      const from = Math.max(offset, extent.startByte);
      const to = Math.min(end, extent.endByteExclusive);
      yield* zeros(from - offset);
      const contentFrom = extent.contentOffsetBytes + (from - extent.startByte);
      yield* piece(extent.contentId, contentFrom, contentFrom + (to - from));
      offset = to;
    }
    if (extents.length < pageReadRows) break;
  }
  yield* zeros(end - offset);
}
