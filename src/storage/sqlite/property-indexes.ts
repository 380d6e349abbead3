// The SQLite form of an automatic property index (../property-index.ts): a partial index of the
// entities of one table on one property's value, then the keys, so that an equality on the value
// reads its rows in key order. The writer builds and drops them; the readers find them by name.
import type Database from 'better-sqlite3';
import type { IndexedEquality } from '../property-index.js';

/** Index names: `cx_<table id>_<property>` (property names are restricted to [A-Za-z0-9_]). */
const namePattern = /^cx_(\d+)_([A-Za-z_][A-Za-z0-9_]*)$/;

export function indexName(tableId: number, property: string): string {
  return `cx_${tableId}_${property}`;
}

/**
 * The indexed value: the property as SQLite reads it from the JSONB (a number for Int32 and Double,
 * 1 or 0 for a Boolean, text for the rest), with an Int64, stored as annotated text, as the
 * integer it is. SQLite compares integers and reals exactly, so an equality on this value keeps
 * exactly the rows whose Int32, Int64 or Double equals a number literal (Azure REST: querying-tables-and-entities), and
 * the
 * rows whose string equals a string literal; a row of another type it may keep the predicate
 * drops. A query must spell the expression exactly so for SQLite to match it to the index.
 */
export function indexedValueSql(property: string): string {
  const path = `'$."${property}"'`;
  return `iif(props ->> '$."${property}@odata.type"' = 'Edm.Int64', CAST(props ->> ${path} AS INTEGER), props ->> ${path})`;
}

/** The literal of `condition` as it is bound against indexedValueSql. */
export function indexedLiteral(condition: IndexedEquality): number | bigint | string {
  return condition.kind === 'boolean' ? (condition.value ? 1 : 0) : condition.value;
}

/**
 * The index's WHERE term; a query that reads the index spells it too. `IS`, not `=`: SQLite's
 * planner compares a partial index's `table_id = 5` with every statement's `table_id = ?` and then
 * re-prepares that statement each time it is run (docs/architecture.md, "Partial indexes"), so one
 * property index made every scan step of every table several times as costly to start.
 */
export function indexedTableTerm(tableId: number): string {
  return `table_id IS ${tableId}`;
}

export function createIndexSql(tableId: number, property: string): string {
  return `CREATE INDEX IF NOT EXISTS ${indexName(tableId, property)} ON entities (table_id, ${indexedValueSql(property)}, pk, rk) WHERE ${indexedTableTerm(tableId)}`;
}

/**
 * Builds again, in the current form, the property indexes of an earlier form (`WHERE table_id =
 * <id>`); one pass over each indexed table, once. Run by the writer at open.
 */
export function rebuildIndexesOfEarlierForm(db: Database.Database): number {
  const earlier = db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entities' AND sql LIKE '% WHERE table_id = %'")
    .all() as { name: string; sql: string }[];
  let rebuilt = 0;
  for (const { name } of earlier) {
    const match = namePattern.exec(name);
    if (match === null) continue;
    db.transaction(() => {
      db.exec(`DROP INDEX ${name}`);
      db.exec(createIndexSql(Number(match[1]), match[2]!));
    })();
    rebuilt++;
  }
  return rebuilt;
}

/** The property indexes in the database, by table id. */
export function listIndexes(db: Database.Database): Map<number, Set<string>> {
  const indexes = new Map<number, Set<string>>();
  for (const { name } of db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entities'")
    .all() as { name: string }[]) {
    const match = namePattern.exec(name);
    if (match === null) continue;
    addIndex(indexes, Number(match[1]), match[2]!);
  }
  return indexes;
}

/** Records in `indexes` (by table id, as listIndexes answers) that table `id` has an index on `property`. */
export function addIndex(indexes: Map<number, Set<string>>, id: number, property: string): void {
  let properties = indexes.get(id);
  if (properties === undefined) indexes.set(id, (properties = new Set()));
  properties.add(property);
}
