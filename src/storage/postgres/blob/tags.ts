// Blob index tags in the PostgreSQL engine (blob-store.ts, "Blob index tags"): one row per tag of a
// base blob, referencing its blob row (ON DELETE CASCADE: deleting the blob, or reclaiming a deleted
// container's blobs in batches, drops them, at most ten a blob). Written in the transaction of the
// blob's record, as its last statement (with COMMIT). The index blob_tags_by_value is Find Blobs by
// Tags' order, (account, key, value, container, name); a deleted container's rows (its account null)
// are skipped by the join.
import assert from 'node:assert/strict';
import type { IndexTags, TagQuery, TaggedBlob } from '../../blob-store.js';
import type { PostgresConnection, Statement } from '../connection.js';
import { named } from './statements.js';
import { tagQueryTerms } from '../../tag-query.js';

/**
 * The statement that replaces the indexed tags of base blob ($2, $3) in container $1 of account $4
 * with keys $5 and values $6; it runs after the record's own write in the same transaction, so it
 * finds the blob row a create just inserted.
 */
const replaceTagsSql = (s: string): string => `WITH b AS (
    SELECT id FROM ${s}.blobs WHERE container_id = $1 AND name = $2 AND is_base AND snapshot = ''
  ), gone AS (
    DELETE FROM ${s}.blob_tags t USING b WHERE t.blob_id = b.id RETURNING 1
  ) INSERT INTO ${s}.blob_tags (blob_id, key, value, account, container_id, container, name)
  SELECT b.id, x.key, x.value, $4, $1, $3, $2 FROM b, unnest($5::text[], $6::text[]) AS x(key, value)
  WHERE (SELECT count(*) FROM gone) >= 0`;

export function replaceTagsStatement(
  s: string,
  account: string,
  containerId: string,
  container: string,
  name: string,
  tags: IndexTags,
): Statement {
  const values = [containerId, name, container, account, tags.map(([key]) => key), tags.map(([, value]) => value)];
  return named(replaceTagsSql(s), values);
}

interface FoundRow {
  readonly value: string;
  readonly container: string;
  readonly name: string;
  readonly tags: [string, string][];
}

/** findBlobsByTags: one statement, its text by the query's shape (each shape prepared once). */
export async function findBlobsByTags(
  connection: PostgresConnection,
  s: string,
  account: string,
  query: TagQuery,
): Promise<TaggedBlob[]> {
  assert(Number.isSafeInteger(query.limit) && query.limit >= 0, 'a find limit is a count');
  if (query.limit === 0) return [];
  const values: unknown[] = [account, query.limit];
  const where = tagQueryTerms(account, query, (value) => {
    values.push(value);
    return `$${values.length}::text`;
  });
  if (where === 'none') return [];
  const text = `SELECT t.value, t.container, t.name,
      (SELECT json_agg(json_build_array(a.key, a.value)) FROM ${s}.blob_tags a WHERE a.blob_id = t.blob_id) AS tags
    FROM ${s}.blob_tags t JOIN ${s}.blob_containers c ON c.id = t.container_id AND c.account = $1
    WHERE ${where.join(' AND ')} ORDER BY t.value, t.container, t.name LIMIT $2`;
  const { rows } = await connection.query<FoundRow>('read', named(text, values));
  return rows.map((row) => ({ value: row.value, container: row.container, name: row.name, tags: row.tags }));
}
