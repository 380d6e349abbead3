// The path store's writes in the SQLite engine (storage/path-store.ts): jobs of the one
// SqliteWriter (writer.ts), in its group commits, durable before they answer. A rename is three
// statements over the blob tables (sqlite/blob/schema.ts, sqlite/blob/tags.ts) in the group's one
// transaction: every base blob, snapshot, staged block and index tag named `source` or under
// `source/` takes its new name; block
// lists and content stay where they are. A recursive delete is five statements, the same range of
// names: the rows' block lists die and their staged blocks' content becomes garbage (reclaimed
// later, as deleteBlob leaves them), then the rows, staged blocks and tags go. A job decides
// before it writes, so it never needs its savepoint rolled back: a kill -9 leaves the old names or
// the new (all of a tree or none of it), never some of each.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import { versionKeyPrefix } from '../../blob-store.js';
import { pastChildren, type DeleteTreeOutcome, type PathStore, type RenameOutcome } from '../../path-store.js';
import type { RunJob } from '../queue-writer.js';

export const pathWriterMethods = ['renamePath', 'deleteTree'] as const satisfies readonly (keyof PathStore)[];

export type PathWriterApi = Pick<PathStore, (typeof pathWriterMethods)[number]>;

/** The writer thread's handler name of a path job. */
export function pathCallName(method: string): string {
  return `dfs.${method}`;
}

type Statement = Database.Statement<unknown[], unknown>;

// @source and everything under it (@past is pastChildren(source)) takes @destination's name.
const renamed = '@destination || substr(name, length(@source) + 1)';
// One range of the (container_id, name) key, then a filter for the names that only share the
// prefix (`a-b` lies between `a` and `a/`): an OR of the two ranges makes SQLite search by
// container_id alone, every row of the container (EXPLAIN QUERY PLAN), a cost that grew with the
// file system instead of the tree.
const under = "name >= @source AND name < @past AND (name = @source OR name >= @source || '/')";
// What a recursive delete removes of each name: the base blob and its snapshots (deleteBlob's
// `base` and `snapshots`), not previous versions nor soft-deleted rows.
const deleted = `container_id = @id AND ${under} AND (base = 1 OR snapshot < '${versionKeyPrefix}')`;
const stagedUnder = `container_id = @id AND ${under}`;

export class SqlitePathWriter implements PathWriterApi {
  private readonly sql: Record<
    | 'containerId'
    | 'sourceEtag'
    | 'taken'
    | 'renameBlobs'
    | 'renameStaged'
    | 'renameTags'
    | 'killLists'
    | 'stagedToGarbage'
    | 'deleteBlobs'
    | 'deleteStaged'
    | 'deleteTags',
    Statement
  >;

  constructor(
    db: Database.Database,
    private readonly run: RunJob,
  ) {
    const prepare = (text: string): Statement => db.prepare(text);
    this.sql = {
      containerId: prepare('SELECT id FROM blob_containers WHERE account = ? AND name = ?').pluck(),
      sourceEtag: prepare(
        "SELECT etag FROM blobs WHERE container_id = ? AND name = ? AND base = 1 AND snapshot = ''",
      ).pluck(),
      taken: prepare(
        "SELECT 1 FROM blobs WHERE container_id = @id AND name >= @name AND name < @past " +
          "AND (name = @name OR name >= @name || '/') LIMIT 1",
      ).pluck(),
      renameBlobs: prepare(`UPDATE blobs SET name = ${renamed} WHERE container_id = @id AND ${under}`),
      renameStaged: prepare(`UPDATE blob_staged SET name = ${renamed} WHERE container_id = @id AND ${under}`),
      // Index tags name their blob (sqlite/blob/tags.ts): they move with it.
      renameTags: prepare(`UPDATE blob_tags SET name = ${renamed} WHERE container_id = @id AND ${under}`),
      // As deleteBlob drops a version (sqlite/blob/writer.ts): its list dies, reclaimed a grace later.
      killLists: prepare(`UPDATE blob_lists SET dead = 1 WHERE id IN (SELECT list_id FROM blobs WHERE ${deleted})`),
      stagedToGarbage: prepare(
        `INSERT INTO blob_garbage (content_id, stamp_ms) SELECT content_id, NULL FROM blob_staged WHERE ${stagedUnder} ` +
          'ON CONFLICT (content_id) DO UPDATE SET stamp_ms = NULL',
      ),
      deleteBlobs: prepare(`DELETE FROM blobs WHERE ${deleted}`),
      deleteStaged: prepare(`DELETE FROM blob_staged WHERE ${stagedUnder}`),
      // Only base blobs have index tags (sqlite/blob/tags.ts).
      deleteTags: prepare(`DELETE FROM blob_tags WHERE container_id = @id AND ${under}`),
    };
  }

  renamePath(
    account: string,
    container: string,
    source: string,
    destination: string,
    sourceEtag: string,
  ): Promise<RenameOutcome> {
    assert(destination !== source && !destination.startsWith(`${source}/`), 'a path is not renamed into itself');
    return this.run(() => {
      const containerId = this.sql.containerId.get(account, container) as number | undefined;
      if (containerId === undefined) return 'containerNotFound';
      const etag = this.sql.sourceEtag.get(containerId, source) as string | undefined;
      if (etag === undefined) return 'sourceNotFound';
      if (etag !== sourceEtag) return 'etagMismatch';
      const taken = { id: containerId, name: destination, past: pastChildren(destination) };
      if (this.sql.taken.get(taken) !== undefined) return 'destinationExists';
      const names = { id: containerId, source, destination, past: pastChildren(source) };
      this.sql.renameBlobs.run(names);
      this.sql.renameStaged.run(names);
      this.sql.renameTags.run(names);
      return 'ok';
    });
  }

  deleteTree(account: string, container: string, path: string, etag: string): Promise<DeleteTreeOutcome> {
    return this.run(() => {
      const containerId = this.sql.containerId.get(account, container) as number | undefined;
      if (containerId === undefined) return 'containerNotFound';
      const current = this.sql.sourceEtag.get(containerId, path) as string | undefined;
      if (current === undefined) return 'pathNotFound';
      if (current !== etag) return 'etagMismatch';
      const names = { id: containerId, source: path, past: pastChildren(path) };
      this.sql.killLists.run(names);
      this.sql.stagedToGarbage.run(names);
      this.sql.deleteBlobs.run(names);
      this.sql.deleteStaged.run(names);
      this.sql.deleteTags.run(names);
      return 'ok';
    });
  }
}
