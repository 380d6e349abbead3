// BlobStore.reclaimContent on PostgreSQL: mark, then sweep a grace later.
//
// Content is removed once it has been unreferenced for the grace, as reclaim passes see it: a
// candidate (blob-schema.ts: new content, or content a block row let go of) is marked with the
// first pass's `nowMs`; a pass at least the grace later removes it if nothing references it then.
// A release clears the mark, so the grace always starts after the last reference went. A reader
// resolves its blocks while the blob still references them (blob-store.ts readContent), so it
// started before that release, and has the whole grace to finish: longer than any request
// (limits.ts requestTimeoutMs is 2 minutes) and than reading several GiB at 1 MiB/s. A writer
// likewise has the grace between writeContent's start and referencing the content.
//
// Staged blocks age from the first pass that saw them (`seen_ms`): never removed younger than
// asked, at most one pass interval older.
//
// Each step locks its rows FOR UPDATE SKIP LOCKED (a row a write holds waits for the next pass)
// and decides in a later statement, whose snapshot sees every write that committed before the
// lock; a write that comes after waits for the lock and then meets the outcome (a candidate gone is
// inserted again by its release; content gone fails a write that names it, blob-writes.ts).
import assert from 'node:assert/strict';
import type pg from 'pg';
import { named, run } from './blob-statements.js';
import type { PostgresConnection } from './connection.js';
import { schemaName as s } from './schema.js';

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
const dueCandidatesSql = `SELECT content_id FROM ${s}.blob_reclaim_candidates WHERE marked_ms <= $1
  ORDER BY marked_ms LIMIT $2 FOR UPDATE SKIP LOCKED`;
// FOR UPDATE conflicts with the FOR KEY SHARE a write naming the content takes (its foreign key).
const lockContentsSql = `SELECT id FROM ${s}.blob_contents WHERE id = ANY($1::bigint[]) FOR UPDATE SKIP LOCKED`;
const deleteUnreferencedSql = `DELETE FROM ${s}.blob_contents c WHERE c.id = ANY($1::bigint[])
  AND NOT EXISTS (SELECT 1 FROM ${s}.blob_blocks b WHERE b.content_id = c.id)
  AND NOT EXISTS (SELECT 1 FROM ${s}.blob_staged t WHERE t.content_id = c.id)`;
// The rest are referenced again: no longer candidates, until a release makes them so.
const dropCandidatesSql = `DELETE FROM ${s}.blob_reclaim_candidates WHERE content_id = ANY($1::bigint[])`;

/** BlobStore.reclaimContent: the staged blocks and content removed. */
export async function reclaimContent(
  connection: PostgresConnection,
  graceMs: number,
  nowMs: number,
  stagedBeforeMs: number,
  limit: number,
): Promise<number> {
  assert(Number.isSafeInteger(nowMs) && Number.isSafeInteger(stagedBeforeMs), 'instants are whole milliseconds');
  assert(Number.isSafeInteger(limit) && limit >= 1, 'a reclaim pass removes at least one piece');
  await connection.query('write', named(markStagedSql, [nowMs, limit]));
  const staged = await connection.query('write', named(expireStagedSql, [stagedBeforeMs, limit]));
  await connection.query('write', named(markCandidatesSql, [nowMs, limit]));
  const removed = await connection.transaction(
    (client) => sweep(client, nowMs - graceMs, limit),
    () => true,
    0,
  );
  return (staged.rowCount ?? 0) + removed;
}

/** Removes unreferenced content marked at or before `markedBeforeMs`; how many. */
async function sweep(client: pg.ClientBase, markedBeforeMs: number, limit: number): Promise<number> {
  const due = await run<{ content_id: string }>(client, named(dueCandidatesSql, [markedBeforeMs, limit]));
  if (due.rows.length === 0) return 0;
  const ids = due.rows.map((row) => row.content_id);
  const locked = (await run<{ id: string }>(client, named(lockContentsSql, [ids]))).rows.map((row) => row.id);
  const { rowCount } = await run(client, named(deleteUnreferencedSql, [locked]));
  await run(client, named(dropCandidatesSql, [locked]));
  return rowCount ?? 0;
}
