// The rows of deleted containers on PostgreSQL, removed in bounded batches by reclaimContent.
//
// Delete Container only sets the container's account to null (postgres/blob/containers.ts): one row,
// however many blobs it holds, so the request never meets the statement timeout. No lookup by
// (account, name) finds the row any more, so every reader sees the container gone at once and a
// container of the same name may be created (with another id: the old rows are never its). Here a
// reclaim pass removes the old blobs, their blocks and the staged blocks a batch at a time, each
// statement bounded, and the container row once nothing is left. The block rows going release
// their content (blob-schema.ts triggers), which the sweep removes a grace later (postgres/blob/reclaim.ts).
//
// A crash anywhere leaves a container row with a null account and fewer rows: still invisible,
// and the next pass, in any process, goes on. Passes of several processes skip each other's rows
// (FOR UPDATE SKIP LOCKED). A Put Block whose statement found the container just before it was
// deleted may still add a staged block to it (its foreign key check waits for the delete, then
// sees the row): a later batch removes it, or the container row's own delete (ON DELETE CASCADE).
import assert from 'node:assert/strict';
import type pg from 'pg';
import { named, run } from './statements.js';
import type { PostgresConnection } from '../connection.js';
import { schemaName as s } from '../schema.js';

/** Blobs one batch takes at most, whatever the caller's limit. */
const blobsPerBatchMax = 1000;
/**
 * Block rows one batch deletes at most: a blob of 50,000 blocks goes over several batches, so
 * every statement ends well within the statement timeout (connection.ts).
 */
export const blockRowsPerBatchMax = 10_000;
/** Deleted containers one pass looks at. */
const containersPerPassMax = 16;

const deletedSql = `SELECT id FROM ${s}.blob_containers WHERE account IS NULL AND deleted_account IS NULL
  ORDER BY id LIMIT $1`;
// A soft-deleted container (deleted_account set) past its expiry becomes a deleted one.
const expiredSql = `UPDATE ${s}.blob_containers SET deleted_account = NULL WHERE id IN (
    SELECT id FROM ${s}.blob_containers WHERE deleted_account IS NOT NULL AND expires_ms < $1
    ORDER BY expires_ms LIMIT $2 FOR UPDATE SKIP LOCKED)`;
const lockBlobsSql = `SELECT id FROM ${s}.blobs WHERE container_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED`;
const deleteBlocksSql = `DELETE FROM ${s}.blob_blocks k USING (
    SELECT blob_id, seq FROM ${s}.blob_blocks WHERE blob_id = ANY($1::bigint[]) LIMIT $2
  ) d WHERE k.blob_id = d.blob_id AND k.seq = d.seq`;
const deleteEmptiedBlobsSql = `DELETE FROM ${s}.blobs b WHERE b.id = ANY($1::bigint[])
  AND NOT EXISTS (SELECT 1 FROM ${s}.blob_blocks k WHERE k.blob_id = b.id)`;
const deleteStagedSql = `DELETE FROM ${s}.blob_staged t USING (
    SELECT container_id, name, block_id FROM ${s}.blob_staged WHERE container_id = $1 LIMIT $2 FOR UPDATE SKIP LOCKED
  ) d WHERE t.container_id = d.container_id AND t.name = d.name AND t.block_id = d.block_id`;
const deleteEmptiedContainerSql = `DELETE FROM ${s}.blob_containers c WHERE c.id = $1 AND c.account IS NULL
  AND NOT EXISTS (SELECT 1 FROM ${s}.blobs b WHERE b.container_id = c.id)
  AND NOT EXISTS (SELECT 1 FROM ${s}.blob_staged t WHERE t.container_id = c.id)`;

/**
 * Turns up to `limit` soft-deleted containers that expired before `nowMs` into deleted ones (each
 * a piece), then removes rows of deleted containers: up to `limit` pieces (a blob, a staged block, a container
 * row; a batch that removed only some blocks of a blob counts as one), each statement bounded.
 * Answers the pieces removed.
 */
export async function reclaimDeletedContainers(
  connection: PostgresConnection,
  nowMs: number,
  limit: number,
): Promise<number> {
  assert(Number.isSafeInteger(limit) && limit >= 1, 'a reclaim pass removes at least one piece');
  const expired = await connection.query('write', named(expiredSql, [nowMs, limit]));
  const ids = await connection.query<{ id: string }>('read', named(deletedSql, [containersPerPassMax]));
  let removed = expired.rowCount ?? 0;
  for (const { id } of ids.rows) {
    removed += await reclaimContainer(connection, id, limit - removed);
    if (removed >= limit) break;
  }
  return removed;
}

/** Up to `limit` pieces of the deleted container `id`, then the container row once it is empty. */
async function reclaimContainer(connection: PostgresConnection, id: string, limit: number): Promise<number> {
  let removed = 0;
  while (removed < limit) {
    const batch = Math.min(limit - removed, blobsPerBatchMax);
    const blobs = await connection.transaction(
      (client) => removeBlobs(client, id, batch),
      () => true,
      0,
    );
    const stagedMax = batch - blobs;
    const staged = stagedMax > 0 ? await connection.query('write', named(deleteStagedSql, [id, stagedMax])) : undefined;
    const pieces = blobs + (staged?.rowCount ?? 0);
    if (pieces === 0) break;
    removed += pieces;
  }
  if (removed >= limit) return removed;
  const emptied = await connection.query('write', named(deleteEmptiedContainerSql, [id]));
  return removed + (emptied.rowCount ?? 0);
}

/**
 * In one transaction: up to `limit` blobs of the container locked, up to blockRowsPerBatchMax of
 * their block rows deleted, and those of them left without blocks deleted. The pieces: the blobs
 * deleted, or 1 when only blocks went.
 */
async function removeBlobs(client: pg.ClientBase, containerId: string, limit: number): Promise<number> {
  const locked = await run<{ id: string }>(client, named(lockBlobsSql, [containerId, limit]));
  const ids = locked.rows.map((row) => row.id);
  if (ids.length === 0) return 0;
  const blocks = await run(client, named(deleteBlocksSql, [ids, blockRowsPerBatchMax]));
  const blobs = (await run(client, named(deleteEmptiedBlobsSql, [ids]))).rowCount ?? 0;
  return blobs > 0 ? blobs : Math.min(1, blocks.rowCount ?? 0);
}
