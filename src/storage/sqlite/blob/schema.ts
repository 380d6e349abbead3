// The Blob service's tables in the SQLite database, beside the tables' (schema.ts) and the queues'
// (queue-schema.ts). Content is in files beside the database (blob-content.ts), or, when small, in
// blob_inline rows (sqlite/blob/inline.ts); the other rows name it by id, whichever it is.
//
// - blob_containers: one row per (account, name), with a surrogate id that keeps blob keys short.
// - blob_containers_deleted: the ids of deleted containers whose blobs and staged blocks are
//   still there: Delete Container moves the id here (one row, however many blobs), reclaimContent
//   removes the rest in bounded batches. No lookup by name finds them, and no new container takes
//   the id while it is here.
// - blob_containers_soft_deleted: soft-deleted containers (container-soft-delete.ts), their
//   records as they were, out of blob_containers (no lookup by name finds them; the name is free)
//   until Restore Container moves one back or reclaim, once it expired, moves its id to
//   blob_containers_deleted. Its blobs and staged blocks stay as they are, under its id.
// - blobs: base blobs and snapshots, keyed (container_id, name, base, snapshot) where base is 1
//   for the base blob ('' snapshot) and 0 for a snapshot: the key order is List Blobs' order.
//   Each names its committed block list (list_id). Previous versions and soft-deleted rows are
//   non-base rows too (blob-store.ts versionKey, blob-soft-delete.ts).
// - blob_lists and blob_blocks: a block list is append-only while a blob version uses it and never
//   changes otherwise; a Put Blob or Put Block List makes a new list and marks the old one dead.
//   Its rows stay until reclaimContent drops them, a grace after it died and once no reader of this
//   process streams it, so a reader that started on the old version keeps finding its blocks.
//   A block row keeps end_byte, the blob offset its block ends at: a ranged read finds its first
//   block with one probe of (list_id, end_byte), and an Append Block adds one row.
// - blob_staged: uncommitted blocks by (container, blob name, block id), in staging order (seq).
// - blob_inline: small content, by id, with the time it was written (a file's mtime, for the
//   sweep that finds content a crash or a failed request left unnamed). A rowid table: its rows are
//   large. A database made before it gets the table, empty, when opened: its content is all files.
// - blob_pages: a page blob version's page table (page-store.ts), under the version's list id (the
//   list has no blocks): extents [start_byte, end_byte) of content_id from content_offset, never
//   overlapping; bytes no extent covers are zeros. A Put Page splits the extents it overlaps; a
//   snapshot copies the rows; a dead list's rows go with its blocks (sqlite/blob/pages.ts).
// - blob_garbage: content ids that lost a reference (a dropped staged block, a dropped dead list)
//   or that the directory sweep found referenced by nothing, each removed a grace after it was
//   first stamped if it is still referenced by nothing then.
//
// The store never reads the time: a row waiting for a grace gets its stamp_ms at the next
// reclaimContent call (its nowMs, an upper bound on when the row became waiting), and is acted on
// by a call whose nowMs is at least that stamp plus the grace.
export const blobSchema = `
CREATE TABLE IF NOT EXISTS blob_containers (
  account TEXT NOT NULL,
  name TEXT NOT NULL,
  id INTEGER NOT NULL UNIQUE,
  etag TEXT NOT NULL,
  last_modified_ms INTEGER NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (account, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blob_containers_deleted (
  id INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS blob_containers_soft_deleted (
  id INTEGER PRIMARY KEY,
  account TEXT NOT NULL,
  name TEXT NOT NULL,
  etag TEXT NOT NULL,
  last_modified_ms INTEGER NOT NULL,
  state TEXT NOT NULL,
  deleted_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS blob_containers_soft_deleted_by_name ON blob_containers_soft_deleted (account, name, id);
CREATE INDEX IF NOT EXISTS blob_containers_soft_deleted_by_expiry ON blob_containers_soft_deleted (expires_ms);
CREATE TABLE IF NOT EXISTS blobs (
  container_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  base INTEGER NOT NULL,
  snapshot TEXT NOT NULL,
  etag TEXT NOT NULL,
  last_modified_ms INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  state TEXT NOT NULL,
  list_id INTEGER NOT NULL,
  PRIMARY KEY (container_id, name, base, snapshot)
) WITHOUT ROWID;
-- Soft-deleted rows by key, which starts with their expiry (blob-soft-delete.ts): the purge's walk.
-- Only non-base rows have such keys. The WHERE has no equality term: SQLite's planner compares a
-- partial index's \`col = literal\` with every statement's \`col = ?\` and then re-prepares that
-- statement each time \`?\` is bound (see the "Partial indexes" note in docs/architecture.md), which
-- made every blob lookup about four times as costly. blobs_soft_deleted was that index's first form.
DROP INDEX IF EXISTS blobs_soft_deleted;
CREATE INDEX IF NOT EXISTS blobs_soft_deleted_keys ON blobs (snapshot) WHERE snapshot >= 'x';
CREATE TABLE IF NOT EXISTS blob_lists (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  dead INTEGER NOT NULL DEFAULT 0,
  stamp_ms INTEGER
);
CREATE INDEX IF NOT EXISTS blob_lists_dead ON blob_lists (stamp_ms) WHERE dead = 1;
CREATE TABLE IF NOT EXISTS blob_blocks (
  list_id INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  block_id TEXT NOT NULL,
  content_id TEXT NOT NULL,
  content_size INTEGER NOT NULL,
  end_byte INTEGER NOT NULL,
  PRIMARY KEY (list_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blob_blocks_by_end ON blob_blocks (list_id, end_byte, ordinal);
CREATE INDEX IF NOT EXISTS blob_blocks_by_content ON blob_blocks (content_id);
CREATE TABLE IF NOT EXISTS blob_staged (
  seq INTEGER PRIMARY KEY,
  container_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  block_id TEXT NOT NULL,
  content_id TEXT NOT NULL,
  content_size INTEGER NOT NULL,
  stamp_ms INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS blob_staged_by_id ON blob_staged (container_id, name, block_id);
CREATE INDEX IF NOT EXISTS blob_staged_by_name ON blob_staged (container_id, name, seq);
CREATE INDEX IF NOT EXISTS blob_staged_by_content ON blob_staged (content_id);
CREATE INDEX IF NOT EXISTS blob_staged_by_stamp ON blob_staged (stamp_ms);
CREATE TABLE IF NOT EXISTS blob_pages (
  list_id INTEGER NOT NULL,
  start_byte INTEGER NOT NULL,
  end_byte INTEGER NOT NULL,
  content_id TEXT NOT NULL,
  content_offset INTEGER NOT NULL,
  PRIMARY KEY (list_id, start_byte)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blob_pages_by_content ON blob_pages (content_id);
CREATE TABLE IF NOT EXISTS blob_garbage (
  content_id TEXT PRIMARY KEY,
  stamp_ms INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blob_garbage_by_stamp ON blob_garbage (stamp_ms);
CREATE TABLE IF NOT EXISTS blob_inline (
  content_id TEXT PRIMARY KEY,
  written_ms INTEGER NOT NULL,
  bytes BLOB NOT NULL
);
`;

/** The columns a BlobRecord is read from (blobRecord), by the reader and the writer. */
export const blobColumns = 'name, snapshot, etag, last_modified_ms, size_bytes, state';
