// The path store in the PostgreSQL engine (storage/path-store.ts), over the blob tables
// (postgres/blob/schema.ts) and the table store's connection: a rename is one transaction of two
// UPDATE statements. The container is locked FOR KEY SHARE (it cannot be deleted under the rename)
// and the source's base row FOR UPDATE before its ETag is compared, as the blob store's writes do
// (postgres/blob/writes.ts), so a write conditioned on the source's ETag meets the rename at that
// lock. Blocks hang off the blob rows' ids, so they follow without being touched. A recursive
// delete is one transaction of two DELETE statements over the same range of names, the directory's
// row locked the same way; blocks, pages and tags go with their rows (ON DELETE CASCADE), and the
// content they release is noted by the schema's triggers, as for deleteBlob.
import assert from 'node:assert/strict';
import type pg from 'pg';
import { versionKeyPrefix } from '../../blob-store.js';
import { pastChildren, type DeleteTreeOutcome, type PathStore, type RenameOutcome } from '../../path-store.js';
import { RaceLost, type PostgresConnection } from '../connection.js';
import { schemaName as s } from '../schema.js';

const containerSql = `SELECT id FROM ${s}.blob_containers WHERE account = $1 AND name = $2 FOR KEY SHARE`;
const sourceSql = `SELECT etag FROM ${s}.blobs WHERE container_id = $1 AND name = $2 AND is_base FOR UPDATE`;
// One range of the name index, then a filter for names that only share the prefix (`a-b`), as in
// sqlite/dfs/writer.ts: one index range scan whatever the planner thinks of an OR.
const takenSql = `SELECT 1 FROM ${s}.blobs WHERE container_id = $1 AND name >= $2 AND name < $3
  AND (name = $2 OR name >= $2 || '/') LIMIT 1`;
// $1 the container id, $2 the source, $3 the destination, $4 pastChildren(source).
const renamed = `$3 || substr(name, length($2) + 1)`;
const under = `name >= $2 AND name < $4 AND (name = $2 OR name >= $2 || '/')`;
const renameBlobsSql = `UPDATE ${s}.blobs SET name = ${renamed} WHERE container_id = $1 AND ${under}`;
const renameStagedSql = `UPDATE ${s}.blob_staged SET name = ${renamed} WHERE container_id = $1 AND ${under}`;
// Index tags name their blob (postgres/blob/tags.ts): they move with it.
const renameTagsSql = `UPDATE ${s}.blob_tags SET name = ${renamed} WHERE container_id = $1 AND ${under}`;
// $1 the container id, $2 the path, $3 pastChildren(path): the base blobs and their snapshots
// (deleteBlob's `base` and `snapshots`), not previous versions nor soft-deleted rows.
const treeUnder = `container_id = $1 AND name >= $2 AND name < $3 AND (name = $2 OR name >= $2 || '/')`;
const deleteTreeBlobsSql = `DELETE FROM ${s}.blobs WHERE ${treeUnder} AND (is_base OR snapshot < '${versionKeyPrefix}')`;
const deleteTreeStagedSql = `DELETE FROM ${s}.blob_staged WHERE ${treeUnder}`;

const uniqueViolation = '23505';

export class PostgresPathStore implements PathStore {
  constructor(private readonly connection: PostgresConnection) {}

  renamePath(
    account: string,
    container: string,
    source: string,
    destination: string,
    sourceEtag: string,
  ): Promise<RenameOutcome> {
    assert(destination !== source && !destination.startsWith(`${source}/`), 'a path is not renamed into itself');
    return this.connection.transaction(
      (client) => rename(client, account, container, source, destination, sourceEtag),
      (outcome) => outcome === 'ok',
      'containerNotFound',
    );
  }

  deleteTree(account: string, container: string, path: string, etag: string): Promise<DeleteTreeOutcome> {
    return this.connection.transaction(
      (client) => deleteTree(client, account, container, path, etag),
      (outcome) => outcome === 'ok',
      'containerNotFound',
    );
  }
}

async function deleteTree(
  client: pg.ClientBase,
  account: string,
  container: string,
  path: string,
  etag: string,
): Promise<DeleteTreeOutcome> {
  const containers = await client.query<{ id: string }>(containerSql, [account, container]);
  const containerId = containers.rows[0]?.id;
  if (containerId === undefined) return 'containerNotFound';
  const found = await client.query<{ etag: string }>(sourceSql, [containerId, path]);
  const current = found.rows[0]?.etag;
  if (current === undefined) return 'pathNotFound';
  if (current !== etag) return 'etagMismatch';
  const names = [containerId, path, pastChildren(path)];
  await client.query(deleteTreeBlobsSql, names);
  await client.query(deleteTreeStagedSql, names);
  return 'ok';
}

async function rename(
  client: pg.ClientBase,
  account: string,
  container: string,
  source: string,
  destination: string,
  sourceEtag: string,
): Promise<RenameOutcome> {
  const containers = await client.query<{ id: string }>(containerSql, [account, container]);
  const containerId = containers.rows[0]?.id;
  if (containerId === undefined) return 'containerNotFound';
  const sources = await client.query<{ etag: string }>(sourceSql, [containerId, source]);
  const etag = sources.rows[0]?.etag;
  if (etag === undefined) return 'sourceNotFound';
  if (etag !== sourceEtag) return 'etagMismatch';
  const taken = await client.query(takenSql, [containerId, destination, pastChildren(destination)]);
  if ((taken.rowCount ?? 0) > 0) return 'destinationExists';
  const names = [containerId, source, destination, pastChildren(source)];
  try {
    await client.query(renameBlobsSql, names);
    await client.query(renameStagedSql, names);
    await client.query(renameTagsSql, names);
  } catch (error) {
    // A blob created at the destination since the check: start over, and see it.
    if ((error as { code?: string }).code === uniqueViolation) throw new RaceLost();
    throw error;
  }
  return 'ok';
}
