// The storage contract of the Blob service, beside the Table service's (table-store.ts) and the Queue
// service's (queue-store.ts). Every engine implements it over the same database as its tables and
// proves it with the blob conformance suite (tests/storage/blob-conformance/).
//
// The store keeps three things:
// - records of containers and blobs (base blobs and their snapshots), replaced by compare-and-swap
//   on the ETag the service made, so conditional requests and leases are exact with any number of
//   processes: the service reads a record, decides (conditions, lease, limits), and writes the next
//   record only if the ETag it read is still current;
// - each blob's committed blocks, in order, and the blocks staged (uncommitted) under a blob name;
// - content: bytes written once by writeContent, streamed (never held whole in memory), durable
//   before it resolves (or, when small, with the write that first names it: ContentRef.unwritten),
//   and shared by reference (a committed block, a staged block, a snapshot and a
//   copy can all name the same content, in any account: content ids are the store's, not an account's).
//
// It knows nothing of HTTP, XML, headers or the service's limits; `state` is the service's own
// encoding of everything else (metadata, content headers, lease, public access, ACL, blob type).
// Time is passed in as whole milliseconds, never read by the store.
import type { PageChange, PageStore } from './page-store.js';

/** Content written by writeContent: durable, immutable, named by an id the store chose. */
export interface ContentRef {
  readonly id: string;
  readonly sizeBytes: number;
  /**
   * Small content an engine keeps as a row of its database may come back not written yet, its
   * bytes here: the write that first names the ref (putBlob, stageBlock) writes them in the same
   * transaction, so they are durable before any row names them, and content nothing names is never
   * written at all. Only the engine that made the ref reads this; the ref is not kept past the write.
   */
  readonly unwritten?: UnwrittenContent | undefined;
}

export interface UnwrittenContent {
  readonly bytes: Uint8Array;
  /** When writeContent received them (the sweep's clock: the system clock, as a file's mtime). */
  readonly writtenMs: number;
}

export interface ContainerRecord {
  readonly name: string;
  /** Made by the service (quoted, as sent on the wire); the compare-and-swap token. */
  readonly etag: string;
  readonly lastModifiedMs: number;
  /** The service's encoding of metadata, public access, stored access policies and lease. */
  readonly state: string;
}

/**
 * Container soft delete (container-soft-delete.ts): Delete Container keeps the container, every
 * blob of it untouched, until `expiresMs`; reclaimContent purges it once its nowMs is past that.
 */
export interface ContainerKeep {
  readonly deletedMs: number;
  readonly expiresMs: number;
}

/** A soft-deleted container: its record as it was deleted, and its version (the store's, unique in the account). */
export interface DeletedContainerRecord extends ContainerRecord, ContainerKeep {
  readonly version: string;
}

export type RestoreOutcome = 'ok' | 'containerExists' | 'notFound';

export interface BlobKey {
  readonly container: string;
  readonly name: string;
  /**
   * '' for the base blob; otherwise the snapshot's timestamp as the service forms it, or a
   * previous version's key (versionKey: versions are rows beside snapshots).
   */
  readonly snapshot: string;
}

export interface BlobRecord extends BlobKey {
  readonly etag: string;
  readonly lastModifiedMs: number;
  /** The sum of its committed blocks' sizes; the store keeps it so. */
  readonly sizeBytes: number;
  /** The service's encoding of blob type, content headers, metadata, lease, creation time, MD5. */
  readonly state: string;
  /** Writes only (see "Blob index tags" below); never on a record the store answers. */
  readonly indexTags?: IndexTags | undefined;
}

/** A block of a blob's content: Put Blob's single block has id ''; append blobs' blocks too. */
export interface Block {
  /** The block id as the client sent it (base64 text), or '' for content not put as a block. */
  readonly blockId: string;
  readonly content: ContentRef;
}

/** BlobStore.getBlobAndContent's answer: a version's record and, when small, its whole content. */
export interface BlobAndContent {
  readonly record: BlobRecord;
  /** Every byte of the version, read with its record; undefined when it has more than asked for. */
  readonly bytes: Buffer | undefined;
}

/** BlobStore.blockSummary's answer. */
export interface BlockSummary {
  readonly stagedCount: number;
  readonly stagedHasId: boolean;
  readonly sampleBlockId: string | undefined;
}

/** What List Blobs sees: a blob's record, or a name that has only staged blocks (include=uncommittedblobs). */
export type ListedBlob =
  { readonly kind: 'blob'; readonly record: BlobRecord } | { readonly kind: 'uncommitted'; readonly name: string };

/** How a blob's committed content changes with its record. */
export type ContentChange =
  /** The record changes, the content stays (Set Blob Properties, metadata, leases). */
  | { readonly kind: 'keep' }
  /**
   * The whole committed block list is replaced (Put Blob, Put Block List, Copy Blob); staged blocks of the name are
   * dropped, unless `keepStaged` (a Data Lake flush with retainUncommittedData=true).
   */
  | { readonly kind: 'replace'; readonly blocks: readonly Block[]; readonly keepStaged?: true }
  /** One block is added at the end (Append Block). */
  | { readonly kind: 'append'; readonly block: Block }
  /** A page blob's pages change (page-store.ts). */
  | { readonly kind: 'pages'; readonly change: PageChange };

/**
 * The condition on the current record for a write: `undefined` any (or none), `null` there must be
 * none (create only), a string the current record's ETag must equal it.
 */
export type IfEtag = string | null | undefined;

export type WriteOutcome = 'ok' | 'containerNotFound' | 'blobNotFound' | 'etagMismatch';

export interface ListBlobsOptions {
  readonly prefix: string;
  /** Start at the first entry whose (name, snapshot) is >= this; undefined: from the start. */
  readonly from?: { readonly name: string; readonly snapshot: string } | undefined;
  readonly limit: number;
  readonly snapshots: boolean;
  readonly uncommitted: boolean;
  /** Previous versions too (versionKey), after the name's snapshots and before its base blob. */
  readonly versions?: boolean | undefined;
  /** Soft-deleted rows too (blob-soft-delete.ts), after the name's previous versions. */
  readonly deleted?: boolean | undefined;
}

// Blob versions (versioning-overview): a previous version is kept as a non-base record, like a
// snapshot, under a key the store tells from a snapshot's timestamp (which starts with a digit): a
// snapshot key sorts below versionKeyPrefix, a version key at or above it. putBlob and deleteBlob
// keep the base blob as it was (`keepAs`) in the same transaction as their change; listBlobs lists
// versions only when asked (ListBlobsOptions.versions); deleteBlob's `snapshots` are never versions.
// Soft-deleted rows (blob-soft-delete.ts) sort above versions, and are neither.

/** What starts a previous version's key (BlobKey.snapshot). */
export const versionKeyPrefix = 'v';

/** The key of the previous version `versionId` (the service's timestamp of it). */
export function versionKey(versionId: string): string {
  return `${versionKeyPrefix}${versionId}`;
}

/** The version id of a key made by versionKey; undefined for '' (the base blob) and a snapshot. */
export function versionIdOfKey(snapshot: string): string | undefined {
  return snapshot.startsWith(versionKeyPrefix) ? snapshot.slice(versionKeyPrefix.length) : undefined;
}

export interface BlobStore extends PageStore {
  /**
   * Streams `source` into new content and resolves once it is durable. It is referenced by nothing
   * yet: content no record or staged block references is reclaimed (reclaimContent), no sooner than
   * the grace the engine documents. If `source` throws (a client that went away, a limit the service
   * enforces while streaming), whatever was written is discarded and the error is rethrown. The
   * source hands its chunks over: it does not change a chunk's bytes once it has yielded it, so the
   * store may keep one (to gather or write it later) without a copy.
   */
  writeContent(source: AsyncIterable<Uint8Array>): Promise<ContentRef>;

  /**
   * Creates the container unless one of that name exists (false). A deleted container whose rows
   * are still being reclaimed does not exist: the new one is empty, and never sees them.
   */
  createContainer(account: string, record: ContainerRecord): Promise<boolean>;
  getContainer(account: string, name: string): Promise<ContainerRecord | undefined>;
  /** Containers ordered by name, from the first whose name is >= `fromName`, with the prefix. */
  listContainers(
    account: string,
    prefix: string,
    fromName: string | undefined,
    limit: number,
  ): Promise<ContainerRecord[]>;
  /** Replaces the container's record if `ifEtag` holds. */
  updateContainer(account: string, record: ContainerRecord, ifEtag: IfEtag): Promise<WriteOutcome>;
  /**
   * Deletes the container, at once for every reader and writer, in time and work independent of
   * what it holds: its blobs, snapshots and staged blocks are removed later by reclaimContent, in
   * batches, and their content after them. A crash before that leaves them invisible, and
   * reclaimed still.
   */
  deleteContainer(account: string, name: string, ifEtag: IfEtag, keep?: ContainerKeep): Promise<WriteOutcome>;
  /**
   * Soft-deleted containers (deleteContainer's `keep`) of the account, ordered by (name, version),
   * from the first at or after `from`, with the prefix. Reads about as many rows as it answers.
   */
  listDeletedContainers(
    account: string,
    prefix: string,
    from: { readonly name: string; readonly version: string } | undefined,
    limit: number,
  ): Promise<DeletedContainerRecord[]>;
  /**
   * Restores the soft-deleted container `version` of `record.name` as `record` (the same id: its
   * blobs, snapshots, versions, tags and staged blocks come back with it), in one transaction.
   * 'containerExists' when a container of that name exists (nothing changes); 'notFound' when no
   * soft-deleted container of that name has that version (or it was purged).
   */
  restoreContainer(account: string, version: string, record: ContainerRecord): Promise<RestoreOutcome>;

  getBlob(account: string, key: BlobKey): Promise<BlobRecord | undefined>;
  /**
   * Optional, for an engine whose every read is a round trip: getBlob and, if the version has at
   * most `contentBytesMax` bytes, its whole content, read together from one snapshot (so the
   * bytes are the record's version's). Without it, the service reads with getBlob and readContent.
   */
  getBlobAndContent?(account: string, key: BlobKey, contentBytesMax: number): Promise<BlobAndContent | undefined>;
  /** Blobs ordered by (name, snapshot) with the base blob after its snapshots, as List Blobs orders them. */
  listBlobs(account: string, container: string, options: ListBlobsOptions): Promise<ListedBlob[]>;
  /**
   * Writes a base blob's record (record.snapshot is '') if `ifEtag` holds for the current base
   * record, and changes its content as `content` says, in one transaction; `record.sizeBytes` must
   * be the committed size after the change (the store asserts it). With content 'keep' it may also
   * replace a snapshot's record (record.snapshot non-empty; Set Blob Tier on a snapshot), under the
   * same condition on that snapshot's ETag. `keepAs` (a base blob's write only): the current base
   * blob, which must exist, is first kept as this record (a previous version: a new non-base key,
   * the current size) with the committed blocks it has before the change, shared as a snapshot's.
   */
  putBlob(
    account: string,
    record: BlobRecord,
    content: ContentChange,
    ifEtag: IfEtag,
    keepAs?: BlobRecord,
  ): Promise<WriteOutcome>;
  /**
   * Makes a snapshot (record.snapshot non-empty) of the base blob whose ETag is `ifEtag`: the given
   * record with the base blob's committed blocks (the content is shared, not copied).
   */
  snapshotBlob(account: string, record: BlobRecord, ifEtag: string): Promise<WriteOutcome>;
  /**
   * Deletes blob versions in one transaction, if `ifEtag` holds for the base record: `base` the
   * base blob (and its staged blocks), `snapshots` its snapshots; or one snapshot when
   * `key.snapshot` is non-empty (then `ifEtag` is about that snapshot and the flags are ignored).
   * A name with staged blocks but no base record (`ifEtag` null, `base`) has its staged blocks
   * deleted: 'ok' if it had any, else 'blobNotFound'. `keepAs` (deleting the base blob, or one
   * non-base row): the row is first kept as this record, as putBlob's `keepAs`; its key may be ''
   * (a row restored as the base blob, which must not exist). `keptPrefix` (soft delete; not with
   * keepAs): every row deleted is kept under keptPrefix + its key, its record and blocks unchanged.
   */
  deleteBlob(
    account: string,
    key: BlobKey,
    parts: { readonly base: boolean; readonly snapshots: boolean },
    ifEtag: IfEtag,
    keepAs?: BlobRecord,
    keptPrefix?: string,
  ): Promise<WriteOutcome>;

  /** Stages a block under the base blob's name (the blob need not exist); replaces a staged block of the same id. */
  stageBlock(account: string, container: string, name: string, block: Block): Promise<WriteOutcome>;
  /**
   * What Put Block checks before it stages, without reading every block of a blob with many: how
   * many blocks are staged under the name, whether `blockId` is one of them, and one of their ids
   * (undefined: none staged; the base blob's committed blocks are not sampled).
   */
  blockSummary(account: string, container: string, name: string, blockId: string): Promise<BlockSummary>;
  /** A blob version's committed blocks in order, and (base blob only) the staged ones in staging order. */
  getBlocks(account: string, key: BlobKey): Promise<{ readonly committed: Block[]; readonly staged: Block[] }>;
  /**
   * The bytes [startByte, endByteExclusive) of the blob version whose ETag is `etag`, streamed; the
   * range is clamped to its size; a page blob's bytes no page was written to are zeros. 'changed'
   * when that version is no longer current (the service answers as for a condition that failed, or
   * reads again). Content a reader is streaming stays
   * readable until the reader finishes, even if the blob is replaced or deleted meanwhile.
   */
  readContent(
    account: string,
    key: BlobKey,
    etag: string,
    startByte: number,
    endByteExclusive: number,
  ): Promise<AsyncIterable<Buffer> | 'changed'>;

  /**
   * Removes up to `limit` blobs and staged blocks of deleted containers (then each emptied
   * container, a piece too), and up to `limit` pieces of content no record or staged block
   * references and that are older than the engine's grace (and staged blocks older than
   * `stagedBeforeMs`), and up to `limit` soft-deleted rows whose expiry is before `nowMs`
   * (blob-soft-delete.ts), and up to `limit` soft-deleted containers whose expiry is before `nowMs`
   * (then reclaimed as deleted containers); answers how many. Each call's work is bounded, so a caller calls again
   * while it answers `limit` or more.
   */
  reclaimContent(nowMs: number, stagedBeforeMs: number, limit: number): Promise<number>;

  /**
   * Blob index tags (below): base blobs whose tag `query.key` has a value within the query's
   * bounds, in the account or one container, in (value, container, name) order from after
   * `query.after`, at most `query.limit`, each with all its tags. Reads about as many rows as it
   * answers (an index on (key, value, container, name)). Deleted containers' blobs are never found.
   */
  findBlobsByTags(account: string, query: TagQuery): Promise<TaggedBlob[]>;
}

// ---- Blob index tags (find-blobs-by-tags) ----
// The service keeps a blob version's tags in its `state`; the store keeps an index of the base
// blobs' tags, written with the record in the same transaction: a putBlob of a base record whose
// `indexTags` is set replaces the blob's indexed tags with them ([]: none); left undefined, they stay
// as they are (a write that does not change tags). Deleting a base blob (or its container) drops
// them. Snapshots are not indexed (their record's indexTags must be undefined).

/** A blob's tags: keys unique (at most 10, short ASCII: the service checks). */
export type IndexTags = readonly (readonly [key: string, value: string])[];

/** A bound on a tag value: the value itself included or not. */
export interface TagBound {
  readonly value: string;
  readonly inclusive: boolean;
}

/** A place in findBlobsByTags' order. */
export interface TagPlace {
  readonly value: string;
  readonly container: string;
  readonly name: string;
}

export interface TagQuery {
  /** Undefined: every container of the account. */
  readonly container: string | undefined;
  readonly key: string;
  /** Undefined: unbounded on that side. Equality is both bounds inclusive on one value. */
  readonly lower: TagBound | undefined;
  readonly upper: TagBound | undefined;
  /** Start strictly after this place; undefined: from the first. */
  readonly after: TagPlace | undefined;
  readonly limit: number;
}

/** A base blob found by its tag: `value` is its value of the query's key; `tags` all its tags. */
export interface TaggedBlob extends TagPlace {
  readonly tags: IndexTags;
}
