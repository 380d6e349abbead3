// Named statements of the Blob store: each connection prepares a text once (planning costs as
// much as running most of these). A name always means one text, in every store of the process.
import type pg from 'pg';
import type { Statement } from './connection.js';

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
