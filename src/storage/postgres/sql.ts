// The statements of the PostgreSQL entity store over the layout of schema.ts. Each fixed one has
// a name, which prepares it once per connection; the scan steps' texts are put together per
// request (scan.ts) from the parts here.
import { customPropertiesMax, entityBytesMax } from '../../limits.js';
import type { Statement } from './connection.js';
import { schemaName as s } from './schema.js';

/** A statement of a fixed text, prepared as `name`. */
export interface NamedSql {
  readonly name: string;
  readonly text: string;
}

// -- parts -------------------------------------------------------------------------------------

/** The table id of ($1 account, $2 lower-cased name), as a subquery: every request looks it up afresh. */
export const tableIdSql = `SELECT id FROM ${s}.tables WHERE account = $1 AND name_lower = $2`;

/**
 * The columns `doc, props` of a read: the stored JSON form, or for a row without it (written
 * before schema version 2, or merged in SQL) the jsonb text. `alias` qualifies the columns.
 */
export function storedFormSql(alias: string): string {
  return `${alias}doc, CASE WHEN ${alias}doc IS NULL THEN ${alias}props::text END AS props`;
}

/** In RETURNING: the stored name of the table of the written row (aliased `e`). */
const nameOfRowSql = `(SELECT name FROM ${s}.tables WHERE id = e.table_id) AS name`;

// -- tables ------------------------------------------------------------------------------------

export const createTableSql: NamedSql = {
  name: 'createTable',
  text:
    `INSERT INTO ${s}.tables (account, name_lower, name) VALUES ($1, $2, $3) ` +
    `ON CONFLICT (account, name_lower) DO NOTHING`,
};

/** Its entities and settings go with it (ON DELETE CASCADE), in the same transaction. */
export const deleteTableSql: NamedSql = {
  name: 'deleteTable',
  text: `DELETE FROM ${s}.tables WHERE account = $1 AND name_lower = $2 RETURNING id`,
};

export const getTableSql: NamedSql = {
  name: 'getTable',
  text: `SELECT name FROM ${s}.tables WHERE account = $1 AND name_lower = $2`,
};

export const listTablesSql: NamedSql = {
  name: 'listTables',
  text: `SELECT name FROM ${s}.tables WHERE account = $1 AND name_lower >= $2 ORDER BY name_lower LIMIT $3`,
};

// -- replication (replication.ts) ---------------------------------------------------------------

/** Where the write-ahead log stands: a primary's insert position, or a standby's last replayed one. */
export const walPositionSql: Statement = {
  name: 'wal_position',
  text:
    `SELECT pg_is_in_recovery() AS recovery, ` +
    `CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text AS lsn, ` +
    `EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming`,
  values: [],
};

// -- lone writes (commit.ts) -------------------------------------------------------------------

/** ($1, $2) table, ($3, $4) keys, $5 the version If-Match names or null, $6 the commit's Timestamp. */
export const deleteEntitySql: NamedSql = {
  name: 'deleteEntity',
  text:
    `DELETE FROM ${s}.entities e WHERE table_id = (${tableIdSql}) AND pk = $3 AND rk = $4 ` +
    `AND ($5::bigint IS NULL OR ts = $5) RETURNING $6::bigint AS ts, ${nameOfRowSql}`,
};

/** ($1, $2) table, ($3, $4) keys, $5 Timestamp, $6 jsonb, $7 the version If-Match names or null, $8 doc. */
export const replaceEntitySql: NamedSql = {
  name: 'replaceEntity',
  text:
    `UPDATE ${s}.entities e SET ts = greatest($5::bigint, ts + 1), props = $6::jsonb, doc = $8 ` +
    `WHERE table_id = (${tableIdSql}) AND pk = $3 AND rk = $4 AND ($7::bigint IS NULL OR ts = $7) ` +
    `RETURNING ts, ${nameOfRowSql}`,
};

/** The table's stored name and the entity's version now, after a lone write wrote nothing. */
export const whyNotWrittenSql: NamedSql = {
  name: 'whyNotWritten',
  text:
    `SELECT (SELECT name FROM ${s}.tables WHERE account = $1 AND name_lower = $2) AS name, ` +
    `(SELECT ts FROM ${s}.entities WHERE table_id = (${tableIdSql}) AND pk = $3 AND rk = $4) AS ts`,
};

// -- transactions (commit.ts) ------------------------------------------------------------------

/**
 * Locks the table's row (a deletion of the table waits, or has won and there is no row) and the
 * stored entities of ($3, $4), in key order as every commit locks them, so that two batches
 * cannot deadlock on each other. A missing table gives no row; a table without any of the
 * entities gives one row of nulls.
 */
export function lockEntitiesSql(withProperties: boolean): NamedSql {
  return {
    name: withProperties ? 'lockWithProperties' : 'lock',
    text:
      `WITH t AS (SELECT id, name FROM ${s}.tables WHERE account = $1 AND name_lower = $2 FOR KEY SHARE) ` +
      `SELECT t.id AS table_id, t.name, e.pk, e.rk, e.ts, e.doc, e.props FROM t LEFT JOIN LATERAL (` +
      `SELECT e.pk, e.rk, e.ts, ${withProperties ? storedFormSql('e.') : 'NULL AS doc, NULL AS props'} ` +
      `FROM ${s}.entities e JOIN unnest($3::bytea[], $4::bytea[]) AS w (pk, rk) ON e.pk = w.pk AND e.rk = w.rk ` +
      `WHERE e.table_id = t.id ORDER BY e.pk, e.rk FOR UPDATE OF e) AS e ON true`,
  };
}

/** $1 table id, $2 Timestamp, then keys, jsonb texts and docs as arrays. */
export const insertEntitiesSql: NamedSql = {
  name: 'insertEntities',
  text:
    `INSERT INTO ${s}.entities (table_id, pk, rk, ts, props, doc) SELECT $1, w.pk, w.rk, $2, w.props::jsonb, w.doc ` +
    `FROM unnest($3::bytea[], $4::bytea[], $5::text[], $6::text[]) AS w (pk, rk, props, doc) ON CONFLICT DO NOTHING`,
};

export const updateEntitiesSql: NamedSql = {
  name: 'updateEntities',
  text:
    `UPDATE ${s}.entities e SET ts = $2, props = w.props::jsonb, doc = w.doc ` +
    `FROM unnest($3::bytea[], $4::bytea[], $5::text[], $6::text[]) AS w (pk, rk, props, doc) ` +
    `WHERE e.table_id = $1 AND e.pk = w.pk AND e.rk = w.rk`,
};

export const deleteEntitiesSql: NamedSql = {
  name: 'deleteEntities',
  text:
    `DELETE FROM ${s}.entities e USING unnest($2::bytea[], $3::bytea[]) AS w (pk, rk) ` +
    `WHERE e.table_id = $1 AND e.pk = w.pk AND e.rk = w.rk`,
};

// -- group statements (groups.ts): `values` is the VALUES list of the group, numbered `i` ---------

/** The columns of an entity's address in a group's VALUES list, after `i`. */
export const addressNames = 'account, name_lower, pk, rk';

/** A row per address whose table exists: the entity's columns all null when there is no entity. */
export function readGroupSql(values: string): string {
  return (
    `SELECT k.i, t.name, e.ts, ${storedFormSql('e.')} FROM (${values}) AS k (i, ${addressNames}) ` +
    `JOIN ${s}.tables t ON t.account = k.account AND t.name_lower = k.name_lower ` +
    `LEFT JOIN ${s}.entities e ON e.table_id = t.id AND e.pk = k.pk AND e.rk = k.rk`
  );
}

/** Inserts (ON CONFLICT DO NOTHING) or upserts: a row with the Timestamp and table name of each written one. */
export function putGroupSql(values: string, upsert: boolean): string {
  const onConflict = upsert
    ? `ON CONFLICT (table_id, pk, rk) DO UPDATE ` +
      `SET ts = greatest(EXCLUDED.ts, e.ts + 1), props = EXCLUDED.props, doc = EXCLUDED.doc`
    : 'ON CONFLICT DO NOTHING';
  return (
    `WITH k (i, ${addressNames}, ts, props, doc) AS (${values}), ` +
    `w AS (INSERT INTO ${s}.entities AS e (table_id, pk, rk, ts, props, doc) ` +
    `SELECT t.id, k.pk, k.rk, k.ts, k.props::jsonb, k.doc ` +
    `FROM k JOIN ${s}.tables t ON t.account = k.account AND t.name_lower = k.name_lower ` +
    `ORDER BY k.i ${onConflict} RETURNING e.table_id, e.pk, e.rk, e.ts) ` +
    `SELECT k.i, w.ts, t.name FROM w JOIN ${s}.tables t ON t.id = w.table_id ` +
    `JOIN k ON k.account = t.account AND k.name_lower = t.name_lower AND k.pk = w.pk AND k.rk = w.rk`
  );
}

/**
 * An upper bound, per property, of what entitySizeBytes counts beyond twice the property's bytes
 * in the stored text: 8 per property, and at most 16 for a value (a Guid; a string counts
 * 2 per UTF-16 code unit + 4, and each code unit is at least one byte of its text). So
 * keyBytes + 24 x properties + 2 x the stored text's bytes >= entitySizeBytes.
 */
const mergeBytesPerName = 24;

/**
 * Merges into stored entities: the stored members with the incoming ones, and their order, from
 * the version the statement reads, written only if the row still holds that version and the
 * merged entity is certainly within the limits. A row with the Timestamp and table name of each
 * written one.
 */
export function mergeGroupSql(values: string): string {
  return (
    `WITH k (i, ${addressNames}, ts, expected, members, names, annotations, key_bytes) AS (${values}) ` +
    `UPDATE ${s}.entities e SET ts = greatest(m.new_ts, e.ts + 1), props = m.merged, doc = NULL FROM (` +
    `SELECT k.i, k.ts AS new_ts, k.key_bytes, c.table_id, c.pk, c.rk, c.ts, x.merged, ` +
    `jsonb_array_length(x.merged -> '@order') AS names ` +
    `FROM k JOIN ${s}.tables t ON t.account = k.account AND t.name_lower = k.name_lower ` +
    `JOIN ${s}.entities c ON c.table_id = t.id AND c.pk = k.pk AND c.rk = k.rk ` +
    `AND (k.expected IS NULL OR c.ts = k.expected) ` +
    `CROSS JOIN LATERAL (SELECT jsonb_set((c.props - k.annotations) || k.members, '{@order}', ` +
    `coalesce(c.props -> '@order', (SELECT coalesce(jsonb_agg(n), '[]') FROM jsonb_object_keys(c.props) AS n ` +
    `WHERE right(n, 11) <> '@odata.type')) || ` +
    `(SELECT coalesce(jsonb_agg(n ORDER BY o), '[]') FROM unnest(k.names) WITH ORDINALITY AS w (n, o) ` +
    `WHERE NOT c.props ? n)) AS merged) AS x ` +
    `ORDER BY k.i` +
    `) AS m WHERE e.table_id = m.table_id AND e.pk = m.pk AND e.rk = m.rk AND e.ts = m.ts ` +
    `AND m.names <= ${customPropertiesMax} ` +
    `AND m.key_bytes + ${mergeBytesPerName} * m.names + 2 * octet_length(m.merged::text) <= ${entityBytesMax} ` +
    `RETURNING m.i, e.ts, ${nameOfRowSql}`
  );
}

// -- scan steps (scan.ts) ----------------------------------------------------------------------

/** A step without conditions: the rows of `where` in key order, `keys` and the stored form of each. */
export function plainStepSql(keys: string, where: string, limitSql: string): string {
  return (
    `SELECT ${keys}, ts, ${storedFormSql('')}, true AS hit FROM ${s}.entities WHERE ${where} ORDER BY pk, rk ` +
    `LIMIT ${limitSql}`
  );
}

/**
 * A step with conditions. The inner query walks the window in key order (one row past it, so
 * that `lead` tells whether the window's last row is the range's), testing each row and
 * numbering it; only keys, version and the test's outcome go through the window functions. The
 * rows that close the window or the range come back as markers when they fail the conditions:
 * where they are tells how far the step got. Each match then reads its stored form by key.
 * `keys(alias)` names the key columns read back; `tableId` is an id or the subquery finding it.
 */
export function conditionalStepSql(
  keys: (alias: string) => string,
  step: {
    readonly where: string;
    readonly tests: string;
    readonly tableId: string;
    readonly windowSql: string;
    readonly limitSql: string;
  },
): string {
  const { where, tests, tableId, windowSql, limitSql } = step;
  return (
    `SELECT ${keys('x.')}, x.ts, d.doc, d.props, x.hit, x.n, x.last FROM (` +
    `SELECT pk, rk, ts, hit, n, last FROM (` +
    `SELECT pk, rk, ts, hit, row_number() OVER w AS n, lead(ts) OVER w IS NULL AS last FROM (` +
    `SELECT pk, rk, ts, (${tests}) AS hit FROM ${s}.entities WHERE ${where} ` +
    `ORDER BY pk, rk LIMIT ${windowSql}::bigint + 1` +
    `) AS examined WINDOW w AS (ORDER BY pk, rk)` +
    `) AS numbered WHERE n <= ${windowSql} AND (hit OR n = ${windowSql} OR last) ORDER BY pk, rk LIMIT ${limitSql}` +
    `) AS x LEFT JOIN LATERAL (SELECT ${storedFormSql('')} FROM ${s}.entities ` +
    `WHERE table_id = ${tableId} AND pk = x.pk AND rk = x.rk AND x.hit OFFSET 0) AS d ON true ORDER BY x.pk, x.rk`
  );
}

/**
 * An index step (`step`, over table id `tableId`) that also tells whether the name ($1, $2)
 * still means that id (the table may have been deleted, or deleted and created again, by any
 * process): one row of nulls but the id when it does not, none when there is no table.
 */
export function checkedIndexStepSql(step: string, tableId: string): string {
  return (
    `SELECT g.id AS table_id, s.* FROM (${tableIdSql}) AS g ` +
    `LEFT JOIN LATERAL (${step}) AS s ON g.id = ${tableId} ORDER BY s.n`
  );
}

// -- settings (settings.ts) --------------------------------------------------------------------

export const getTableSettingSql: NamedSql = {
  name: 'getTableSetting',
  text: `SELECT value FROM ${s}.table_settings WHERE table_id = (${tableIdSql})`,
};

export const getAccountSettingSql: NamedSql = {
  name: 'getAccountSetting',
  text: `SELECT value FROM ${s}.account_settings WHERE account = $1 AND name = $2`,
};

export const deleteAccountSettingSql: NamedSql = {
  name: 'deleteAccountSetting',
  text: `DELETE FROM ${s}.account_settings WHERE account = $1 AND name = $2`,
};

export const putAccountSettingSql: NamedSql = {
  name: 'putAccountSetting',
  text:
    `INSERT INTO ${s}.account_settings (account, name, value) VALUES ($1, $2, $3) ` +
    `ON CONFLICT (account, name) DO UPDATE SET value = EXCLUDED.value`,
};

/** The table's row, locked: a concurrent deletion of the table waits, or has won. */
export const lockTableOnlySql: NamedSql = {
  name: 'lockTableOnly',
  text: `SELECT id FROM ${s}.tables WHERE account = $1 AND name_lower = $2 FOR KEY SHARE`,
};

export const deleteTableSettingSql: NamedSql = {
  name: 'deleteTableSetting',
  text: `DELETE FROM ${s}.table_settings WHERE table_id = $1`,
};

export const putTableSettingSql: NamedSql = {
  name: 'putTableSetting',
  text:
    `INSERT INTO ${s}.table_settings (table_id, value) VALUES ($1, $2) ` +
    `ON CONFLICT (table_id) DO UPDATE SET value = EXCLUDED.value`,
};
