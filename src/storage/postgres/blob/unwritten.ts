// Small blob content written by the statement that first names it (ContentRef.unwritten): content
// of one chunk or less comes back from writeContent (blob-content.ts) with its bytes and an id but
// no row; the write that names it (putBlob's blocks, stageBlock) inserts its row and chunk in the
// same statement, so a small Put Blob, Put Block or Append Block is one commit, not two, and
// content no write named (a condition that failed, a client gone) is never written.
//
// Such content needs no reclaim candidate row (blob-schema.ts): it is born referenced, in the
// transaction that references it, and the triggers make it a candidate when that reference goes.
import assert from 'node:assert/strict';
import { unwrittenBytes } from '../../blob-rows.js';
import type { ContentRef } from '../../blob-store.js';
import type { PostgresConnection } from '../connection.js';
import { lockedContents, named } from './statements.js';
import { schemaName as s } from '../schema.js';

/**
 * Ids for content written later, reserved from the blob_contents id sequence in batches of
 * idsPerReserveMax, the next batch fetched while this one is half used. Not random ids and not a
 * sequence of its own: every content table row names content by that bigint, and the one
 * sequence that also numbers content written at once (its column's default) never hands an id
 * out twice, to any process, even across a database crash (nextval's WAL is flushed by the commit
 * of the statement that reserved it, before this process sees the ids). An id reserved and never
 * used is a gap, which costs nothing.
 */
export class ContentIds {
  private readonly spare: string[] = [];
  private refilling: Promise<void> | undefined;

  constructor(private readonly connection: PostgresConnection) {}

  async next(): Promise<string> {
    if (this.spare.length <= idsPerReserveMax / 2) this.refill();
    while (this.spare.length === 0) await this.refill();
    return this.spare.shift()!;
  }

  /** The batch on its way (started if none is): a failure fails the writes that wait for it. */
  private refill(): Promise<void> {
    // A read to the client: whatever became of it, no data changed (ids taken are gaps at most).
    this.refilling ??= this.connection
      .query<{ id: string }>('read', named(reserveSql, [idsPerReserveMax]))
      .then(({ rows }) => {
        this.spare.push(...rows.map((row) => row.id));
      })
      .finally(() => (this.refilling = undefined));
    // Awaited by the writes that need the ids; one started ahead fails nobody.
    this.refilling.catch(() => undefined);
    return this.refilling;
  }
}

/** Ids a reserving statement takes at once: a round trip every this many small writes. */
export const idsPerReserveMax = 64;

const reserveSql = `SELECT nextval(pg_get_serial_sequence('${s}.blob_contents', 'id'))::text AS id
  FROM generate_series(1, $1::integer)`;

/** The unwritten refs among `refs`, each once (a write may name one ref more than once). */
export function unwrittenAmong(refs: readonly ContentRef[]): ContentRef[] {
  const byId = new Map<string, ContentRef>();
  for (const ref of refs) {
    if (ref.unwritten !== undefined) byId.set(ref.id, ref);
  }
  return [...byId.values()];
}

/** The parameters unwrittenSql takes for `refs` (unwrittenAmong's), after the statement's own. */
export function unwrittenValues(refs: readonly ContentRef[], chunkBytes: number): unknown[] {
  if (refs.length === 0) return [];
  const values: unknown[] = [chunkBytes];
  for (const ref of refs) {
    assert(ref.sizeBytes <= chunkBytes, 'unwritten content is one chunk or less');
    values.push(ref.id, ref.sizeBytes, unwrittenBytes(ref));
  }
  return values;
}

/**
 * CTEs (each followed by a comma) that write `count` unwritten contents whose parameters
 * (unwrittenValues) start at $`first`, if `when` (an SQL condition) holds: `nv` lists them (id,
 * size_bytes), for the statement to name them beside content already written (namedContents). A
 * content named again finds its row there already (ON CONFLICT DO NOTHING).
 */
export function unwrittenSql(count: number, first: number, when = 'true'): string {
  if (count === 0) return '';
  const rows = Array.from({ length: count }, (_, i) => {
    const at = first + 1 + 3 * i;
    return `($${at}::bigint, $${at + 1}::bigint, $${at + 2}::bytea)`;
  });
  return `nv (id, size_bytes, data) AS (VALUES ${rows.join(', ')}),
  nc AS (INSERT INTO ${s}.blob_contents (id, chunk_bytes, size_bytes)
    SELECT id, $${first}::integer, size_bytes FROM nv WHERE ${when} ON CONFLICT (id) DO NOTHING RETURNING id),
  nd AS (INSERT INTO ${s}.blob_chunks (content_id, seq, data)
    SELECT nv.id, 0, nv.data FROM nv JOIN nc ON nc.id = nv.id WHERE nv.size_bytes > 0),`;
}

/**
 * The contents of `ids` (an SQL bigint array) a write names, as (id, size_bytes): those written
 * before locked as lockedContents says, and the `count` unwritten ones (`nv`, written by this
 * statement: unwrittenSql) as they are.
 */
export function namedContents(ids: string, count: number): string {
  if (count === 0) return lockedContents(ids);
  const written = lockedContents(`ARRAY(SELECT unnest(${ids}) EXCEPT SELECT id FROM nv)`);
  return `SELECT id, size_bytes FROM (${written}) w UNION ALL SELECT id, size_bytes FROM nv`;
}
