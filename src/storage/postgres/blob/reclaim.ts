// BlobStore.reclaimContent on PostgreSQL: mark, then sweep a grace later.
//
// Content is removed once it has been unreferenced for the grace, as reclaim passes see it: a
// candidate (blob-schema.ts: new content, or content a block row let go of) is marked with the
// first pass's `nowMs`; a pass at least the grace later removes it if nothing references it then.
// A release clears the mark, so the grace always starts after the last reference went. A reader
// resolves its blocks while the blob still references them (blob-store.ts readContent), so it
// started before that release, and has the grace: longer than any request (limits.ts
// requestTimeoutMs is 2 minutes); each statement it reads with clears the mark of content it still
// reads and nothing references (postgres/blob/content-read.ts), so it keeps it as long as it reads on. A
// writer's every statement clears the mark too (blob-content.ts), so it loses its content only by
// pausing for the grace; after its last chunk it has the grace to write the record naming it.
//
// The blobs and staged blocks of deleted containers go first, in bounded batches
// (postgres/blob/container-reclaim.ts); their content then as any other released content.
//
// Staged blocks age from the first pass that saw them (`seen_ms`): never removed younger than
// asked, at most one pass interval older.
//
// Each step locks its rows FOR UPDATE SKIP LOCKED (a row a write holds waits for the next pass)
// and decides in a later statement, whose snapshot sees every write that committed before the
// lock; a write that comes after waits for the lock and then meets the outcome (a candidate gone is
// inserted again by its release; content being removed or gone fails a write that names it:
// postgres/blob/statements.ts lockedContents).
import assert from 'node:assert/strict';
import type pg from 'pg';
import { reclaimDeletedContainers } from './container-reclaim.js';
import { named, run } from './statements.js';
import { softDeletedExpiredBound, softDeletedKeyPrefix } from '../../blob-soft-delete.js';
import type { PostgresConnection, Statement } from '../connection.js';
import { schemaName as s } from '../schema.js';

/** How long unreferenced content stays readable (see above): an hour. */
export const contentGraceMsDefault = 60 * 60_000;

const markStagedSql = `UPDATE ${s}.blob_staged t SET seen_ms = $1 FROM (
    SELECT container_id, name, block_id FROM ${s}.blob_staged WHERE seen_ms IS NULL LIMIT $2 FOR UPDATE SKIP LOCKED
  ) n WHERE t.container_id = n.container_id AND t.name = n.name AND t.block_id = n.block_id`;
const expireStagedSql = `DELETE FROM ${s}.blob_staged t USING (
    SELECT container_id, name, block_id FROM ${s}.blob_staged WHERE seen_ms < $1
    ORDER BY seen_ms LIMIT $2 FOR UPDATE SKIP LOCKED
  ) e WHERE t.container_id = e.container_id AND t.name = e.name AND t.block_id = e.block_id`;
const markCandidatesSql = `UPDATE ${s}.blob_reclaim_candidates k SET marked_ms = $1 FROM (
    SELECT content_id FROM ${s}.blob_reclaim_candidates WHERE marked_ms IS NULL LIMIT $2 FOR UPDATE SKIP LOCKED
  ) n WHERE k.content_id = n.content_id`;
const dueCandidatesSql = `SELECT content_id AS id FROM ${s}.blob_reclaim_candidates WHERE marked_ms <= $1
  ORDER BY marked_ms LIMIT $2 FOR UPDATE SKIP LOCKED`;
// FOR UPDATE conflicts with the FOR KEY SHARE a write naming the content takes (its foreign key).
const lockContentsSql = `SELECT id FROM ${s}.blob_contents WHERE id = ANY($1::bigint[]) FOR UPDATE SKIP LOCKED`;
// Content found unreferenced is marked as being removed first (size -1), so no write can name it
// again, nor a writer still sending complete it, while its chunks go over several passes.
const referenced = (id: string): string => `(EXISTS (SELECT 1 FROM ${s}.blob_blocks b WHERE b.content_id = ${id})
  OR EXISTS (SELECT 1 FROM ${s}.blob_staged t WHERE t.content_id = ${id})
  OR EXISTS (SELECT 1 FROM ${s}.blob_pages p WHERE p.content_id = ${id}))`;
const referencedSql = `SELECT x.id FROM unnest($1::bigint[]) AS x(id) WHERE ${referenced('x.id')}`;
const unreferencedSql = `UPDATE ${s}.blob_contents c SET size_bytes = -1 WHERE c.id IN (
  SELECT x.id FROM unnest($1::bigint[]) AS x(id) WHERE NOT ${referenced('x.id')} LIMIT $2
) RETURNING c.id`;
const deleteChunksSql = `DELETE FROM ${s}.blob_chunks WHERE ctid IN (
  SELECT ctid FROM ${s}.blob_chunks WHERE content_id = ANY($1::bigint[]) LIMIT $2)`;
const deleteEmptiedSql = `DELETE FROM ${s}.blob_contents c WHERE c.id = ANY($1::bigint[])
  AND NOT EXISTS (SELECT 1 FROM ${s}.blob_chunks k WHERE k.content_id = c.id)`;
// Those referenced again are no longer candidates, until a release makes them so.
const dropCandidatesSql = `DELETE FROM ${s}.blob_reclaim_candidates WHERE content_id = ANY($1::bigint[])`;

// Soft-deleted rows whose expiry (the start of their key, blob-soft-delete.ts) is past, by the
// partial index blobs_soft_deleted (its WHERE's terms written as there); their blocks' content
// becomes a candidate through the blocks' delete trigger.
const purgeSoftDeletedSql = `DELETE FROM ${s}.blobs WHERE id IN (
    SELECT id FROM ${s}.blobs WHERE NOT is_base AND snapshot >= '${softDeletedKeyPrefix}' AND snapshot < $1
    ORDER BY snapshot LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/**
 * Chunk rows one pass deletes at most (512 MiB of chunks of 512 KiB), so that a pass over
 * content of any size ends within the statement timeout; larger content goes over several.
 */
const chunksPerPassMax = 1024;

/**
 * Rows a pass marks, and candidates it examines, at most, beyond `limit`: marking and dropping
 * candidates referenced again are cheap, and a pass that did only `limit` of them would fall
 * behind a store that writes faster than its caller reclaims.
 */
const bookkeepingRowsPerPass = 10_000;
/** BlobStore.reclaimContent: the rows of deleted containers, staged blocks and content removed. */
export async function reclaimContent(
  connection: PostgresConnection,
  graceMs: number,
  nowMs: number,
  stagedBeforeMs: number,
  limit: number,
): Promise<number> {
  assert(Number.isSafeInteger(nowMs) && Number.isSafeInteger(stagedBeforeMs), 'instants are whole milliseconds');
  assert(Number.isSafeInteger(limit) && limit >= 1, 'a reclaim pass removes at least one piece');
  const rows = Math.max(limit, bookkeepingRowsPerPass);
  // First the rows of deleted containers (a budget of their own, so that a container of millions
  // of blobs does not hold back the rest), so the content they release is marked in this pass.
  const deleted = await reclaimDeletedContainers(connection, nowMs, limit);
  const purged = await connection.query('write', named(purgeSoftDeletedSql, [softDeletedExpiredBound(nowMs), limit]));
  const purgedCount = purged.rowCount ?? 0;
  await connection.query('write', named(markStagedSql, [nowMs, rows]));
  const staged = await connection.query('write', named(expireStagedSql, [stagedBeforeMs, limit]));
  await connection.query('write', named(markCandidatesSql, [nowMs, rows]));
  const left = limit - (staged.rowCount ?? 0);
  if (left <= 0) return deleted + purgedCount + limit;
  const sweeping = (client: pg.ClientBase) => sweep(client, nowMs - graceMs, rows, left);
  const removed = await connection.transaction(sweeping, () => true, 0);
  return deleted + purgedCount + limit - left + removed;
}

/**
 * Examines up to `rows` candidates marked at or before `markedBeforeMs`, and removes up to `limit`
 * of their content that nothing references; how many went whole.
 */
async function sweep(client: pg.ClientBase, markedBeforeMs: number, rows: number, limit: number): Promise<number> {
  const ids = async (statement: Statement) => (await run<{ id: string }>(client, statement)).rows.map((r) => r.id);
  const due = await ids(named(dueCandidatesSql, [markedBeforeMs, rows]));
  if (due.length === 0) return 0;
  const locked = await ids(named(lockContentsSql, [due]));
  await run(client, named(dropCandidatesSql, [await ids(named(referencedSql, [locked]))]));
  const dying = await ids(named(unreferencedSql, [locked, limit]));
  await run(client, named(deleteChunksSql, [dying, chunksPerPassMax]));
  const { rowCount } = await run(client, named(deleteEmptiedSql, [dying]));
  return rowCount ?? 0;
}
