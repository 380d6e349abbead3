// Automatic property indexes on PostgreSQL (../property-index.ts decides when and for which
// conditions). One index per (table, property): a partial B-tree over the shared entities table,
//   CREATE INDEX "ci<table id>_<property>" ON entities ((<value>), pk, rk) WHERE table_id = <id>
// where <value> is the property's value as jsonb with Int64 (an annotated string, codec.ts) and
// the Double -0 (the annotated string "-0") turned into numbers, so that jsonb equality is exact
// numeric equality across Int32, Int64 and Double, and string equality for strings. An equality
// step reads the matching rows in key order straight from it.
//
// Why the index has no table_id column: the partial predicate already pins it, and the planner
// drops `table_id = <id>` from the index conditions as implied, so a leading table_id column
// would leave the scan without a start key (it walked the whole index: measured, 2761 buffers
// for 300 rows, against 5 without the column).
//
// Builds and drops run in the background, one at a time per process, on a connection of their
// own without a statement timeout, CONCURRENTLY (writers never wait), and under one advisory
// lock shared by every Cerulean process on the database: so the count of a table's indexes
// (indexesPerTableMax) is race-free, an INVALID index found under the lock is the remains of a
// build that died (dropped, then built again), and a drop never meets a build of the same table.
//
// Each process knows which indexes exist from the catalog: read when it opens the store, again
// (all of it) at most once a minute while filtered scans run, and for a table whenever its own
// demand for an index there fires. So an index another process built is in use here within a
// minute, and one dropped by hand is forgotten within a minute (until then the step's SQL stays
// correct: the planner walks the primary key instead, without the window bound). A table's indexes are
// named by its id, which no later table reuses (an identity column), and the step that uses one
// checks in the same statement that the name still means that id (scanStep): a table deleted
// and created again by another process is then read without the index, and forgotten here.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { PropertyCondition, TableInfo } from '../table-store.js';
import {
  IndexDemand,
  indexedEquality,
  indexesPerTableMax,
  indexServing,
  type IndexedEquality,
} from '../property-index.js';
import type { PostgresConnection } from './connection.js';
import { schemaName as s } from './schema.js';

/** Any constant: the advisory lock every process takes around its index DDL. */
const indexLockKey = 0x63657269; // 'ceri'
/** Builds waiting in one process at most; demand beyond them is dropped (asked again later). */
const pendingBuildsMax = 16;
/** Index names start with this, then the table id and `_` (the catalog is searched by it). */
const namePrefix = 'ci';
/** How often, at most, a process reads the whole catalog of indexes again (while it scans). */
export const catalogRefreshMsDefault = 60_000;
/** PostgreSQL truncates identifiers to 63 bytes. */
const identifierBytesMax = 63;

/** An index step: the table's id and the condition the index serves. */
export interface IndexedLookup {
  readonly tableId: string;
  readonly condition: IndexedEquality;
}

/** What a process knows of one table's indexes. */
interface KnownTable {
  readonly id: string;
  readonly properties: Set<string>;
}

/**
 * The indexed value of `property` (checked by indexedEquality's name rule: no quoting needed).
 * Every part is an immutable builtin, as an index expression must be; a step's condition repeats
 * it word for word so that the planner matches the index.
 */
export function indexedValueSql(property: string): string {
  const type = `props ->> '${property}@odata.type'`;
  const text = `props ->> '${property}'`;
  return `(CASE WHEN ${type} = 'Edm.Int64' OR (${type} = 'Edm.Double' AND ${text} = '-0') THEN (${text})::jsonb ELSE props -> '${property}' END)`;
}

/**
 * The literal of `condition` as jsonb text: a number as its exact digits (an integer) or its
 * shortest text (which names exactly one double, whose stored text is the same shortest text),
 * a string as JSON, a Boolean as itself.
 */
export function indexedLiteral(condition: IndexedEquality): string {
  const value = condition.value as number | bigint | string | boolean;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value).toString() : String(value);
  return JSON.stringify(value);
}

/** The index's name: `ci<id>_<property>`, shortened with a hash where that passes 63 bytes. */
export function indexName(tableId: string, property: string): string {
  const name = `${namePrefix}${tableId}_${property}`;
  if (name.length <= identifierBytesMax) return name;
  const hash = createHash('sha256').update(property).digest('hex').slice(0, 12);
  return `${name.slice(0, identifierBytesMax - hash.length - 1)}_${hash}`;
}

/** The property an index of ours serves, from its definition (names may be shortened). */
function propertyOfDefinition(definition: string): string | undefined {
  return /props ->> '([A-Za-z0-9_]+)@odata\.type'/.exec(definition)?.[1];
}

function tableKey(account: string, nameLower: string): string {
  return `${account}\u0000${nameLower}`;
}

/** One of our indexes as the catalog lists it. */
interface CatalogIndex {
  readonly name: string;
  readonly valid: boolean;
  readonly definition: string;
  readonly table_id: string;
  /** Null for an index whose table is gone (its process died before dropping it). */
  readonly account: string | null;
  readonly name_lower: string | null;
}

const catalogSql =
  `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS definition, x.table_id, t.account, t.name_lower ` +
  `FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid ` +
  `CROSS JOIN LATERAL (SELECT substring(c.relname FROM '^${namePrefix}([0-9]+)_')::bigint AS table_id) AS x ` +
  `LEFT JOIN ${s}.tables t ON t.id = x.table_id ` +
  `WHERE i.indrelid = '${s}.entities'::regclass AND x.table_id IS NOT NULL`;

export class PropertyIndexes {
  private readonly demand: IndexDemand;
  private readonly known = new Map<string, KnownTable>();
  /** DDL jobs run one after another on this chain. */
  private chain: Promise<void> = Promise.resolve();
  /** Builds queued or under way, by table key and property. */
  private readonly building = new Set<string>();
  /** The connection of the build running now, once connected: close ends it. */
  private runningBuild: pg.Client | undefined;
  private closed = false;
  /** When the catalog may be read again (refreshIfDue), in Date.now() ms; undefined while it is read. */
  private refreshAtMs: number | undefined;

  private readonly pool: pg.Pool;

  constructor(
    /** The database (connection.ts): its pool, and sessions of their own for index builds. */
    private readonly connection: PostgresConnection,
    autoIndexRows: number,
    private readonly catalogRefreshMs: number,
  ) {
    this.pool = connection.pool;
    this.demand = new IndexDemand(autoIndexRows);
  }

  /** Learns every valid index, and clears away (in the background) what dead builds and deleted tables left. */
  async load(): Promise<void> {
    const { rows } = await this.pool.query<CatalogIndex>(catalogSql);
    this.learn(rows);
    this.refreshAtMs = Date.now() + this.catalogRefreshMs;
    if (rows.some((row) => !row.valid || row.account === null)) {
      this.enqueue('drop', async (client) => {
        const { rows: fresh } = await client.query<CatalogIndex>(catalogSql);
        for (const row of fresh) if (!row.valid || row.account === null) await dropIndex(client, row.name);
      });
    }
  }

  /** Reads the whole catalog again in the background, if it is time: what it lacks is forgotten. */
  refreshIfDue(): void {
    if (this.closed || this.refreshAtMs === undefined || Date.now() < this.refreshAtMs) return;
    this.refreshAtMs = undefined;
    this.pool
      .query<CatalogIndex>(catalogSql)
      .then(
        ({ rows }) => {
          this.known.clear();
          this.learn(rows);
        },
        () => undefined, // the next refresh tries again
      )
      .finally(() => {
        this.refreshAtMs = Date.now() + this.catalogRefreshMs;
      });
  }

  /**
   * The index a step with `conditions` on `table` can read (any of them an index serves), if this process knows one.
   */
  lookup(table: TableInfo, conditions: readonly PropertyCondition[]): IndexedLookup | undefined {
    const known = this.known.get(tableKey(table.account, table.name.toLowerCase()));
    const condition = known && indexServing(conditions, (property) => known.properties.has(property));
    return condition && { tableId: known!.id, condition };
  }

  /** Hears of a step that examined `examined` rows without an index; may start a build. */
  noteScan(table: TableInfo, conditions: readonly PropertyCondition[], examined: number): void {
    const nameLower = table.name.toLowerCase();
    const key = tableKey(table.account, nameLower);
    // A step whose conditions an index under way will serve waits for it rather than asking for
    // another (`w eq 3 and v eq 7` while v's index is being built does not earn w one).
    const building = (property: string) => this.building.has(`${key}\u0000${property}`);
    const condition = indexedEquality(conditions, building);
    if (condition === undefined || this.closed || building(condition.property)) return;
    const indexes = this.known.get(key)?.properties.size ?? 0;
    if (!this.demand.note(key, condition.property, examined, indexes)) return;
    const buildKey = `${key}\u0000${condition.property}`;
    if (this.building.size >= pendingBuildsMax) {
      this.demand.failed(key, condition.property);
      return;
    }
    this.building.add(buildKey);
    this.enqueue(
      'build',
      (client) => this.build(client, table.account, nameLower, condition.property),
      undefined,
      () => this.building.delete(buildKey),
      () => this.demand.failed(key, condition.property),
    );
  }

  /** The table `id` under `lookup`'s name is gone or another now: read without the index. */
  stale(table: TableInfo, tableId: string): void {
    const key = tableKey(table.account, table.name.toLowerCase());
    if (this.known.get(key)?.id === tableId) this.known.delete(key);
  }

  /** The table (id `tableId`) was deleted: its indexes go, in the background. */
  deleted(account: string, name: string, tableId: string): void {
    const key = tableKey(account, name.toLowerCase());
    this.known.delete(key);
    this.demand.forget(key);
    const indexesSql = `SELECT name FROM (${catalogSql}) AS c WHERE table_id = $1`;
    this.enqueue(
      'drop',
      async (client) => {
        for (const row of (await client.query<{ name: string }>(indexesSql, [tableId])).rows)
          await dropIndex(client, row.name);
      },
      // Most tables have none: a look on the pool spares them a connection of their own. (An
      // index another process is about to build for the table is left behind: the next start drops it.)
      async () => (await this.pool.query(indexesSql, [tableId])).rows.length > 0,
    );
  }

  /**
   * Stops: a build under way is abandoned (its connection ended: PostgreSQL leaves an INVALID
   * index, which the next build or start under the lock drops) and queued builds do not start;
   * drops, which are short, are waited for.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.runningBuild?.end().catch(() => undefined);
    await this.chain;
  }

  private learn(rows: readonly CatalogIndex[]): void {
    for (const row of rows) {
      const property = propertyOfDefinition(row.definition);
      if (!row.valid || row.account === null || row.name_lower === null || property === undefined) continue;
      // The id goes into step SQL as a literal.
      assert.match(row.table_id, /^[0-9]+$/, 'a table id is a whole number');
      const key = tableKey(row.account, row.name_lower);
      let known = this.known.get(key);
      if (known?.id !== row.table_id) this.known.set(key, (known = { id: row.table_id, properties: new Set() }));
      known.properties.add(property);
    }
  }

  /** Builds the index of (table, property) unless the table is gone, has it, or has its share. */
  private async build(client: pg.Client, account: string, nameLower: string, property: string): Promise<void> {
    const { rows: tables } = await client.query<{ id: string }>(
      `SELECT id FROM ${s}.tables WHERE account = $1 AND name_lower = $2`,
      [account, nameLower],
    );
    const tableId = tables[0]?.id;
    if (tableId === undefined) return;
    const catalog = async () =>
      (await client.query<CatalogIndex>(`SELECT * FROM (${catalogSql}) AS c WHERE table_id = $1`, [tableId])).rows;
    const present = await catalog();
    for (const row of present) if (!row.valid) await dropIndex(client, row.name);
    const valid = present.filter((row) => row.valid);
    this.learn(valid);
    const name = indexName(tableId, property);
    if (valid.some((row) => row.name === name) || valid.length >= indexesPerTableMax) return;
    await client.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS "${name}" ON ${s}.entities (${indexedValueSql(property)}, pk, rk) WHERE table_id = ${tableId}`,
    );
    const built = await catalog();
    if (!built.some((row) => row.name === name && row.valid))
      throw new Error(`index ${name} is not valid after its build`);
    this.learn(built);
  }

  /**
   * Runs `job` after the jobs before it, on a connection of its own holding the DDL lock, unless
   * `needed` says there is nothing to do. `settled` runs in any case, `failed` when the job threw.
   */
  private enqueue(
    kind: 'build' | 'drop',
    job: (client: pg.Client) => Promise<void>,
    needed?: () => Promise<boolean>,
    settled?: () => void,
    failed?: () => void,
  ): void {
    this.chain = this.chain.then(async () => {
      try {
        if (this.closed && kind === 'build') throw new Error('closed');
        if (needed !== undefined && !(await needed())) return;
        await this.withLockedConnection(kind, job);
      } catch {
        // Nothing is lost: a failed build is asked for again by later scans (demand.failed); an
        // index a failed drop leaves is cleared at the next start.
        failed?.();
      } finally {
        settled?.();
      }
    });
  }

  private async withLockedConnection(kind: 'build' | 'drop', job: (client: pg.Client) => Promise<void>): Promise<void> {
    // No statement timeout: a build reads the whole entities table, however long that takes.
    const client = this.connection.sessionClient('cerulean-index');
    try {
      await client.connect();
      if (kind === 'build') {
        if (this.closed) throw new Error('closed');
        this.runningBuild = client;
      }
      // Session level: released when the job ends, or with the connection if this process dies.
      await client.query('SELECT pg_advisory_lock($1)', [indexLockKey]);
      await job(client);
    } finally {
      this.runningBuild = undefined;
      await client.end().catch(() => undefined);
    }
  }
}

async function dropIndex(client: pg.Client, name: string): Promise<void> {
  await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${s}."${name}"`);
}
