// The Blob service's writes in the SQLite engine: jobs of the one SqliteWriter (writer.ts), in its
// group commits, durable before they answer. Each job decides its compare-and-swap on the current
// row and then writes, so it never needs its savepoint rolled back. Content is already durable in
// its file (blob-content.ts) when a job references it; small content (sqlite/blob/inline.ts) comes with
// the job that first names it (ContentRef.unwritten), which writes its row in the same commit.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import type {
  Block,
  BlobKey,
  BlobRecord,
  BlobStore,
  ContainerKeep,
  ContainerRecord,
  ContentChange,
  ContentRef,
  IfEtag,
  RestoreOutcome,
  WriteOutcome,
} from '../../blob-store.js';
import { versionKeyPrefix } from '../../blob-store.js';
import { containerIdOfVersion } from '../../container-soft-delete.js';
import { softDeletedExpiredBound, softDeletedKeyPrefix } from '../../blob-soft-delete.js';
import {
  assertBlock,
  assertCommittedSize,
  assertContentId,
  blocksSize,
  etagOutcome,
  unwrittenBytes,
} from '../../blob-rows.js';
import type { PageChange } from '../../page-store.js';
import { PageWrites, pagesEndByte } from './pages.js';
import type { RunJob } from '../queue-writer.js';
import { boundLimit } from '../schema.js';
import { SqliteTagRows } from './tags.js';

/** What one reclaim job did: the content files to remove now (no row names them any more). */
export interface ReclaimStep {
  readonly contentIds: string[];
  /** Inline content rows the job deleted (no row names them any more). */
  readonly inlineDropped: number;
  readonly stagedDropped: number;
  readonly listsDropped: number;
  /** Blobs and staged blocks of deleted containers removed, and deleted containers left empty. */
  readonly deletedDropped: number;
  /** Soft-deleted rows purged once expired. */
  readonly softDeletedDropped: number;
}

/** The store's writes the writer does as they are (blob-store.ts passes them on). */
export const blobStoreWrites = [
  'createContainer',
  'updateContainer',
  'deleteContainer',
  'restoreContainer',
  'putBlob',
  'snapshotBlob',
  'deleteBlob',
  'stageBlock',
] as const satisfies readonly (keyof BlobStore)[];

/** The blob jobs, as the store (blob-store.ts) calls them on the writer, here or across threads. */
export interface BlobWriterApi extends Pick<BlobStore, (typeof blobStoreWrites)[number]> {
  /** Content files the directory sweep found: those no row references become garbage (unstamped). */
  noteUnreferenced(contentIds: readonly string[]): Promise<void>;
  /**
   * Removes up to `limit` blobs and staged blocks of deleted containers (their lists die, their
   * staged content is garbage), stamps what waits for a grace, then drops staged blocks stamped
   * before `stagedBeforeMs`, dead lists stamped a grace ago (but none in `pinnedLists`, which
   * readers stream) and garbage stamped a grace ago; at most `limit` of each.
   */
  reclaim(
    nowMs: number,
    stagedBeforeMs: number,
    graceMs: number,
    limit: number,
    pinnedLists: readonly number[],
  ): Promise<ReclaimStep>;
}

/** The method names, for the writer thread's message handlers (writer-worker.ts, writer-client.ts). */
export const blobWriterMethods = [
  ...blobStoreWrites,
  'noteUnreferenced',
  'reclaim',
] as const satisfies readonly (keyof BlobWriterApi)[];

/** The writer thread's handler name of a blob job. */
export function blobCallName(method: string): string {
  return `blob.${method}`;
}

type Statement = Database.Statement<unknown[], unknown>;
/** Arguments the rows show wrong (a bug of the caller): the caller's call fails with this. */
type Misuse = { readonly misuse: string };
const misuse = (message: string): Misuse => ({ misuse: message });

/**
 * Block rows one reclaim call drops at most (beside the lists' garbage rows): a dead list of 50,000
 * blocks goes over a few calls, so no single job holds the writer for long.
 */
const reclaimBlockRowsMax = 10_000;

interface DroppedRow {
  readonly container_id: number;
  readonly name: string;
  readonly snapshot: string;
  readonly list_id: number;
}

interface Head {
  readonly etag: string;
  readonly size_bytes: number;
  readonly list_id: number;
}

const sql = {
  containerId: 'SELECT id FROM blob_containers WHERE account = ? AND name = ?',
  containerEtag: 'SELECT id, etag FROM blob_containers WHERE account = ? AND name = ?',
  nextContainerId:
    'SELECT max(coalesce((SELECT max(id) FROM blob_containers), 0), ' +
    'coalesce((SELECT max(id) FROM blob_containers_deleted), 0), ' +
    'coalesce((SELECT max(id) FROM blob_containers_soft_deleted), 0)) + 1',
  insertContainer:
    'INSERT INTO blob_containers (account, name, id, etag, last_modified_ms, state) VALUES (?, ?, ?, ?, ?, ?)',
  updateContainer: 'UPDATE blob_containers SET etag = ?, last_modified_ms = ?, state = ? WHERE id = ?',
  deleteContainer: 'DELETE FROM blob_containers WHERE id = ?',
  noteDeletedContainer: 'INSERT INTO blob_containers_deleted (id) VALUES (?)',
  keepContainer:
    'INSERT INTO blob_containers_soft_deleted (id, account, name, etag, last_modified_ms, state, deleted_ms, expires_ms) ' +
    'SELECT id, account, name, etag, last_modified_ms, state, ?, ? FROM blob_containers WHERE id = ?',
  keptContainer: 'SELECT id FROM blob_containers_soft_deleted WHERE id = ? AND account = ? AND name = ?',
  forgetKeptContainer: 'DELETE FROM blob_containers_soft_deleted WHERE id = ?',
  expiredContainers: `SELECT id FROM blob_containers_soft_deleted WHERE expires_ms < ? ORDER BY expires_ms ${boundLimit()}`,
  deletedContainers: `SELECT id FROM blob_containers_deleted ORDER BY id ${boundLimit()}`,
  blobsOfContainer: `SELECT name, snapshot, list_id FROM blobs WHERE container_id = ? ${boundLimit()}`,
  stagedOfContainer: `SELECT seq, content_id FROM blob_staged WHERE container_id = ? ${boundLimit()}`,
  forgetDeletedContainer: 'DELETE FROM blob_containers_deleted WHERE id = ?',
  head: 'SELECT etag, size_bytes, list_id FROM blobs WHERE container_id = ? AND name = ? AND base = ? AND snapshot = ?',
  upsertBlob:
    'INSERT INTO blobs (container_id, name, base, snapshot, etag, last_modified_ms, size_bytes, state, list_id) ' +
    'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (container_id, name, base, snapshot) DO UPDATE SET ' +
    'etag = excluded.etag, last_modified_ms = excluded.last_modified_ms, size_bytes = excluded.size_bytes, ' +
    'state = excluded.state, list_id = excluded.list_id',
  deleteVersion: 'DELETE FROM blobs WHERE container_id = ? AND name = ? AND base = ? AND snapshot = ?',
  // A name's snapshots, not its previous versions (blob-store.ts, versionKeyPrefix).
  snapshotLists: `SELECT list_id FROM blobs WHERE container_id = ? AND name = ? AND base = 0 AND snapshot < '${versionKeyPrefix}'`,
  deleteSnapshots: `DELETE FROM blobs WHERE container_id = ? AND name = ? AND base = 0 AND snapshot < '${versionKeyPrefix}'`,
  // Soft delete (blob-soft-delete.ts): a row keeps its block list under its new key.
  softDeleteVersion:
    'UPDATE blobs SET base = 0, snapshot = ? || snapshot WHERE container_id = ? AND name = ? AND base = ? AND snapshot = ?',
  softDeleteSnapshots:
    'UPDATE blobs SET snapshot = ? || snapshot WHERE container_id = ? AND name = ? AND base = 0 ' +
    `AND snapshot < '${versionKeyPrefix}'`,
  // The term of blobs_soft_deleted_keys's WHERE, as written there, so that the index serves it.
  expiredSoftDeleted:
    `SELECT container_id, name, snapshot, list_id FROM blobs WHERE snapshot >= '${softDeletedKeyPrefix}' ` +
    `AND snapshot < ? ORDER BY snapshot ${boundLimit()}`,
  newList: 'INSERT INTO blob_lists (dead) VALUES (0)',
  killList: 'UPDATE blob_lists SET dead = 1 WHERE id = ?',
  insertBlock:
    'INSERT INTO blob_blocks (list_id, ordinal, block_id, content_id, content_size, end_byte) VALUES (?, ?, ?, ?, ?, ?)',
  nextOrdinal: 'SELECT coalesce(max(ordinal), -1) + 1 FROM blob_blocks WHERE list_id = ?',
  copyList:
    'INSERT INTO blob_blocks (list_id, ordinal, block_id, content_id, content_size, end_byte) ' +
    'SELECT ?, ordinal, block_id, content_id, content_size, end_byte FROM blob_blocks WHERE list_id = ?',
  stagedOfNameToGarbage:
    'INSERT INTO blob_garbage (content_id, stamp_ms) SELECT content_id, NULL FROM blob_staged ' +
    'WHERE container_id = ? AND name = ? ON CONFLICT (content_id) DO UPDATE SET stamp_ms = NULL',
  deleteStagedOfName: 'DELETE FROM blob_staged WHERE container_id = ? AND name = ?',
  stagedById: 'SELECT seq, content_id FROM blob_staged WHERE container_id = ? AND name = ? AND block_id = ?',
  deleteStagedBySeq: 'DELETE FROM blob_staged WHERE seq = ?',
  insertStaged:
    'INSERT INTO blob_staged (container_id, name, block_id, content_id, content_size, stamp_ms) ' +
    'VALUES (?, ?, ?, ?, ?, NULL)',
  garbage:
    'INSERT INTO blob_garbage (content_id, stamp_ms) VALUES (?, NULL) ON CONFLICT (content_id) DO UPDATE SET stamp_ms = NULL',
  garbageIfNew: 'INSERT OR IGNORE INTO blob_garbage (content_id, stamp_ms) VALUES (?, NULL)',
  referencedByBlock: 'SELECT 1 FROM blob_blocks WHERE content_id = ? LIMIT 1',
  referencedByStaged: 'SELECT 1 FROM blob_staged WHERE content_id = ? LIMIT 1',
  stampLists: 'UPDATE blob_lists SET stamp_ms = ? WHERE dead = 1 AND stamp_ms IS NULL',
  stampStaged: 'UPDATE blob_staged SET stamp_ms = ? WHERE stamp_ms IS NULL',
  stampGarbage: 'UPDATE blob_garbage SET stamp_ms = ? WHERE stamp_ms IS NULL',
  oldStaged: `SELECT seq, content_id FROM blob_staged WHERE stamp_ms < ? ORDER BY stamp_ms ${boundLimit()}`,
  oldLists: `SELECT id FROM blob_lists WHERE dead = 1 AND stamp_ms <= ? ORDER BY stamp_ms ${boundLimit()}`,
  tailStart:
    'SELECT min(ordinal) AS first, count(*) AS rows FROM ' +
    `(SELECT ordinal FROM blob_blocks WHERE list_id = ? ORDER BY ordinal DESC ${boundLimit()})`,
  tailToGarbage:
    'INSERT INTO blob_garbage (content_id, stamp_ms) SELECT content_id, NULL FROM blob_blocks ' +
    'WHERE list_id = ? AND ordinal >= ? ON CONFLICT (content_id) DO UPDATE SET stamp_ms = NULL',
  deleteTail: 'DELETE FROM blob_blocks WHERE list_id = ? AND ordinal >= ?',
  deleteList: 'DELETE FROM blob_lists WHERE id = ?',
  oldGarbage: `SELECT content_id FROM blob_garbage WHERE stamp_ms <= ? ORDER BY stamp_ms ${boundLimit()}`,
  deleteGarbage: 'DELETE FROM blob_garbage WHERE content_id = ?',
  insertInline: 'INSERT OR IGNORE INTO blob_inline (content_id, written_ms, bytes) VALUES (?, ?, ?)',
  deleteInline: 'DELETE FROM blob_inline WHERE content_id = ?',
} as const;

type Sql = Record<keyof typeof sql, Statement>;

export class SqliteBlobWriter implements BlobWriterApi {
  private readonly sql: Sql;
  private readonly tags: SqliteTagRows;
  private readonly pages: PageWrites;

  constructor(
    db: Database.Database,
    private readonly run: RunJob,
  ) {
    this.tags = new SqliteTagRows(db);
    this.sql = Object.fromEntries(Object.entries(sql).map(([key, text]) => [key, db.prepare(text)])) as Sql;
    this.pages = new PageWrites(db);
    for (const key of ['containerId', 'nextContainerId', 'nextOrdinal', 'referencedByBlock', 'referencedByStaged'])
      this.sql[key as keyof Sql].pluck();
  }

  createContainer(account: string, record: ContainerRecord): Promise<boolean> {
    return this.run(() => {
      if (this.containerId(account, record.name) !== undefined) return false;
      const { name, etag, lastModifiedMs, state } = record;
      this.sql.insertContainer.run(account, name, this.sql.nextContainerId.get(), etag, lastModifiedMs, state);
      return true;
    });
  }

  updateContainer(account: string, record: ContainerRecord, ifEtag: IfEtag): Promise<WriteOutcome> {
    return this.run(() => {
      const current = this.sql.containerEtag.get(account, record.name) as { id: number; etag: string } | undefined;
      if (current === undefined) return 'containerNotFound';
      const outcome = etagOutcome(current.etag, ifEtag);
      if (outcome !== 'ok') return outcome;
      this.sql.updateContainer.run(record.etag, record.lastModifiedMs, record.state, current.id);
      return 'ok';
    });
  }

  deleteContainer(account: string, name: string, ifEtag: IfEtag, keep?: ContainerKeep): Promise<WriteOutcome> {
    return this.run(() => {
      const current = this.sql.containerEtag.get(account, name) as { id: number; etag: string } | undefined;
      if (current === undefined) return 'containerNotFound';
      const outcome = etagOutcome(current.etag, ifEtag);
      if (outcome !== 'ok') return outcome;
      // Two rows, however many blobs it holds: no lookup by name finds it now, and reclaim removes
      // its blobs and staged blocks later, a batch a job (reclaimDeletedContainers), or, kept
      // (soft delete), once it expired.
      if (keep === undefined) this.sql.noteDeletedContainer.run(current.id);
      else this.sql.keepContainer.run(keep.deletedMs, keep.expiresMs, current.id);
      this.sql.deleteContainer.run(current.id);
      return 'ok';
    });
  }

  restoreContainer(account: string, version: string, record: ContainerRecord): Promise<RestoreOutcome> {
    return this.run(() => {
      const id = containerIdOfVersion(version);
      if (id === undefined || this.sql.keptContainer.get(id, account, record.name) === undefined) return 'notFound';
      if (this.containerId(account, record.name) !== undefined) return 'containerExists';
      this.sql.forgetKeptContainer.run(id);
      const { name, etag, lastModifiedMs, state } = record;
      this.sql.insertContainer.run(account, name, id, etag, lastModifiedMs, state);
      return 'ok';
    });
  }

  async putBlob(
    account: string,
    record: BlobRecord,
    content: ContentChange,
    ifEtag: IfEtag,
    keepAs?: BlobRecord,
  ): Promise<WriteOutcome> {
    assert(record.snapshot === '' || content.kind === 'keep', 'putBlob changes a snapshot only as its record');
    assert(keepAs === undefined || record.snapshot === '', 'only a base blob is kept as a version');
    assert(record.snapshot === '' || record.indexTags === undefined, 'a snapshot has no indexed tags');
    // Checked before the job where it can be: a job that throws fails its whole group (writer.ts).
    if (content.kind === 'replace') assertCommittedSize(record, blocksSize(content.blocks));
    if (content.kind === 'append') assertBlock(content.block);
    if (content.kind === 'pages' && content.change.kind === 'write') assertContentId(content.change.content.id);
    return this.runChecked(() => {
      const containerId = this.containerId(account, record.container);
      if (containerId === undefined) return 'containerNotFound';
      const current = this.head(containerId, record.name, record.snapshot);
      const outcome = etagOutcome(current?.etag, ifEtag);
      if (outcome !== 'ok') return outcome;
      if (current === undefined && content.kind !== 'replace' && !createsPages(content)) return 'blobNotFound';
      const sizeBytes =
        content.kind === 'keep'
          ? current!.size_bytes
          : content.kind === 'append'
            ? current!.size_bytes + content.block.content.sizeBytes
            : content.kind === 'pages' && !resizesPages(content.change)
              ? current!.size_bytes
              : record.sizeBytes;
      if (record.sizeBytes !== sizeBytes) return misuse(`blob ${record.name}: the committed size is ${sizeBytes}`);
      const listId =
        content.kind === 'pages'
          ? this.changePages(containerId, record, current, content.change)
          : this.changeContent(containerId, record, current, content);
      if (typeof listId !== 'number') return listId;
      // After the change, which can still refuse (a page blob copy's source changed): this job has
      // no savepoint to undo a kept version with. The old list's rows are still there (marked dead).
      if (keepAs !== undefined) {
        const kept = this.keep(containerId, current, keepAs);
        if (kept !== undefined) return kept;
      }
      this.writeRecord(containerId, record, listId);
      if (record.indexTags !== undefined) {
        this.tags.replace(account, containerId, record.container, record.name, record.indexTags);
      }
      return 'ok';
    });
  }

  /**
   * Runs a job that may find the caller's arguments inconsistent with the rows (a Misuse): that
   * caller's call fails, before the job wrote anything, and the other jobs of its group go on.
   */
  private async runChecked(job: () => WriteOutcome | Misuse): Promise<WriteOutcome> {
    const result = await this.run(job);
    if (typeof result === 'string') return result;
    throw new assert.AssertionError({ message: result.misuse });
  }

  /** Applies `content` to the base blob's blocks (its size checked already); its list id after. */
  private changeContent(containerId: number, record: BlobRecord, current: Head | undefined, content: ContentChange) {
    switch (content.kind) {
      case 'keep':
        return current!.list_id;
      case 'append': {
        const listId = current!.list_id;
        const ordinal = this.sql.nextOrdinal.get(listId) as number;
        const { blockId, content: ref } = content.block;
        this.writeUnwritten(ref);
        this.sql.insertBlock.run(listId, ordinal, blockId, ref.id, ref.sizeBytes, record.sizeBytes);
        return listId;
      }
      case 'replace': {
        if (current !== undefined) this.sql.killList.run(current.list_id);
        const listId = this.newList();
        let end = 0;
        content.blocks.forEach(({ blockId, content: ref }, ordinal) => {
          end += ref.sizeBytes;
          this.writeUnwritten(ref);
          this.sql.insertBlock.run(listId, ordinal, blockId, ref.id, ref.sizeBytes, end);
        });
        if (content.keepStaged !== true) this.dropStaged(containerId, record.name);
        return listId;
      }
      case 'pages':
        assert.fail('page changes are changePages');
    }
  }

  /**
   * Applies a page change (page-store.ts) to the base blob (its size checked already); its list id
   * after, or the outcome that ends the job (a copy's source changed or gone).
   */
  private changePages(
    containerId: number,
    record: BlobRecord,
    current: Head | undefined,
    change: PageChange,
  ): number | WriteOutcome | Misuse {
    switch (change.kind) {
      case 'write': {
        const end = change.startByte + change.content.sizeBytes;
        if (end > record.sizeBytes) return misuse(`blob ${record.name}: pages past its size`);
        this.writeUnwritten(change.content);
        this.pages.write(current!.list_id, change.startByte, change.content.sizeBytes, change.content.id);
        return current!.list_id;
      }
      case 'clear':
        if (change.range.endByteExclusive > record.sizeBytes) return misuse(`blob ${record.name}: pages past its size`);
        this.pages.clear(current!.list_id, change.range);
        return current!.list_id;
      case 'resize':
        this.pages.clear(current!.list_id, { startByte: record.sizeBytes, endByteExclusive: pagesEndByte });
        return current!.list_id;
      case 'create':
      case 'copy': {
        let source: Head | undefined;
        if (change.kind === 'copy') {
          const sourceContainer = this.containerId(change.sourceAccount, change.source.container);
          source =
            sourceContainer === undefined
              ? undefined
              : this.head(sourceContainer, change.source.name, change.source.snapshot);
          if (source === undefined || source.etag !== change.sourceEtag) return 'etagMismatch';
          if (source.size_bytes !== record.sizeBytes) return misuse(`blob ${record.name}: the source's size differs`);
        }
        if (current !== undefined) this.sql.killList.run(current.list_id);
        const listId = this.newList();
        if (source !== undefined) this.pages.copy(source.list_id, listId);
        this.dropStaged(containerId, record.name);
        return listId;
      }
    }
  }

  async snapshotBlob(account: string, record: BlobRecord, ifEtag: string): Promise<WriteOutcome> {
    assert.notEqual(record.snapshot, '', 'a snapshot has its timestamp');
    return this.runChecked(() => {
      const containerId = this.containerId(account, record.container);
      if (containerId === undefined) return 'containerNotFound';
      const base = this.head(containerId, record.name, '');
      const outcome = etagOutcome(base?.etag, ifEtag);
      if (outcome !== 'ok') return outcome;
      return this.keep(containerId, base, record) ?? 'ok';
    });
  }

  /**
   * Writes `record` (a snapshot, a previous version, or a soft-deleted row restored: a key not taken)
   * with the committed blocks `base` has now: a Misuse when there is no base, its size differs or
   * the key is taken.
   */
  private keep(containerId: number, base: Head | undefined, record: BlobRecord): Misuse | undefined {
    if (base === undefined) return misuse(`blob ${record.name}: there is no base blob to keep`);
    if (record.sizeBytes !== base.size_bytes) return misuse(`blob ${record.name}: the committed size differs`);
    if (this.head(containerId, record.name, record.snapshot) !== undefined)
      return misuse(`blob ${record.name}: ${record.snapshot} exists already`);
    // The rows are copied (the list of the base may grow by appends); the content is shared.
    const listId = this.newList();
    this.sql.copyList.run(listId, base.list_id);
    this.pages.copy(base.list_id, listId);
    this.writeRecord(containerId, record, listId);
    return undefined;
  }

  deleteBlob(
    account: string,
    key: BlobKey,
    parts: { readonly base: boolean; readonly snapshots: boolean },
    ifEtag: IfEtag,
    keepAs?: BlobRecord,
    keptPrefix?: string,
  ): Promise<WriteOutcome> {
    assert(keepAs === undefined || key.snapshot !== '' || parts.base, 'a row deleted is kept');
    assert(keepAs === undefined || keptPrefix === undefined, 'a row is kept once');
    return this.runChecked(() => {
      const containerId = this.containerId(account, key.container);
      if (containerId === undefined) return 'containerNotFound';
      const current = this.head(containerId, key.name, key.snapshot);
      if (current === undefined) {
        const stagedOnly = key.snapshot === '' && parts.base && ifEtag === null;
        return stagedOnly && this.dropStaged(containerId, key.name) > 0 ? 'ok' : 'blobNotFound';
      }
      const outcome = etagOutcome(current.etag, ifEtag);
      if (outcome !== 'ok') return outcome;
      // A row restored as the base blob finds one written meanwhile: as a condition that failed.
      if (keepAs?.snapshot === '' && this.head(containerId, key.name, '') !== undefined) return 'etagMismatch';
      const kept = keepAs === undefined ? undefined : this.keep(containerId, current, keepAs);
      if (kept !== undefined) return kept;
      // A row restored as the base blob is indexed again by its tags (blob-store.ts, index tags).
      const tags = keepAs?.snapshot === '' ? keepAs.indexTags : undefined;
      if (tags !== undefined) this.tags.replace(account, containerId, key.container, key.name, tags);
      if (keptPrefix !== undefined) {
        this.softDelete(containerId, key, parts, keptPrefix);
        return 'ok';
      }
      if (key.snapshot !== '' || parts.base) this.deleteVersion(containerId, key.name, key.snapshot, current.list_id);
      if (key.snapshot === '' && parts.base) this.dropStaged(containerId, key.name);
      if (key.snapshot === '' && parts.snapshots) {
        for (const listId of this.sql.snapshotLists.pluck().all(containerId, key.name) as number[])
          this.sql.killList.run(listId);
        this.sql.deleteSnapshots.run(containerId, key.name);
      }
      return 'ok';
    });
  }

  async stageBlock(account: string, container: string, name: string, block: Block): Promise<WriteOutcome> {
    assertBlock(block);
    return this.run(() => {
      const containerId = this.containerId(account, container);
      if (containerId === undefined) return 'containerNotFound';
      const previous = this.sql.stagedById.get(containerId, name, block.blockId) as
        { seq: number; content_id: string } | undefined;
      if (previous !== undefined) {
        this.sql.deleteStagedBySeq.run(previous.seq);
        this.sql.garbage.run(previous.content_id);
      }
      this.writeUnwritten(block.content);
      this.sql.insertStaged.run(containerId, name, block.blockId, block.content.id, block.content.sizeBytes);
      return 'ok';
    });
  }

  /** Writes the row of content that came not yet written (ContentRef.unwritten), in the calling job. */
  private writeUnwritten(ref: ContentRef): void {
    if (ref.unwritten === undefined) return;
    assertContentId(ref.id);
    // A ref named again (the same content in a second write) finds its row there already.
    this.sql.insertInline.run(ref.id, ref.unwritten.writtenMs, unwrittenBytes(ref));
  }

  noteUnreferenced(contentIds: readonly string[]): Promise<void> {
    return this.run(() => {
      for (const id of contentIds) if (!this.referenced(id)) this.sql.garbageIfNew.run(id);
    });
  }

  reclaim(
    nowMs: number,
    stagedBeforeMs: number,
    graceMs: number,
    limit: number,
    pinnedLists: readonly number[],
  ): Promise<ReclaimStep> {
    assert(Number.isSafeInteger(limit) && limit >= 1, 'a reclaim removes at least one piece');
    return this.run(() => {
      const expiredContainers = this.sql.expiredContainers.pluck().all(nowMs, limit) as number[];
      for (const id of expiredContainers) {
        this.sql.forgetKeptContainer.run(id);
        this.sql.noteDeletedContainer.run(id);
      }
      const deletedDropped = expiredContainers.length + this.dropDeletedContainers(limit);
      const expired = this.sql.expiredSoftDeleted.all(softDeletedExpiredBound(nowMs), limit) as DroppedRow[];
      for (const row of expired) this.deleteVersion(row.container_id, row.name, row.snapshot, row.list_id);
      this.sql.stampLists.run(nowMs);
      this.sql.stampStaged.run(nowMs);
      this.sql.stampGarbage.run(nowMs);
      const staged = this.sql.oldStaged.all(stagedBeforeMs, limit) as { seq: number; content_id: string }[];
      for (const { seq, content_id: contentId } of staged) {
        this.sql.deleteStagedBySeq.run(seq);
        this.sql.garbage.run(contentId);
      }
      const listsDropped = this.dropDeadLists(nowMs - graceMs, limit, new Set(pinnedLists));
      const contentIds: string[] = [];
      let inlineDropped = 0;
      for (const id of this.sql.oldGarbage.pluck().all(nowMs - graceMs, limit) as string[]) {
        this.sql.deleteGarbage.run(id);
        if (this.referenced(id)) continue;
        // An inline row goes with this commit; a file is unlinked after it (the caller).
        if (this.sql.deleteInline.run(id).changes > 0) inlineDropped++;
        else contentIds.push(id);
      }
      return {
        contentIds,
        inlineDropped,
        stagedDropped: staged.length,
        listsDropped,
        deletedDropped,
        softDeletedDropped: expired.length,
      };
    });
  }

  /**
   * Up to `limit` blobs and staged blocks of deleted containers, as deleteBlob drops them: a blob's
   * list dies (dropped a grace later, in bounded batches), a staged block's content is garbage. A
   * container with none left is forgotten (counted too). At most reclaimBlockRowsMax whatever the
   * limit, so the job is short. Answers how many went.
   */
  private dropDeletedContainers(requested: number): number {
    const limit = Math.min(requested, reclaimBlockRowsMax);
    let dropped = 0;
    for (const id of this.sql.deletedContainers.pluck().all(limit) as number[]) {
      const blobs = this.sql.blobsOfContainer.all(id, limit - dropped) as {
        name: string;
        snapshot: string;
        list_id: number;
      }[];
      for (const row of blobs) this.deleteVersion(id, row.name, row.snapshot, row.list_id);
      dropped += blobs.length;
      const staged = this.sql.stagedOfContainer.all(id, limit - dropped) as { seq: number; content_id: string }[];
      for (const { seq, content_id: contentId } of staged) {
        this.sql.deleteStagedBySeq.run(seq);
        this.sql.garbage.run(contentId);
      }
      dropped += staged.length;
      if (dropped >= limit) break;
      this.sql.forgetDeletedContainer.run(id);
      dropped++;
      if (dropped >= limit) break;
    }
    return dropped;
  }

  /**
   * Drops dead lists stamped at or before `stampedBeforeMs`, none of `pinned`, at most `limit` of
   * them and reclaimBlockRowsMax of their rows (from a list's end: a list partly dropped is read by
   * no one); their content becomes garbage. Answers how many lists went whole.
   */
  private dropDeadLists(stampedBeforeMs: number, limit: number, pinned: ReadonlySet<number>): number {
    const lists = (this.sql.oldLists.pluck().all(stampedBeforeMs, limit + pinned.size) as number[])
      .filter((id) => !pinned.has(id))
      .slice(0, limit);
    let rowsLeft = reclaimBlockRowsMax;
    let dropped = 0;
    for (const listId of lists) {
      if (rowsLeft <= 0) break;
      const requested = rowsLeft;
      const from = this.sql.tailStart.get(listId, requested) as { first: number | null; rows: number };
      if (from.rows > 0) {
        this.sql.tailToGarbage.run(listId, from.first);
        this.sql.deleteTail.run(listId, from.first);
      }
      rowsLeft -= from.rows;
      if (from.rows < requested) {
        // The list's extents, if it was a page blob's, within what is left of the budget.
        const pageRows = rowsLeft > 0 ? this.pages.dropTail(listId, rowsLeft) : 0;
        const pagesLeft = rowsLeft > 0 && pageRows < rowsLeft;
        rowsLeft -= pageRows;
        if (pagesLeft) {
          this.sql.deleteList.run(listId);
          dropped++;
        }
      }
    }
    return dropped;
  }

  private referenced(contentId: string): boolean {
    return (
      this.sql.referencedByBlock.get(contentId) !== undefined ||
      this.sql.referencedByStaged.get(contentId) !== undefined ||
      this.pages.referenced(contentId)
    );
  }

  /** deleteBlob's rows, kept under `prefix` + their keys instead (their lists stay theirs). */
  private softDelete(
    containerId: number,
    key: BlobKey,
    parts: { readonly base: boolean; readonly snapshots: boolean },
    prefix: string,
  ): void {
    assert(prefix.startsWith(softDeletedKeyPrefix), 'a soft-deleted key has its prefix');
    const { name, snapshot } = key;
    if (snapshot !== '' || parts.base)
      this.sql.softDeleteVersion.run(prefix, containerId, name, snapshot === '' ? 1 : 0, snapshot);
    if (snapshot === '' && parts.base) {
      this.dropStaged(containerId, name);
      this.tags.dropAll(containerId, name); // a soft-deleted blob is not found by its tags
    }
    if (snapshot === '' && parts.snapshots) this.sql.softDeleteSnapshots.run(prefix, containerId, name);
  }

  private deleteVersion(containerId: number, name: string, snapshot: string, listId: number): void {
    this.sql.killList.run(listId);
    this.sql.deleteVersion.run(containerId, name, snapshot === '' ? 1 : 0, snapshot);
    if (snapshot === '') this.tags.dropAll(containerId, name);
  }

  /** Deletes the name's staged blocks (their content to garbage); answers how many there were. */
  private dropStaged(containerId: number, name: string): number {
    this.sql.stagedOfNameToGarbage.run(containerId, name);
    return Number(this.sql.deleteStagedOfName.run(containerId, name).changes);
  }

  private writeRecord(containerId: number, record: BlobRecord, listId: number): void {
    const { name, snapshot, etag, lastModifiedMs, sizeBytes, state } = record;
    const base = snapshot === '' ? 1 : 0;
    this.sql.upsertBlob.run(containerId, name, base, snapshot, etag, lastModifiedMs, sizeBytes, state, listId);
  }

  private newList(): number {
    return Number(this.sql.newList.run().lastInsertRowid);
  }

  private head(containerId: number, name: string, snapshot: string): Head | undefined {
    return this.sql.head.get(containerId, name, snapshot === '' ? 1 : 0, snapshot) as Head | undefined;
  }

  private containerId(account: string, name: string): number | undefined {
    return this.sql.containerId.get(account, name) as number | undefined;
  }
}

/** A page change that makes the blob's version anew (no current version needed). */
function createsPages(content: ContentChange): boolean {
  return content.kind === 'pages' && (content.change.kind === 'create' || content.change.kind === 'copy');
}

/** A page change whose record states a new size. */
function resizesPages(change: PageChange): boolean {
  return change.kind === 'create' || change.kind === 'copy' || change.kind === 'resize';
}
