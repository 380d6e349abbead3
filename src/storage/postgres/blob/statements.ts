// Named statements of the Blob store: each connection prepares a text once (planning costs as
// much as running most of these). A name always means one text, in every store of the process.
import type pg from 'pg';
import { commitWith } from '../commit-with.js';
import type { Statement } from '../connection.js';
import { schemaName as s } from '../schema.js';

const names = new Map<string, string>();

/** The statement `text`, named, with `values`. */
export function named(text: string, values: readonly unknown[]): Statement {
  let name = names.get(text);
  if (name === undefined) {
    name = `blob_${names.size}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** `statement` on a client of a transaction. */
export function run<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.ClientBase,
  statement: Statement,
): Promise<pg.QueryResult<Row>> {
  return client.query<Row>({ name: statement.name, text: statement.text, values: [...statement.values] });
}

/**
 * `statement`, the last of a transaction, with its COMMIT in the same round trip (commit-with.ts):
 * its every failure must be an error of the database.
 */
export function runAndCommit<Row extends pg.QueryResultRow = pg.QueryResultRow>(
  client: pg.ClientBase,
  statement: Statement,
): Promise<pg.QueryResult<Row>> {
  return commitWith<Row>(client, { name: statement.name, text: statement.text, values: [...statement.values] });
}

/**
 * The complete content of ids `ids` (an SQL array), locked FOR KEY SHARE for a write that names
 * it: reclaim, which holds content FOR UPDATE while it decides (postgres/blob/reclaim.ts), cannot take it
 * now, and content it has begun removing (size -1) is seen so once the write has waited for it.
 * A write compares the sizes with those it states and counts the rows it wrote.
 */
export const lockedContents = (ids: string): string =>
  `SELECT id, size_bytes FROM ${s}.blob_contents WHERE id = ANY(${ids}) AND size_bytes >= 0 FOR KEY SHARE`;
