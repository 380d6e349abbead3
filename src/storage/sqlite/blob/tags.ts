// Blob index tags in the SQLite engine (blob-store.ts, "Blob index tags"): one row per tag of a base
// blob, written by the writer's job that writes the blob's record (same commit), dropped with the
// base blob. The index blob_tags_by_value is Find Blobs by Tags' order, (account, key, value,
// container, name): a query walks only the rows of its key within its bounds, and a row of a deleted
// container (no blob_containers row of that id) is skipped by the join, until reclaim drops it with
// the container's blobs.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import type { IndexTags, TagQuery, TaggedBlob } from '../../blob-store.js';
import { boundLimit } from '../schema.js';
import { tagQueryTerms } from '../../tag-query.js';

export const blobTagsSchema = `
CREATE TABLE IF NOT EXISTS blob_tags (
  container_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  account TEXT NOT NULL,
  container TEXT NOT NULL,
  PRIMARY KEY (container_id, name, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blob_tags_by_value ON blob_tags (account, key, value, container, name);
`;

type Statement = Database.Statement<unknown[], unknown>;

/** The writer's side: called inside a job, so in the commit of the record it goes with. */
export class SqliteTagRows {
  private readonly drop: Statement;
  private readonly insert: Statement;

  constructor(db: Database.Database) {
    this.drop = db.prepare('DELETE FROM blob_tags WHERE container_id = ? AND name = ?');
    this.insert = db.prepare(
      'INSERT INTO blob_tags (container_id, name, key, value, account, container) VALUES (?, ?, ?, ?, ?, ?)',
    );
  }

  replace(account: string, containerId: number, container: string, name: string, tags: IndexTags): void {
    this.drop.run(containerId, name);
    for (const [key, value] of tags) this.insert.run(containerId, name, key, value, account, container);
  }

  dropAll(containerId: number, name: string): void {
    this.drop.run(containerId, name);
  }
}

interface FoundRow {
  readonly value: string;
  readonly container: string;
  readonly name: string;
  readonly tags: string;
}

/** The reader's side: one statement per shape of query (container or not, which bounds, a start or not). */
export class SqliteTagFinder {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Database.Database) {}

  find(account: string, query: TagQuery): TaggedBlob[] {
    assert(Number.isSafeInteger(query.limit) && query.limit >= 0, 'a find limit is a count');
    if (query.limit === 0) return [];
    const values: Record<string, unknown> = { limit: query.limit };
    const where = tagQueryTerms(
      account,
      query,
      (value) => {
        const name = `p${Object.keys(values).length}`;
        values[name] = value;
        return `@${name}`;
      },
      (column) => `+${column}`,
    );
    if (where === 'none') return [];
    const text =
      'SELECT t.value, t.container, t.name, (SELECT json_group_array(json_array(a.key, a.value)) FROM blob_tags a ' +
      'WHERE a.container_id = t.container_id AND a.name = t.name) AS tags FROM blob_tags t ' +
      'JOIN blob_containers c ON c.id = t.container_id ' +
      `WHERE ${where.join(' AND ')} ORDER BY t.value, t.container, t.name ${boundLimit('@limit')}`;
    let statement = this.statements.get(text);
    if (statement === undefined) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    const rows = statement.all(values) as FoundRow[];
    return rows.map((row) => ({
      value: row.value,
      container: row.container,
      name: row.name,
      tags: JSON.parse(row.tags) as [string, string][],
    }));
  }
}
