// The Blob service's store on the SQLite engine, over the same database and the same writer as the
// tables and queues: record writes are jobs of the one writer (sqlite/blob/writer.ts), durable before they
// answer; content is in files beside the database (blob-content.ts) or, when small, in rows of its
// own (sqlite/blob/inline.ts), written with the first row that names it. Reads run on a connection of their own in
// autocommit, as the queue store's do, so each sees every write acknowledged before it started; an
// in-memory database shares its one connection.
//
// A reader streams the block list its blob version named when it started: lists never change but
// by appends past its end, and a dead list stays until reclaimContent drops it, which it never does
// while a reader of this process streams it (pinnedLists), nor within the grace after it died.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import type {
  TagQuery,
  TaggedBlob,
  Block,
  BlobKey,
  BlobRecord,
  BlobStore,
  BlockSummary,
  ContainerRecord,
  DeletedContainerRecord,
  ContentRef,
  ListBlobsOptions,
  ListedBlob,
} from '../../blob-store.js';
import { versionKeyPrefix } from '../../blob-store.js';
import { softDeletedKeyPrefix } from '../../blob-soft-delete.js';
import { containerVersion, deletedListStart } from '../../container-soft-delete.js';
import { clampRange, compareCodePoints, listStart, mergeListed } from '../../blob-rows.js';
import { newContentId, type ContentFiles } from './content.js';
import { inlineBytesMaxDefault, inlineReaderSql, readHead } from './inline.js';
import { blobColumns } from './schema.js';
import { pageReaderSql, readExtents, streamPages } from './pages.js';
import type { BlobWriterApi } from './writer.js';
import { SqliteTagFinder } from './tags.js';
import { boundLimit } from '../schema.js';

type Statement = Database.Statement<unknown[], unknown>;

/**
 * How long content and block lists no row needs any more stay before reclaimContent removes them:
 * longer than any request takes between writing content and committing a record that names it,
 * and than a staged block's trip from Get Block List to Put Block List. Readers need none: the
 * block lists they stream are pinned (and a process that restarted has no readers left).
 */
export const contentGraceMsDefault = 60 * 60 * 1000;

/** Directory entries one reclaimContent call's sweep looks at, per piece it may remove. */
const sweepEntriesPerLimit = 16;
/** Block rows a reader reads at once. */
const blockPageRows = 64;
/** Above every character a blob name may hold: the end of a name prefix's range. */
const prefixEnd = '\u{10FFFF}';

interface RecordRow {
  readonly name: string;
  readonly snapshot: string;
  readonly etag: string;
  readonly last_modified_ms: number;
  readonly size_bytes: number;
  readonly state: string;
}

interface BlockRow {
  readonly ordinal: number;
  readonly block_id: string;
  readonly content_id: string;
  readonly content_size: number;
  readonly end_byte: number;
}

/** The reads, on the store's own connection (exported for the query-plan test). */
export const blobReaderSql = {
  container: 'SELECT id, name, etag, last_modified_ms, state FROM blob_containers WHERE account = ? AND name = ?',
  containers:
    'SELECT name, etag, last_modified_ms, state FROM blob_containers ' +
    `WHERE account = ? AND name >= ? AND name < ? ORDER BY name ${boundLimit()}`,
  deletedContainers:
    'SELECT id, name, etag, last_modified_ms, state, deleted_ms, expires_ms FROM blob_containers_soft_deleted ' +
    `WHERE account = ? AND (name, id) >= (?, ?) AND name < ? ORDER BY name, id ${boundLimit()}`,
  blob: `SELECT ${blobColumns}, list_id FROM blobs WHERE container_id = ? AND name = ? AND base = ? AND snapshot = ?`,
  blobs:
    `SELECT ${blobColumns} FROM blobs WHERE container_id = @container AND (name, base, snapshot) >= (@name, @base, @snap) ` +
    `AND name < @end AND (base = 1 OR (snapshot < '${versionKeyPrefix}' AND @snapshots) ` +
    `OR (snapshot >= '${versionKeyPrefix}' AND snapshot < '${softDeletedKeyPrefix}' AND @versions) ` +
    `OR (snapshot >= '${softDeletedKeyPrefix}' AND @deleted)) ORDER BY name, base, snapshot ${boundLimit('@limit')}`,
  uncommitted:
    'SELECT DISTINCT name FROM blob_staged s WHERE container_id = @container AND name >= @name AND name < @end ' +
    'AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.container_id = s.container_id AND b.name = s.name AND b.base = 1) ' +
    `ORDER BY name ${boundLimit('@limit')}`,
  blocks:
    'SELECT ordinal, block_id, content_id, content_size, end_byte FROM blob_blocks WHERE list_id = ? ORDER BY ordinal',
  staged: 'SELECT block_id, content_id, content_size FROM blob_staged WHERE container_id = ? AND name = ? ORDER BY seq',
  stagedCount: 'SELECT count(*) AS n FROM blob_staged WHERE container_id = ? AND name = ?',
  stagedHas: 'SELECT 1 FROM blob_staged WHERE container_id = ? AND name = ? AND block_id = ?',
  stagedSample: 'SELECT block_id FROM blob_staged WHERE container_id = ? AND name = ? LIMIT 1',
  firstBlock:
    'SELECT ordinal, block_id, content_id, content_size, end_byte FROM blob_blocks ' +
    'WHERE list_id = ? AND end_byte > ? ORDER BY end_byte, ordinal LIMIT 1',
  referencedByBlock: 'SELECT 1 FROM blob_blocks WHERE content_id = ? LIMIT 1',
  referencedByStaged: 'SELECT 1 FROM blob_staged WHERE content_id = ? LIMIT 1',
  blocksFrom:
    'SELECT ordinal, block_id, content_id, content_size, end_byte FROM blob_blocks ' +
    `WHERE list_id = ? AND ordinal >= ? ORDER BY ordinal ${boundLimit()}`,
} as const;

type Sql = Record<keyof typeof blobReaderSql | keyof typeof inlineReaderSql | keyof typeof pageReaderSql, Statement>;

const record = (container: string, row: RecordRow): BlobRecord => ({
  container,
  name: row.name,
  snapshot: row.snapshot,
  etag: row.etag,
  lastModifiedMs: row.last_modified_ms,
  sizeBytes: row.size_bytes,
  state: row.state,
});

const block = (row: { block_id: string; content_id: string; content_size: number }): Block => ({
  blockId: row.block_id,
  content: { id: row.content_id, sizeBytes: row.content_size },
});

/** What every blob store over one database shares (SqliteStore.openBlobStore). */
export interface BlobStoresShared {
  readonly content: ContentFiles;
  /** Readers streaming each block list now, by list id: reclaimContent leaves these lists alone. */
  readonly readers: Map<number, number>;
}

export interface SqliteBlobStoreOptions {
  /** See contentGraceMsDefault. */
  readonly contentGraceMs?: number | undefined;
  /** Content up to this size is a row of the database, larger a file (inlineBytesMaxDefault); 0: files only. */
  readonly inlineBytesMax?: number | undefined;
}

export class SqliteBlobStore implements BlobStore {
  private readonly sql: Sql;
  private readonly content: ContentFiles;
  private readonly readers: Map<number, number>;
  private readonly graceMs: number;
  private readonly inlineBytesMax: number;
  private readonly tagFinder: SqliteTagFinder;
  /** Where the sweep of inline content goes on: the last content id it looked at. */
  private inlineSweepAfter = '';

  /** `ownsReader`: `reader` is this store's own connection, closed with it. */
  constructor(
    private readonly reader: Database.Database,
    private readonly writer: BlobWriterApi,
    shared: BlobStoresShared,
    private readonly ownsReader: boolean,
    options: SqliteBlobStoreOptions = {},
  ) {
    this.graceMs = options.contentGraceMs ?? contentGraceMsDefault;
    this.inlineBytesMax = options.inlineBytesMax ?? inlineBytesMaxDefault;
    assert(Number.isSafeInteger(this.graceMs) && this.graceMs >= 0, 'a grace is a duration');
    assert(Number.isSafeInteger(this.inlineBytesMax) && this.inlineBytesMax >= 0, 'a size is a count of bytes');
    this.content = shared.content;
    this.readers = shared.readers;
    this.sql = Object.fromEntries(
      Object.entries({ ...blobReaderSql, ...inlineReaderSql, ...pageReaderSql }).map(([key, text]) => [
        key,
        reader.prepare(text),
      ]),
    ) as Sql;
    this.sql.inlineBytes.pluck();
    // Rows as arrays: a Get Page Ranges reads thousands (readExtents).
    this.sql.pagesFrom.raw(true);
    this.tagFinder = new SqliteTagFinder(reader);
  }

  async findBlobsByTags(account: string, query: TagQuery): Promise<TaggedBlob[]> {
    return this.tagFinder.find(account, query);
  }

  /**
   * Small content becomes a row, written by the job that first names the ref (ContentRef.unwritten):
   * one commit for a small Put Blob, not two. Content that grows past inlineBytesMax on the way
   * goes to a file, with the bytes read so far.
   */
  async writeContent(source: AsyncIterable<Uint8Array>): Promise<ContentRef> {
    if (this.inlineBytesMax === 0) return this.content.write(source);
    const head = await readHead(source, this.inlineBytesMax);
    if ('rest' in head) return this.content.write(head.rest);
    // The system clock, as a file's mtime: the sweep compares it with nowMs - grace likewise.
    const unwritten = { bytes: head.whole, writtenMs: Date.now() };
    return { id: newContentId(), sizeBytes: head.whole.length, unwritten };
  }

  // The writes are the writer's jobs as they are (sqlite/blob/writer.ts).
  readonly createContainer: BlobStore['createContainer'] = (...args) => this.writer.createContainer(...args);
  readonly updateContainer: BlobStore['updateContainer'] = (...args) => this.writer.updateContainer(...args);
  readonly deleteContainer: BlobStore['deleteContainer'] = (...args) => this.writer.deleteContainer(...args);
  readonly restoreContainer: BlobStore['restoreContainer'] = (...args) => this.writer.restoreContainer(...args);
  readonly putBlob: BlobStore['putBlob'] = (...args) => this.writer.putBlob(...args);
  readonly snapshotBlob: BlobStore['snapshotBlob'] = (...args) => this.writer.snapshotBlob(...args);
  readonly deleteBlob: BlobStore['deleteBlob'] = (...args) => this.writer.deleteBlob(...args);
  readonly stageBlock: BlobStore['stageBlock'] = (...args) => this.writer.stageBlock(...args);

  async getContainer(account: string, name: string): Promise<ContainerRecord | undefined> {
    const row = this.sql.container.get(account, name) as (ContainerRow & { id: number }) | undefined;
    return row && containerRecord(row);
  }

  async listContainers(
    account: string,
    prefix: string,
    fromName: string | undefined,
    limit: number,
  ): Promise<ContainerRecord[]> {
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    const start = fromName !== undefined && compareCodePoints(fromName, prefix) > 0 ? fromName : prefix;
    const rows = this.sql.containers.all(account, start, prefix + prefixEnd, limit) as ContainerRow[];
    return rows.map(containerRecord);
  }

  async listDeletedContainers(
    account: string,
    prefix: string,
    from: { readonly name: string; readonly version: string } | undefined,
    limit: number,
  ): Promise<DeletedContainerRecord[]> {
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    const start = deletedListStart(prefix, from);
    const rows = this.sql.deletedContainers.all(
      account,
      start.name,
      start.id,
      prefix + prefixEnd,
      limit,
    ) as DeletedRow[];
    return rows.map((row) => ({
      ...containerRecord(row),
      version: containerVersion(row.id),
      deletedMs: row.deleted_ms,
      expiresMs: row.expires_ms,
    }));
  }

  async getBlob(account: string, key: BlobKey): Promise<BlobRecord | undefined> {
    const row = this.version(account, key);
    return row && record(key.container, row);
  }

  async listBlobs(account: string, container: string, options: ListBlobsOptions): Promise<ListedBlob[]> {
    assert(Number.isSafeInteger(options.limit) && options.limit >= 0, 'a list limit is a count');
    const containerId = this.containerId(account, container);
    if (containerId === undefined || options.limit === 0) return [];
    const [name, base, snap] = listStart(options);
    const end = options.prefix + prefixEnd;
    const limit = options.limit;
    const bounds = { container: containerId, name, end, limit };
    const kinds = {
      snapshots: options.snapshots ? 1 : 0,
      versions: options.versions === true ? 1 : 0,
      deleted: options.deleted === true ? 1 : 0,
    };
    const rows = this.sql.blobs.all({ ...bounds, base, snap, ...kinds }) as RecordRow[];
    const names = options.uncommitted ? (this.sql.uncommitted.pluck().all(bounds) as string[]) : [];
    return mergeListed(
      rows.map((row) => record(container, row)),
      names,
      [name, base, snap],
      limit,
    );
  }

  async blockSummary(account: string, container: string, name: string, blockId: string): Promise<BlockSummary> {
    const containerId = this.containerId(account, container);
    if (containerId === undefined) return { stagedCount: 0, stagedHasId: false, sampleBlockId: undefined };
    const stagedCount = (this.sql.stagedCount.get(containerId, name) as { n: number }).n;
    const stagedHasId = this.sql.stagedHas.get(containerId, name, blockId) !== undefined;
    const sample = this.sql.stagedSample.get(containerId, name) as { block_id: string } | undefined;
    return { stagedCount, stagedHasId, sampleBlockId: sample?.block_id };
  }

  async getBlocks(account: string, key: BlobKey): Promise<{ readonly committed: Block[]; readonly staged: Block[] }> {
    const containerId = this.containerId(account, key.container);
    if (containerId === undefined) return { committed: [], staged: [] };
    const row = this.version(account, key);
    const committed = row === undefined ? [] : (this.sql.blocks.all(row.list_id) as BlockRow[]).map(block);
    const staged = key.snapshot === '' ? (this.sql.staged.all(containerId, key.name) as BlockRow[]).map(block) : [];
    return { committed, staged };
  }

  // Typed by the contract, which names its parameters (blob-store.ts).
  readonly readContent: BlobStore['readContent'] = async (account, key, etag, startByte, endByteExclusive) => {
    const row = this.version(account, key);
    if (row === undefined || row.etag !== etag) return 'changed';
    const [start, end] = clampRange(startByte, endByteExclusive, row.size_bytes);
    return this.stream(row.list_id, start, end);
  };

  // Typed by the contract, which names its parameters (page-store.ts).
  readonly pageExtents: BlobStore['pageExtents'] = async (account, key, etag, fromByte, toByte, limit) => {
    const row = this.version(account, key);
    if (row === undefined || row.etag !== etag) return 'changed';
    return readExtents(this.sql.pagesFrom, row.list_id, fromByte, toByte, limit);
  };

  /** The bytes [start, end) of a block list, block by block; unpins the list when done or abandoned. */
  private async *stream(listId: number, start: number, end: number): AsyncIterable<Buffer> {
    // Pinned from the first read on: until then the list is live or died less than a grace ago.
    this.pin(listId, 1);
    try {
      if (start >= end) return;
      let next = this.sql.firstBlock.get(listId, start) as BlockRow | undefined;
      // No block holds a byte of the range: a page blob's list, whose bytes are its extents'.
      if (next === undefined) {
        yield* streamPages(this.sql.pagesFrom, listId, start, end, (id, from, to) => this.piece(id, from, to));
        return;
      }
      let offset = start;
      while (next !== undefined && offset < end) {
        const page = this.sql.blocksFrom.all(listId, next.ordinal, blockPageRows) as BlockRow[];
        for (const row of page) {
          const blockStart = row.end_byte - row.content_size;
          const from = Math.max(offset, blockStart);
          const to = Math.min(end, row.end_byte);
          if (from < to) yield* this.piece(row.content_id, from - blockStart, to - blockStart);
          offset = Math.max(offset, to);
          if (offset >= end) break;
        }
        const last = page.at(-1);
        next = page.length < blockPageRows || last === undefined ? undefined : { ...last, ordinal: last.ordinal + 1 };
      }
      assert(offset >= end, `block list ${listId} holds fewer bytes than its blob's size`);
    } finally {
      this.pin(listId, -1);
    }
  }

  /** The bytes [start, end) of one piece of content, inline or in its file. */
  private piece(id: string, start: number, end: number): AsyncIterable<Buffer> | Buffer[] {
    const bytes = this.sql.inlineBytes.get(id) as Buffer | undefined;
    if (bytes === undefined) return this.content.read(id, start, end);
    assert(end <= bytes.length, `inline content ${id} holds the bytes its block row says`);
    return [bytes.subarray(start, end)];
  }

  private pin(listId: number, change: 1 | -1): void {
    const count = (this.readers.get(listId) ?? 0) + change;
    if (count === 0) this.readers.delete(listId);
    else this.readers.set(listId, count);
  }

  async reclaimContent(nowMs: number, stagedBeforeMs: number, limit: number): Promise<number> {
    assert(Number.isSafeInteger(limit) && limit >= 1, 'a reclaim removes at least one piece');
    const beforeMs = nowMs - this.graceMs;
    const entriesMax = sweepEntriesPerLimit * limit;
    // Content a row names is left here, on the read connection; the writer checks the rest again.
    const found = [...(await this.content.sweep(beforeMs, entriesMax)), ...this.sweepInline(beforeMs, entriesMax)];
    const unreferenced = found.filter(
      (id) =>
        this.sql.referencedByBlock.get(id) === undefined &&
        this.sql.referencedByStaged.get(id) === undefined &&
        this.sql.referencedByPage.get(id) === undefined,
    );
    for (let i = 0; i < unreferenced.length; i += 500)
      await this.writer.noteUnreferenced(unreferenced.slice(i, i + 500));
    const step = await this.writer.reclaim(nowMs, stagedBeforeMs, this.graceMs, limit, [...this.readers.keys()]);
    await this.content.remove(step.contentIds);
    return (
      step.contentIds.length + step.inlineDropped + step.stagedDropped + step.deletedDropped + step.softDeletedDropped
    );
  }

  /** One step of the sweep over inline content, as over the files: ids written before `beforeMs`. */
  private sweepInline(beforeMs: number, entriesMax: number): string[] {
    const rows = this.sql.inlineAfter.all(this.inlineSweepAfter, entriesMax) as {
      content_id: string;
      written_ms: number;
    }[];
    // Round the table as the file sweep rounds the directories: from the start once at its end.
    this.inlineSweepAfter = rows.length < entriesMax ? '' : rows.at(-1)!.content_id;
    return rows.filter((row) => row.written_ms < beforeMs).map((row) => row.content_id);
  }

  /** Whether the content is still kept (tests). */
  async contentExists(ref: ContentRef): Promise<boolean> {
    return this.sql.inlineBytes.get(ref.id) !== undefined || this.content.exists(ref.id);
  }

  /** Closes this store's own read connection; the writer closes with the table store. */
  close(): void {
    if (this.ownsReader && this.reader.open) this.reader.close();
  }

  private version(account: string, key: BlobKey): (RecordRow & { list_id: number }) | undefined {
    const containerId = this.containerId(account, key.container);
    if (containerId === undefined) return undefined;
    const base = key.snapshot === '' ? 1 : 0;
    return this.sql.blob.get(containerId, key.name, base, key.snapshot) as
      (RecordRow & { list_id: number }) | undefined;
  }

  private containerId(account: string, name: string): number | undefined {
    return (this.sql.container.get(account, name) as { id: number } | undefined)?.id;
  }
}

interface ContainerRow {
  readonly name: string;
  readonly etag: string;
  readonly last_modified_ms: number;
  readonly state: string;
}

interface DeletedRow extends ContainerRow {
  readonly id: number;
  readonly deleted_ms: number;
  readonly expires_ms: number;
}

function containerRecord(row: ContainerRow): ContainerRecord {
  return { name: row.name, etag: row.etag, lastModifiedMs: row.last_modified_ms, state: row.state };
}
