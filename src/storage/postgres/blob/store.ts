// The Blob service's store on the PostgreSQL engine (tables: blob-schema.ts; layout and reasons:
// docs/blob-storage-postgres.md), over the table store's connection and pool: any number of
// Cerulean processes over one database serve the same containers, blobs and content. Content is
// chunked rows written and read as it streams (blob-content.ts); the writes of blob versions are
// transactions that lock the rows they compare ETags on (postgres/blob/writes.ts); unreferenced content
// goes a grace after its last reference (postgres/blob/reclaim.ts). Failures are answered as the table
// store's are (connection.ts: 503 ServerBusy for a database out of reach).
import assert from 'node:assert/strict';
import type pg from 'pg';
import type {
  TagQuery,
  TaggedBlob,
  BlobAndContent,
  Block,
  BlobKey,
  BlobRecord,
  BlobStore,
  BlockSummary,
  ContainerKeep,
  ContainerRecord,
  ContentChange,
  ContentRef,
  IfEtag,
  ListBlobsOptions,
  ListedBlob,
  RestoreOutcome,
  WriteOutcome,
} from '../../blob-store.js';
import { versionKeyPrefix } from '../../blob-store.js';
import { softDeletedKeyPrefix } from '../../blob-soft-delete.js';
import { clampRange } from '../../blob-rows.js';
import { ChunkBuffers, writeContent } from './content.js';
import { readSegments, type ContentSegment } from './content-read.js';
import { ContainerStatements } from './containers.js';
import { reclaimContent } from './reclaim.js';
import { named } from './statements.js';
import { ContentIds, namedContents, unwrittenAmong, unwrittenSql, unwrittenValues } from './unwritten.js';
import { deleteBlob, putBlob, snapshotBlob } from './writes.js';
import { findBlobsByTags } from './tags.js';
import { isPageRead, readExtents, readPages } from './pages.js';
import type { PostgresConnection } from '../connection.js';
import { isMissingTable } from '../failures.js';
import { schemaName as s } from '../schema.js';

export interface PostgresBlobOptions {
  /** Bytes per content chunk row (blob-content.ts chunkBytesDefault). */
  readonly chunkBytes: number;
  /** How long unreferenced content stays (postgres/blob/reclaim.ts contentGraceMsDefault). */
  readonly contentGraceMs: number;
  /** Whether readers start the grace of content they read again (blob-content.ts); not on a standby. */
  readonly readersHoldContent: boolean;
}

/** The blob version named by parameters $1 (account) to $4 (snapshot). */
const versionWhere = `c.account = $1 AND c.name = $2 AND b.name = $3 AND b.is_base = ($4 = '') AND b.snapshot = $4`;
const versionFrom = `${s}.blobs b JOIN ${s}.blob_containers c ON c.id = b.container_id`;
const blobColumns = 'b.name, b.snapshot, b.etag, b.last_modified_ms, b.size_bytes, b.state';

const contentExistsSql = `SELECT 1 FROM ${s}.blob_contents WHERE id = $1`;
const getBlobSql = `SELECT ${blobColumns} FROM ${versionFrom} WHERE ${versionWhere}`;
// getBlobSql with, if the version has at most $5 bytes, every chunk of its blocks in order. OFFSET 0
// keeps the subquery whole, so the size test gates it (a larger version's chunks are never looked up).
const getBlobAndContentSql = `WITH v AS (SELECT b.id, ${blobColumns} FROM ${versionFrom} WHERE ${versionWhere})
  SELECT v.name, v.snapshot, v.etag, v.last_modified_ms, v.size_bytes, v.state, d.data FROM v LEFT JOIN LATERAL (
    SELECT c.data, k.seq, c.seq AS chunk_seq
    FROM ${s}.blob_blocks k JOIN ${s}.blob_chunks c ON c.content_id = k.content_id
    WHERE k.blob_id = v.id AND v.size_bytes <= $5 AND k.size_bytes > 0 OFFSET 0
  ) d ON true
  ORDER BY d.seq, d.chunk_seq`;
// The blocks of [$6, $7) of the version whose ETag is $5 (none when it is another): from the last
// non-empty block starting at or before $6, by index, so a read touches only its blocks. If $8,
// also the range's bytes, a row per chunk they touch (`part`): a small read is one round trip,
// its bytes from the snapshot that found the version current.
const readBlocksSql = `WITH v AS (SELECT b.id, b.etag, b.size_bytes FROM ${versionFrom} WHERE ${versionWhere})
  SELECT v.etag, v.size_bytes, k.content_id, k.start_byte, k.size_bytes AS block_bytes, k.chunk_bytes, d.part
  FROM v
  LEFT JOIN LATERAL (
    SELECT k.content_id, k.start_byte, k.size_bytes, t.chunk_bytes, k.seq
    FROM ${s}.blob_blocks k JOIN ${s}.blob_contents t ON t.id = k.content_id
    WHERE k.blob_id = v.id AND v.etag = $5 AND k.size_bytes > 0 AND k.start_byte < $7
      AND k.start_byte >= coalesce((
        SELECT max(f.start_byte) FROM ${s}.blob_blocks f
        WHERE f.blob_id = v.id AND f.start_byte <= $6 AND f.size_bytes > 0
      ), 0)
  ) k ON true
  LEFT JOIN LATERAL (
    SELECT c.seq, substring(c.data FROM (greatest(r.lo, e.first) - e.first + 1)::integer
      FOR greatest(least(r.hi, e.first + k.chunk_bytes) - greatest(r.lo, e.first), 0)::integer) AS part
    FROM (SELECT greatest($6, k.start_byte) - k.start_byte AS lo,
      least($7, k.start_byte + k.size_bytes) - k.start_byte AS hi) r,
      ${s}.blob_chunks c, LATERAL (SELECT c.seq::bigint * k.chunk_bytes AS first) e
    WHERE $8 AND r.lo < r.hi AND c.content_id = k.content_id
      AND c.seq BETWEEN r.lo / k.chunk_bytes AND (r.hi - 1) / k.chunk_bytes OFFSET 0
  ) d ON true
  ORDER BY k.start_byte, k.seq, d.seq`;
const getBlocksSql = `SELECT 'committed' AS kind, k.seq::bigint AS seq, k.block_id, k.content_id, k.size_bytes
    FROM ${s}.blob_blocks k JOIN ${versionFrom} ON b.id = k.blob_id WHERE ${versionWhere}
  UNION ALL
  SELECT 'staged', t.seq, t.block_id, t.content_id, n.size_bytes
    FROM ${s}.blob_staged t JOIN ${s}.blob_contents n ON n.id = t.content_id
    JOIN ${s}.blob_containers c ON c.id = t.container_id
    WHERE c.account = $1 AND c.name = $2 AND t.name = $3 AND $4 = ''
  ORDER BY kind, seq`;
const stagedWhere = `${s}.blob_staged t JOIN ${s}.blob_containers c ON c.id = t.container_id
    WHERE c.account = $1 AND c.name = $2 AND t.name = $3`;
const blockSummarySql = `SELECT (SELECT count(*) FROM ${stagedWhere})::int AS staged_count,
  EXISTS (SELECT 1 FROM ${stagedWhere} AND t.block_id = $4) AS staged_has_id,
  (SELECT t.block_id FROM ${stagedWhere} LIMIT 1) AS sample_block_id`;
// Only complete content of the stated size; the re-staged block goes last in staging order.
// Unwritten content (postgres/blob/unwritten.ts) is written only if the container is there to stage it in.
const stageSql = (unwritten: number): string => `WITH ${unwrittenSql(unwritten, 7, containerThere)}
  n AS (${namedContents('ARRAY[$5::bigint]', unwritten)})
  INSERT INTO ${s}.blob_staged (container_id, name, block_id, content_id)
  SELECT c.id, $3, $4, n.id FROM ${s}.blob_containers c JOIN n ON n.size_bytes = $6
  WHERE c.account = $1 AND c.name = $2
  ON CONFLICT (container_id, name, block_id) DO UPDATE
  SET content_id = excluded.content_id, seq = excluded.seq, seen_ms = NULL`;
const containerThere = `EXISTS (SELECT 1 FROM ${s}.blob_containers WHERE account = $1 AND name = $2)`;
const listBlobsSql = `WITH c AS (SELECT id FROM ${s}.blob_containers WHERE account = $1 AND name = $2)
  SELECT * FROM ((
    SELECT b.name, b.snapshot, b.is_base, b.etag, b.last_modified_ms, b.size_bytes, b.state FROM ${s}.blobs b, c
    WHERE b.container_id = c.id AND b.name >= $3 AND ($4::text IS NULL OR b.name < $4) AND (b.is_base
      OR (b.snapshot < '${versionKeyPrefix}' AND $5)
      OR (b.snapshot >= '${versionKeyPrefix}' AND b.snapshot < '${softDeletedKeyPrefix}' AND $11)
      OR (b.snapshot >= '${softDeletedKeyPrefix}' AND $12))
      AND ($6::text IS NULL OR (b.name, b.is_base, b.snapshot) >= ($6, $7, $8))
    ORDER BY b.name, b.is_base, b.snapshot LIMIT $9
  ) UNION ALL (
    SELECT DISTINCT t.name, '', true, NULL::text, NULL::bigint, NULL::bigint, NULL::text FROM ${s}.blob_staged t, c
    WHERE $10 AND t.container_id = c.id AND t.name >= $3 AND ($4::text IS NULL OR t.name < $4)
      AND ($6::text IS NULL OR t.name >= $6)
      AND NOT EXISTS (SELECT 1 FROM ${s}.blobs b WHERE b.container_id = c.id AND b.name = t.name AND b.is_base)
    ORDER BY t.name LIMIT $9
  )) x ORDER BY name, is_base, snapshot LIMIT $9`;

/** A blob version's row; bigint columns arrive as text. */
interface BlobRow {
  readonly name: string;
  readonly snapshot: string;
  readonly etag: string;
  readonly last_modified_ms: string;
  readonly size_bytes: string;
  readonly state: string;
}

const blobRecord = (container: string, row: BlobRow): BlobRecord => ({
  container,
  name: row.name,
  snapshot: row.snapshot,
  etag: row.etag,
  lastModifiedMs: Number(row.last_modified_ms),
  sizeBytes: Number(row.size_bytes),
  state: row.state,
});

interface SummaryRow {
  readonly staged_count: number;
  readonly staged_has_id: boolean;
  readonly sample_block_id: string | null;
}

interface BlockRow {
  readonly kind: 'committed' | 'staged';
  readonly block_id: string;
  readonly content_id: string;
  readonly size_bytes: string;
}

const block = (row: BlockRow): Block => ({
  blockId: row.block_id,
  content: { id: row.content_id, sizeBytes: Number(row.size_bytes) },
});

/** What a write's transaction answers when content it names was reclaimed under it. */
const contentGone = 'contentGone';

export class PostgresBlobStore implements BlobStore {
  private readonly containers: ContainerStatements;
  private readonly chunkBuffers: ChunkBuffers;
  private readonly contentIds: ContentIds;

  constructor(
    private readonly connection: PostgresConnection,
    private readonly options: PostgresBlobOptions,
  ) {
    this.containers = new ContainerStatements(connection);
    this.chunkBuffers = new ChunkBuffers(options.chunkBytes);
    this.contentIds = new ContentIds(connection);
  }

  writeContent(source: AsyncIterable<Uint8Array>): Promise<ContentRef> {
    return writeContent(this.connection, source, this.chunkBuffers, this.contentIds);
  }

  createContainer(account: string, record: ContainerRecord): Promise<boolean> {
    return this.containers.create(account, record);
  }

  getContainer(account: string, name: string): Promise<ContainerRecord | undefined> {
    return this.containers.get(account, name);
  }

  listContainers(account: string, prefix: string, fromName: string | undefined, limit: number) {
    return this.containers.list(account, prefix, fromName, limit);
  }

  updateContainer(account: string, record: ContainerRecord, ifEtag: IfEtag): Promise<WriteOutcome> {
    return this.containers.update(account, record, ifEtag);
  }

  deleteContainer(account: string, name: string, ifEtag: IfEtag, keep?: ContainerKeep): Promise<WriteOutcome> {
    return this.containers.delete(account, name, ifEtag, keep);
  }

  listDeletedContainers(...args: Parameters<BlobStore['listDeletedContainers']>) {
    return this.containers.listDeleted(...args);
  }

  restoreContainer(account: string, version: string, record: ContainerRecord): Promise<RestoreOutcome> {
    return this.containers.restore(account, version, record);
  }

  async getBlob(account: string, key: BlobKey): Promise<BlobRecord | undefined> {
    const values = [account, key.container, key.name, key.snapshot];
    const { rows } = await this.connection.query<BlobRow>('read', named(getBlobSql, values));
    return rows[0] && blobRecord(key.container, rows[0]);
  }

  async getBlobAndContent(account: string, key: BlobKey, contentBytesMax: number): Promise<BlobAndContent | undefined> {
    const values = [account, key.container, key.name, key.snapshot, contentBytesMax];
    const { rows } = await this.connection.query<BlobRow & { data: Buffer | null }>(
      'read',
      named(getBlobAndContentSql, values),
    );
    if (rows[0] === undefined) return undefined;
    const record = blobRecord(key.container, rows[0]);
    if (record.sizeBytes > contentBytesMax) return { record, bytes: undefined };
    const bytes = Buffer.concat(rows.flatMap((row) => (row.data === null ? [] : [row.data])));
    // No block at all: a page blob, whose bytes are its extents' (readContent reads them).
    if (bytes.length === 0 && record.sizeBytes > 0) return { record, bytes: undefined };
    assert.equal(bytes.length, record.sizeBytes, 'a version has every byte of its size');
    return { record, bytes };
  }

  async listBlobs(account: string, container: string, options: ListBlobsOptions): Promise<ListedBlob[]> {
    const { prefix, from, limit } = options;
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    // The prefix's range ends before the prefix followed by the largest character.
    const values = [
      account,
      container,
      prefix,
      prefix === '' ? null : `${prefix}\u{10FFFF}`,
      options.snapshots,
      from?.name ?? null,
      from === undefined ? false : from.snapshot === '',
      from?.snapshot ?? '',
      limit,
      options.uncommitted,
      options.versions === true,
      options.deleted === true,
    ];
    const { rows } = await this.connection.query<BlobRow | { name: string; etag: null }>(
      'read',
      named(listBlobsSql, values),
    );
    return rows.map((row): ListedBlob =>
      row.etag === null
        ? { kind: 'uncommitted', name: row.name }
        : { kind: 'blob', record: blobRecord(container, row as BlobRow) },
    );
  }

  findBlobsByTags(account: string, query: TagQuery): Promise<TaggedBlob[]> {
    return findBlobsByTags(this.connection, s, account, query);
  }

  putBlob(
    account: string,
    record: BlobRecord,
    content: ContentChange,
    ifEtag: IfEtag,
    keepAs?: BlobRecord,
  ): Promise<WriteOutcome> {
    const { chunkBytes } = this.options;
    return this.write((client) => putBlob(client, account, record, content, ifEtag, chunkBytes, keepAs));
  }

  snapshotBlob(account: string, record: BlobRecord, ifEtag: string): Promise<WriteOutcome> {
    return this.write((client) => snapshotBlob(client, account, record, ifEtag));
  }

  deleteBlob(
    account: string,
    key: BlobKey,
    parts: { readonly base: boolean; readonly snapshots: boolean },
    ifEtag: IfEtag,
    keepAs?: BlobRecord,
    keptPrefix?: string,
  ): Promise<WriteOutcome> {
    return this.write((client) => deleteBlob(client, account, key, parts, ifEtag, keepAs, keptPrefix));
  }

  async stageBlock(account: string, container: string, name: string, staged: Block): Promise<WriteOutcome> {
    const { id, sizeBytes } = staged.content;
    const unwritten = unwrittenAmong([staged.content]);
    const values: unknown[] = [account, container, name, staged.blockId, id, sizeBytes];
    values.push(...unwrittenValues(unwritten, this.options.chunkBytes));
    try {
      const { rowCount } = await this.connection.rawQuery('write', named(stageSql(unwritten.length), values));
      if (rowCount === 1) return 'ok';
    } catch (error) {
      // The container was deleted between finding it and inserting (its foreign key).
      if (isMissingTable(error)) return 'containerNotFound';
      throw this.connection.failure(error);
    }
    assert((await this.getContainer(account, container)) === undefined, `content ${id} is not complete content`);
    return 'containerNotFound';
  }

  async blockSummary(account: string, container: string, name: string, blockId: string): Promise<BlockSummary> {
    const values = [account, container, name, blockId];
    const { rows } = await this.connection.query<SummaryRow>('read', named(blockSummarySql, values));
    const row = rows[0]!;
    return {
      stagedCount: row.staged_count,
      stagedHasId: row.staged_has_id,
      sampleBlockId: row.sample_block_id ?? undefined,
    };
  }

  async getBlocks(account: string, key: BlobKey): Promise<{ readonly committed: Block[]; readonly staged: Block[] }> {
    const values = [account, key.container, key.name, key.snapshot];
    const { rows } = await this.connection.query<BlockRow>('read', named(getBlocksSql, values));
    return {
      committed: rows.filter((row) => row.kind === 'committed').map(block),
      staged: rows.filter((row) => row.kind === 'staged').map(block),
    };
  }

  // Typed by the contract, which names its parameters (blob-store.ts).
  readonly readContent: BlobStore['readContent'] = async (account, key, etag, startByte, endByteExclusive) => {
    const [start, end] = clampRange(startByte, endByteExclusive, Number.MAX_SAFE_INTEGER);
    // Within a chunk, so that a read of many chunks (a small chunk size) streams as any other.
    const inline = end - start <= Math.min(inlineReadBytesMax, this.options.chunkBytes);
    const values = [account, key.container, key.name, key.snapshot, etag, start, end, inline];
    const { rows } = await this.connection.query<ReadRow>('read', named(readBlocksSql, values));
    if (rows[0] === undefined || rows[0].etag !== etag) return 'changed';
    const [from, to] = clampRange(start, end, Number(rows[0].size_bytes));
    if (
      isPageRead(
        rows.map((row) => row.content_id),
        from,
        to,
      )
    ) {
      return readPages(this.connection, account, key, etag, from, to, this.options.readersHoldContent);
    }
    if (inline) return inlineBytes(rows, to - from);
    return readSegments(this.connection, segmentsOf(rows, from, to), this.options.readersHoldContent);
  };

  // Typed by the contract, which names its parameters (page-store.ts).
  readonly pageExtents: BlobStore['pageExtents'] = async (account, key, etag, fromByte, toByte, limit) => {
    const extents = await readExtents(this.connection, account, key, etag, fromByte, toByte, limit);
    if (extents === 'changed') return extents;
    return extents.map(({ startByte, endByteExclusive, contentId, contentOffsetBytes }) => ({
      startByte,
      endByteExclusive,
      contentId,
      contentOffsetBytes,
    }));
  };

  /** Whether the content is still kept (tests see what reclaimContent did). */
  async contentExists(ref: ContentRef): Promise<boolean> {
    const { rowCount } = await this.connection.query('read', named(contentExistsSql, [ref.id]));
    return rowCount === 1;
  }

  reclaimContent(nowMs: number, stagedBeforeMs: number, limit: number): Promise<number> {
    return reclaimContent(this.connection, this.options.contentGraceMs, nowMs, stagedBeforeMs, limit);
  }

  /** Nothing of its own to close: the connection is the table store's, closed with it. */
  close(): void {}

  /** A write's transaction, kept when it answers 'ok'. */
  private async write(body: (client: pg.PoolClient) => Promise<WriteOutcome>): Promise<WriteOutcome> {
    const outcome = await this.connection.transaction<WriteOutcome | typeof contentGone>(
      body,
      (result) => result === 'ok',
      // A foreign key violation: the containers a write names are locked, so content it names.
      contentGone,
    );
    assert(outcome !== contentGone, 'content a write named was reclaimed before it (a request longer than the grace)');
    return outcome;
  }
}

/**
 * Reads of at most this many bytes come with the statement that finds their blocks (as bytea,
 * which the driver hands over as hex text: cheap at this size), not in statements of their own.
 */
const inlineReadBytesMax = 64 * 1024;

/** A row of readBlocksSql; block columns null when the version has no block in the range. */
interface ReadRow {
  readonly etag: string;
  readonly size_bytes: string;
  readonly content_id: string | null;
  readonly start_byte: string | null;
  readonly block_bytes: string | null;
  readonly chunk_bytes: number | null;
  /** The range's bytes in a chunk, in order (an inline read only). */
  readonly part: Buffer | null;
}

/** An inline read's bytes (readBlocksSql's parts), `lengthBytes` of them. */
async function* inlineBytes(rows: readonly ReadRow[], lengthBytes: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.concat(rows.flatMap((row) => (row.part === null ? [] : [row.part])));
  assert.equal(bytes.length, lengthBytes, 'a small read has every byte of its range');
  if (lengthBytes > 0) yield bytes;
}

/** The parts of the blocks' content in [startByte, endByte). */
function segmentsOf(rows: readonly ReadRow[], startByte: number, endByte: number): ContentSegment[] {
  const segments: ContentSegment[] = [];
  for (const row of rows) {
    if (row.content_id === null) continue;
    const blockStart = Number(row.start_byte);
    const from = Math.max(startByte, blockStart);
    const to = Math.min(endByte, blockStart + Number(row.block_bytes));
    if (to <= from) continue;
    segments.push({
      contentId: row.content_id,
      chunkBytes: row.chunk_bytes!,
      offsetBytes: from - blockStart,
      lengthBytes: to - from,
    });
  }
  return segments;
}
