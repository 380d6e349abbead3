// The Blob store's writes of blob versions, each one transaction (PostgresConnection.transaction):
// the container row is locked FOR KEY SHARE (so it cannot be deleted under the write, while
// writes to other blobs in it go on), the blob version FOR UPDATE (FOR SHARE to snapshot it),
// and only then is the ETag compared: two writes conditioned on one ETag, from any processes,
// meet at the row lock and the second sees the first's ETag. A create that meets another
// create of the same name loses the race (RaceLost) and starts over, then sees the row. The
// write itself is then one statement (its record, blocks and small content), in a snapshot
// taken after the lock, so it sees everything the writes before it committed; putBlob's goes
// with its COMMIT (commit-with.ts), so it fails, as an error of the database, whenever it could
// not write everything.
import assert from 'node:assert/strict';
import type pg from 'pg';
import type { BlobKey, BlobRecord, ContentChange, IfEtag, WriteOutcome } from '../../blob-store.js';
import { versionKeyPrefix } from '../../blob-store.js';
import { softDeletedKeyPrefix } from '../../blob-soft-delete.js';
import { assertCommittedSize, etagOutcome } from '../../blob-rows.js';
import { named, run, runAndCommit } from './statements.js';
import { namedContents, unwrittenAmong, unwrittenSql, unwrittenValues } from './unwritten.js';
import { changePages, copyPages } from './pages.js';
import { RaceLost, type Statement } from '../connection.js';
import { schemaName as s } from '../schema.js';
import { replaceTagsStatement } from './tags.js';

/** A blob version's row, locked. bigint columns arrive as text. */
interface VersionRow {
  readonly id: string;
  readonly etag: string;
  readonly size_bytes: string;
}

/**
 * The container ($1, $2) locked FOR KEY SHARE, then the version ($3, $4) in it FOR `lock`: in that
 * order, as the join reads them (the container first, the version for it), in one round trip. No
 * row: no container; null version columns: no version.
 */
const lockSql = (lock: 'UPDATE' | 'SHARE'): string => `WITH c AS MATERIALIZED (
    SELECT id FROM ${s}.blob_containers WHERE account = $1 AND name = $2 FOR KEY SHARE
  ) SELECT c.id AS container_id, v.id, v.etag, v.size_bytes FROM c LEFT JOIN LATERAL (
    SELECT id, etag, size_bytes FROM ${s}.blobs
    WHERE container_id = c.id AND name = $3 AND is_base = ($4 = '') AND snapshot = $4 FOR ${lock}
  ) v ON true`;
const insertBlobSql = `INSERT INTO ${s}.blobs (container_id, name, snapshot, etag, last_modified_ms, size_bytes, state)
  VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id`;
const updateBlobSql = `UPDATE ${s}.blobs SET etag = $2, last_modified_ms = $3, size_bytes = $4, state = $5 WHERE id = $1`;
const deleteStagedSql = `DELETE FROM ${s}.blob_staged WHERE container_id = $1 AND name = $2`;

/**
 * A division by zero unless `condition`: how a statement that goes with its COMMIT (commit-with.ts)
 * fails, aborting its transaction, when it finds it wrote less than it should. It depends on rows
 * the statement wrote, so the planner cannot fold it.
 */
const unlessFails = (condition: string): string => `1 / (${condition})::integer`;
const failedCheck = '22012';

/**
 * A replacement (Put Blob, Put Block List) in one round trip: the record written, updating
 * version $1 (`existing`) or inserting the first in container $2 under name $3 (a unique
 * violation if another write inserted it meanwhile), with $4 to $7 its columns; its old blocks
 * and the name's staged blocks deleted (unless `keepStaged`); its blocks ($8 ids, $9 contents, $10 sizes, $11 first
 * bytes, $12 how many) inserted, naming only complete content of the stated sizes (failedCheck
 * otherwise), and the `unwritten` contents they name (from $13) written (postgres/blob/unwritten.ts). The
 * new blocks are inserted once the old are deleted (k reads `gone`), so they may take the same
 * seqs.
 */
const replaceSql = (existing: boolean, unwritten: number, keepStaged: boolean): string => `WITH v AS (${
  existing
    ? `UPDATE ${s}.blobs SET etag = $4, last_modified_ms = $5, size_bytes = $6, state = $7 WHERE id = $1 RETURNING id`
    : `INSERT INTO ${s}.blobs (container_id, name, snapshot, etag, last_modified_ms, size_bytes, state)
      SELECT $2, $3, '', $4, $5, $6, $7 WHERE $1::bigint IS NULL RETURNING id`
}),
  gone AS (DELETE FROM ${s}.blob_blocks WHERE blob_id = $1 RETURNING 1),
  pages AS (DELETE FROM ${s}.blob_pages WHERE blob_id = $1),
  t AS (DELETE FROM ${s}.blob_staged WHERE container_id = $2 AND name = $3 AND NOT ${keepStaged}),
  ${unwrittenSql(unwritten, 13)}
  c AS (${namedContents('$9::bigint[]', unwritten)}),
  k AS (INSERT INTO ${s}.blob_blocks (blob_id, seq, block_id, content_id, start_byte, size_bytes)
    SELECT v.id, b.seq - 1, b.block_id, c.id, b.start_byte, c.size_bytes
    FROM v, unnest($8::text[], $9::bigint[], $10::bigint[], $11::bigint[])
      WITH ORDINALITY AS b(block_id, content_id, size_bytes, start_byte, seq)
    JOIN c ON c.id = b.content_id AND c.size_bytes = b.size_bytes
    WHERE (SELECT count(*) FROM gone) >= 0 RETURNING 1)
  SELECT ${unlessFails('(SELECT count(*) FROM k) = $12 AND EXISTS (SELECT 1 FROM v)')} AS done`;

/**
 * An append (Append Block) in one round trip: version $1's record updated ($2 to $5, as
 * updateBlobSql), and block $6 of content $7 of $8 bytes (complete content of that size only:
 * failedCheck otherwise) at its end, from byte $9; the content written if `unwritten` (from $10).
 */
const appendSql = (unwritten: number): string => `WITH u AS (${updateBlobSql}),
  ${unwrittenSql(unwritten, 10)}
  c AS (${namedContents('ARRAY[$7::bigint]', unwritten)}),
  k AS (INSERT INTO ${s}.blob_blocks (blob_id, seq, block_id, content_id, start_byte, size_bytes)
    SELECT $1, coalesce((SELECT max(seq) + 1 FROM ${s}.blob_blocks WHERE blob_id = $1), 0), $6, c.id, $9, c.size_bytes
    FROM c WHERE c.size_bytes = $8 RETURNING 1)
  SELECT ${unlessFails('(SELECT count(*) FROM k) = 1')} AS done`;
const copyBlocksSql = `INSERT INTO ${s}.blob_blocks (blob_id, seq, block_id, content_id, start_byte, size_bytes)
  SELECT $2, seq, block_id, content_id, start_byte, size_bytes FROM ${s}.blob_blocks WHERE blob_id = $1`;
const deleteVersionSql = `DELETE FROM ${s}.blobs WHERE id = $1`;
// A name's snapshots, not its previous versions (blob-store.ts, versionKeyPrefix).
const deleteSnapshotsSql = `DELETE FROM ${s}.blobs WHERE container_id = $1 AND name = $2 AND NOT is_base
  AND snapshot < '${versionKeyPrefix}'`;
// Soft delete (blob-soft-delete.ts): the rows keep their ids, and so their blocks, under new keys.
const softDeleteVersionSql = `UPDATE ${s}.blobs SET snapshot = $2 || snapshot WHERE id = $1`;
const softDeleteSnapshotsSql = `UPDATE ${s}.blobs SET snapshot = $3 || snapshot
  WHERE container_id = $1 AND name = $2 AND NOT is_base AND snapshot < '${versionKeyPrefix}'`;

/** A row of lockSql: the version's columns null when there is none. */
interface LockedRow {
  readonly container_id: string;
  readonly id: string | null;
  readonly etag: string | null;
  readonly size_bytes: string | null;
}

/** A blob version locked in its container, the condition on it held. */
interface Locked {
  readonly containerId: string;
  readonly version: VersionRow | undefined;
}

/**
 * Locks the container (FOR KEY SHARE) and then the version `key` names (FOR `lock`), and checks
 * `ifEtag` on it: what was locked, or the outcome that ends the write.
 */
async function lockVersion(
  client: pg.ClientBase,
  account: string,
  key: BlobKey,
  lock: 'UPDATE' | 'SHARE',
  ifEtag: IfEtag,
): Promise<Locked | Exclude<WriteOutcome, 'ok'>> {
  const values = [account, key.container, key.name, key.snapshot];
  const row = (await run<LockedRow>(client, named(lockSql(lock), values))).rows[0];
  if (row === undefined) return 'containerNotFound';
  const containerId = row.container_id;
  const version = row.id === null ? undefined : { id: row.id, etag: row.etag!, size_bytes: row.size_bytes! };
  const outcome = etagOutcome(version?.etag, ifEtag);
  return outcome === 'ok' ? { containerId, version } : outcome;
}

/** BlobStore.putBlob's transaction; unwritten content it names is written in chunks of `chunkBytes`. */
export async function putBlob(
  client: pg.ClientBase,
  account: string,
  record: BlobRecord,
  content: ContentChange,
  ifEtag: IfEtag,
  chunkBytes: number,
  keepAs?: BlobRecord,
): Promise<WriteOutcome> {
  assert(record.snapshot === '' || content.kind === 'keep', 'putBlob changes a snapshot only as its record');
  assert(keepAs === undefined || record.snapshot === '', 'only a base blob is kept as a version');
  assert(record.snapshot === '' || record.indexTags === undefined, 'a snapshot has no indexed tags');
  const locked = await lockVersion(client, account, record, 'UPDATE', ifEtag);
  if (typeof locked === 'string') return locked;
  const { containerId, version: current } = locked;
  // A refusal after this rolls the whole transaction back (store.ts's write), the kept version too.
  if (keepAs !== undefined && current !== undefined) {
    const kept = await keep(client, containerId, current, keepAs);
    assert(kept, `${keepAs.snapshot} of ${keepAs.name} exists already`);
  }
  if (content.kind === 'pages') {
    const outcome = await changePages(client, record, locked, content.change, chunkBytes);
    const tags = record.indexTags;
    if (outcome !== 'ok' || tags === undefined) return outcome;
    await run(client, replaceTagsStatement(s, account, containerId, record.container, record.name, tags));
    return 'ok';
  }
  if (content.kind !== 'replace' && current === undefined) return 'blobNotFound';
  const currentBytes = current === undefined ? 0 : Number(current.size_bytes);
  assertCommittedSize(record, sizeAfter(currentBytes, content));
  // The write goes with COMMIT (commit-with.ts): it fails, rather than answers, if it cannot write all.
  // A write that changes the blob's tags writes them last, with COMMIT, after the record.
  const write = writeStatement(containerId, record, current, content, chunkBytes);
  const tags = record.indexTags;
  const written =
    tags === undefined
      ? runAndCommit(client, write)
      : run(client, write).then(() =>
          runAndCommit(client, replaceTagsStatement(s, account, containerId, record.container, record.name, tags)),
        );
  await written.catch((error: unknown) => {
    const { code, table } = error as { code?: string; table?: string };
    // Another transaction created the blob since this one looked: start over, and meet its row.
    if (code === '23505' && table === 'blobs') throw new RaceLost();
    assert.notEqual(code, failedCheck, 'every block a write names is complete content of its stated size');
    throw error;
  });
  return 'ok';
}

/** The statement that writes `record` over `current` (or as the first version) with `content`. */
function writeStatement(
  containerId: string,
  record: BlobRecord,
  current: VersionRow | undefined,
  content: ContentChange,
  chunkBytes: number,
): Statement {
  const { etag, lastModifiedMs, sizeBytes, state } = record;
  assert(content.kind !== 'pages', 'page changes are changePages');
  if (content.kind === 'replace') return replaceStatement(containerId, record, current, content, chunkBytes);
  if (content.kind === 'keep') return named(updateBlobSql, [current!.id, etag, lastModifiedMs, sizeBytes, state]);
  const { blockId, content: ref } = content.block;
  const unwritten = unwrittenAmong([ref]);
  const values: unknown[] = [current!.id, etag, lastModifiedMs, sizeBytes, state, blockId, ref.id, ref.sizeBytes];
  values.push(current!.size_bytes, ...unwrittenValues(unwritten, chunkBytes));
  return named(appendSql(unwritten.length), values);
}

function sizeAfter(currentBytes: number, content: ContentChange): number {
  if (content.kind === 'keep') return currentBytes;
  if (content.kind === 'append') return currentBytes + content.block.content.sizeBytes;
  assert(content.kind !== 'pages', 'page changes are changePages');
  return content.blocks.reduce((sum, block) => sum + block.content.sizeBytes, 0);
}

/**
 * The statement that writes the base blob's record over `current` (or as the first version), with
 * `blocks`, deleting the name's staged blocks (unless `keepStaged`); unwritten content they name
 * written in chunks of `chunkBytes`.
 */
function replaceStatement(
  containerId: string,
  record: BlobRecord,
  current: VersionRow | undefined,
  { blocks, keepStaged }: Extract<ContentChange, { kind: 'replace' }>,
  chunkBytes: number,
): Statement {
  const starts: number[] = [];
  let at = 0;
  for (const block of blocks) {
    starts.push(at);
    at += block.content.sizeBytes;
  }
  const { name, etag, lastModifiedMs, sizeBytes, state } = record;
  const unwritten = unwrittenAmong(blocks.map((block) => block.content));
  const values: unknown[] = [current?.id ?? null, containerId, name, etag, lastModifiedMs, sizeBytes, state];
  values.push(
    blocks.map((block) => block.blockId),
    blocks.map((block) => block.content.id),
    blocks.map((block) => block.content.sizeBytes),
    starts,
    blocks.length,
    ...unwrittenValues(unwritten, chunkBytes),
  );
  return named(replaceSql(current !== undefined, unwritten.length, keepStaged === true), values);
}

/** BlobStore.snapshotBlob's transaction. */
export async function snapshotBlob(
  client: pg.ClientBase,
  account: string,
  record: BlobRecord,
  ifEtag: string,
): Promise<WriteOutcome> {
  assert.notEqual(record.snapshot, '', 'a snapshot has a timestamp');
  const locked = await lockVersion(client, account, { ...record, snapshot: '' }, 'SHARE', ifEtag);
  if (typeof locked === 'string') return locked;
  const kept = await keep(client, locked.containerId, locked.version, record);
  assert(kept, `${record.snapshot} of ${record.name} exists already`);
  return 'ok';
}

/**
 * Writes `record` (a snapshot, a previous version, or a soft-deleted row restored) with the
 * committed blocks `base` (locked) has now; the content is shared. False (nothing written) when
 * its key is taken.
 */
async function keep(
  client: pg.ClientBase,
  containerId: string,
  base: VersionRow | undefined,
  record: BlobRecord,
): Promise<boolean> {
  assert(base !== undefined, `blob ${record.name}: there is no base blob to keep`);
  assertCommittedSize(record, Number(base.size_bytes));
  const { name, snapshot, etag, lastModifiedMs, sizeBytes, state } = record;
  const values = [containerId, name, snapshot, etag, lastModifiedMs, sizeBytes, state];
  const { rows } = await run<{ id: string }>(client, named(insertBlobSql, values));
  if (rows[0] === undefined) return false;
  await run(client, named(copyBlocksSql, [base.id, rows[0].id]));
  await copyPages(client, base.id, rows[0].id);
  return true;
}

const dropTagsSql = `DELETE FROM ${s}.blob_tags WHERE blob_id = $1`;

/** BlobStore.deleteBlob's transaction. */
export async function deleteBlob(
  client: pg.ClientBase,
  account: string,
  key: BlobKey,
  parts: { readonly base: boolean; readonly snapshots: boolean },
  ifEtag: IfEtag,
  keepAs?: BlobRecord,
  keptPrefix?: string,
): Promise<WriteOutcome> {
  assert(keepAs === undefined || key.snapshot !== '' || parts.base, 'a row deleted is kept');
  assert(keepAs === undefined || keptPrefix === undefined, 'a row is kept once');
  const locked = await lockVersion(client, account, key, 'UPDATE', ifEtag);
  if (typeof locked === 'string') return locked;
  const { containerId, version } = locked;
  // No version, no delete: snapshots of a base blob already gone are named one by one; a name
  // with only staged blocks has those deleted.
  if (version === undefined) {
    if (key.snapshot !== '' || !parts.base || ifEtag !== null) return 'blobNotFound';
    const dropped = await run(client, named(deleteStagedSql, [containerId, key.name]));
    return (dropped.rowCount ?? 0) > 0 ? 'ok' : 'blobNotFound';
  }
  if (keptPrefix !== undefined) return softDelete(client, containerId, key, version.id, parts, keptPrefix);
  if (keepAs !== undefined && !(await keep(client, containerId, version, keepAs))) {
    // Only a row restored as the base blob may find its key taken: a blob written meanwhile.
    assert.equal(keepAs.snapshot, '', `${keepAs.snapshot} of ${keepAs.name} exists already`);
    return 'etagMismatch';
  }
  // A row restored as the base blob is indexed again by its tags (blob-store.ts, index tags).
  const tags = keepAs?.snapshot === '' ? keepAs.indexTags : undefined;
  if (tags !== undefined) {
    await run(client, replaceTagsStatement(s, account, containerId, key.container, key.name, tags));
  }
  if (key.snapshot !== '' || parts.base) await run(client, named(deleteVersionSql, [version.id]));
  if (key.snapshot === '' && parts.base) await run(client, named(deleteStagedSql, [containerId, key.name]));
  if (key.snapshot === '' && parts.snapshots) await run(client, named(deleteSnapshotsSql, [containerId, key.name]));
  return 'ok';
}

/** deleteBlob's rows (the version `id` is `key`'s), kept under `prefix` + their keys instead. */
async function softDelete(
  client: pg.ClientBase,
  containerId: string,
  key: BlobKey,
  id: string,
  parts: { readonly base: boolean; readonly snapshots: boolean },
  prefix: string,
): Promise<WriteOutcome> {
  assert(prefix.startsWith(softDeletedKeyPrefix), 'a soft-deleted key has its prefix');
  if (key.snapshot !== '' || parts.base) await run(client, named(softDeleteVersionSql, [id, prefix]));
  if (key.snapshot === '' && parts.base) {
    await run(client, named(deleteStagedSql, [containerId, key.name]));
    // A soft-deleted blob is not found by its tags (only base blobs are indexed).
    await run(client, named(dropTagsSql, [id]));
  }
  if (key.snapshot === '' && parts.snapshots) {
    await run(client, named(softDeleteSnapshotsSql, [containerId, key.name, prefix]));
  }
  return 'ok';
}
