// Conditional writes on PostgreSQL, race-free without SERIALIZABLE.
//
// A lone insert, replace, upsert or delete is one statement that checks its own condition on the
// row it locks, and finds the table in the same statement (one round trip per request); inserts
// and upserts that arrive together share one (groups.ts). A lone merge into a stored entity is
// one statement too (mergeAlone).
// A batch, or a merge that statement cannot decide, runs a READ COMMITTED transaction that locks
// what it reads: the table's row FOR KEY SHARE (a concurrent delete of the table waits, or has
// won and the commit finds no table) and every stored entity it writes FOR UPDATE; it decides the
// write conditions on those locked versions (commit-plan.ts), and writes. An entity that was
// absent is inserted with ON CONFLICT DO NOTHING: if another process inserted it meanwhile the
// commit starts over and then sees it. Serialization failures and deadlocks (possible under a
// stricter default isolation, or when a table's deletion meets a batch) are retried the same way,
// a bounded number of times (connection.ts). An acknowledged commit is durable: synchronous_commit is on.
import type pg from 'pg';
import { keyedSizeBytes } from '../../domain/entity.js';
import type { CommitResult, TableInfo, Write, WriteFailure } from '../table-store.js';
import { CommitClock, conditionFailure } from '../write.js';
import { encodeIncoming, encodeKey, encodeMergedMembers, incomingText, type IncomingProperties } from './codec.js';
import { planCommit, storedKey, type PlannedRow, type StoredVersion } from './commit-plan.js';
import { RaceLost, type PostgresConnection, type Statement } from './connection.js';
import { isMissingTable } from './failures.js';
import type { EntityGroups, WriteRow } from './groups.js';
import {
  deleteEntitiesSql,
  deleteEntitySql,
  insertEntitiesSql,
  lockEntitiesSql,
  replaceEntitySql,
  updateEntitiesSql,
  whyNotWrittenSql,
} from './sql.js';

/** A commit's result and the table's name as stored (undefined: there was no table). */
export interface Committed {
  readonly result: CommitResult;
  readonly storedName: string | undefined;
}

export function failed(index: number, failure: WriteFailure): CommitResult {
  return { ok: false, index, failure };
}

export const noTable: Committed = { result: failed(0, 'tableNotFound'), storedName: undefined };

/** A row the lock statement read: the table's, and a stored entity's when there is one. */
interface LockedRow {
  readonly table_id: string;
  readonly name: string;
  readonly pk: Buffer | null;
  readonly rk: Buffer | null;
  readonly ts: string | null;
  readonly doc: string | null;
  readonly props: string | null;
}

export class Committer {
  private readonly clock = new CommitClock(0n);

  constructor(
    private readonly connection: PostgresConnection,
    private readonly groups: EntityGroups,
  ) {}

  /** The commit of `writes` to `table`, and the table's name as stored. */
  async commit(table: TableInfo, writes: readonly Write[]): Promise<Committed> {
    if (this.connection.isClosed) throw new Error('store is closed');
    const [only] = writes;
    // A lone put or delete is one statement that checks its condition itself; a merge, which
    // must read the stored properties and check the limits, and a batch run a transaction.
    if (writes.length === 1 && only!.action.kind !== 'merge') {
      try {
        return await this.commitAlone(table, only!, only!.action);
      } catch (error) {
        if (isMissingTable(error)) return noTable;
        throw error;
      }
    }
    if (writes.length === 1 && only!.action.kind === 'merge' && only!.condition.kind !== 'absent') {
      const merged = await this.mergeAlone(table, only!, only!.action);
      if (merged !== undefined) return merged;
    }
    return this.connection.transaction(
      (client) => this.applyCommit(client, table, writes),
      ({ result }) => result.ok,
      noTable,
    );
  }

  /**
   * One write as one statement (an insert or an upsert shares it with others that arrived
   * together: groups.ts). Its Timestamp is the clock's, or one tick after the version it replaces
   * if that is later (the row is locked by the statement, so no other write comes between). When
   * nothing was written, a second look tells why.
   */
  private async commitAlone(
    table: TableInfo,
    write: Write,
    action: Write['action'] & { kind: 'put' | 'delete' },
  ): Promise<Committed> {
    const { condition } = write;
    const address = {
      account: table.account,
      nameLower: table.name.toLowerCase(),
      pk: encodeKey(write.partitionKey),
      rk: encodeKey(write.rowKey),
    };
    const key = [address.account, address.nameLower, address.pk, address.rk];
    const expected = condition.kind === 'version' ? condition.timestamp.toString() : null;
    const ts = this.clock.next().toString();
    let written: WriteRow | undefined;
    if (action.kind === 'delete') {
      if (condition.kind === 'absent') return this.whyNotWritten(table, write);
      written = await this.writeOne({ ...deleteEntitySql, values: [...key, expected, ts] });
    } else if (condition.kind === 'absent' || condition.kind === 'none') {
      const { props, doc } = encodeIncoming(action);
      const put = { ...address, ts, props, doc };
      written = await (condition.kind === 'absent' ? this.groups.insert(put) : this.groups.upsert(put));
    } else {
      const { props, doc } = encodeIncoming(action);
      written = await this.writeOne({ ...replaceEntitySql, values: [...key, ts, props, expected, doc] });
    }
    if (written === undefined) return this.whyNotWritten(table, write);
    return { result: { ok: true, timestamp: this.adoptTimestamp(BigInt(written.ts)) }, storedName: written.name };
  }

  /** A lone write statement's row, if it wrote one (a missing table's failure comes as the database's). */
  private async writeOne(statement: Statement): Promise<WriteRow | undefined> {
    return (await this.connection.query<{ ts: string; name: string }>('write', statement)).rows[0];
  }

  /**
   * The Timestamp a statement wrote: the database may have chosen a later tick than the clock's
   * (one after a version another process wrote with a clock ahead of this one), and this
   * process's later commits come after it too.
   */
  private adoptTimestamp(timestamp: bigint): bigint {
    if (timestamp > this.clock.last) this.clock.next(timestamp - 1n);
    return timestamp;
  }

  /**
   * A lone merge into a stored entity as one statement (groups.ts, sql.ts mergeGroupSql): written
   * only if the row still holds the version the statement read and the merged entity is
   * certainly within the entity limits. Anything else (no entity, another version, a table gone,
   * an entity that may pass a limit) writes nothing and answers undefined: the transaction path
   * then decides on the locked row exactly.
   */
  private async mergeAlone(
    table: TableInfo,
    write: Write,
    incoming: IncomingProperties,
  ): Promise<Committed | undefined> {
    const { condition } = write;
    // The incoming members as the stored object (and their names), from the body's stored text when it has one.
    const text = incomingText(incoming);
    const written = await this.groups.merge({
      account: table.account,
      nameLower: table.name.toLowerCase(),
      pk: encodeKey(write.partitionKey),
      rk: encodeKey(write.rowKey),
      ts: this.clock.next().toString(),
      expected: condition.kind === 'version' ? condition.timestamp.toString() : null,
      members: text?.doc ?? encodeMergedMembers(incoming.properties),
      names: text?.names ?? [...incoming.properties.keys()],
      keyBytes: keyedSizeBytes(write.partitionKey, write.rowKey, 0),
    });
    if (written === undefined) return undefined;
    return { result: { ok: true, timestamp: this.adoptTimestamp(BigInt(written.ts)) }, storedName: written.name };
  }

  /** The failure of a lone write that wrote nothing, from the table and the entity as they are now. */
  private async whyNotWritten(table: TableInfo, write: Write): Promise<Committed> {
    const { rows } = await this.connection.query<{ name: string | null; ts: string | null }>('read', {
      ...whyNotWrittenSql,
      values: [table.account, table.name.toLowerCase(), encodeKey(write.partitionKey), encodeKey(write.rowKey)],
    });
    const row = rows[0]!;
    if (row.name === null) return noTable;
    const current = row.ts === null ? undefined : BigInt(row.ts);
    const missing = write.action.kind === 'delete' && current === undefined ? 'notFound' : undefined;
    const failure = conditionFailure(current, write.condition) ?? missing;
    // Otherwise another process changed the entity between the two statements: the write failed
    // on the entity as it was then.
    return {
      result: failed(0, failure ?? (write.condition.kind === 'absent' ? 'exists' : 'versionMismatch')),
      storedName: row.name,
    };
  }

  /** The transaction's body: locks, decides (commit-plan.ts), writes. */
  private async applyCommit(client: pg.PoolClient, table: TableInfo, writes: readonly Write[]): Promise<Committed> {
    const withProperties = writes.some((write) => write.action.kind === 'merge');
    const locked = await client.query<LockedRow>({
      ...lockEntitiesSql(withProperties),
      values: [
        table.account,
        table.name.toLowerCase(),
        writes.map((write) => encodeKey(write.partitionKey)),
        writes.map((write) => encodeKey(write.rowKey)),
      ],
    });
    const tableId = locked.rows[0]?.table_id;
    if (tableId === undefined) return noTable;
    const storedName = locked.rows[0]!.name;
    const plan = planCommit(writes, storedVersions(locked.rows));
    if (!plan.ok) return { result: failed(plan.index, plan.failure), storedName };
    // One Timestamp for the whole commit, later than any version it replaces.
    const timestamp = this.clock.next(plan.newestReplacedTs);
    await writeRows(client, tableId, timestamp.toString(), plan);
    return { result: { ok: true, timestamp }, storedName };
  }
}

/** The stored entities the lock statement read, by storedKey. */
function storedVersions(rows: readonly LockedRow[]): Map<string, StoredVersion> {
  const stored = new Map<string, StoredVersion>();
  for (const row of rows) {
    if (row.pk !== null)
      stored.set(storedKey(row.pk, row.rk!), { ts: BigInt(row.ts!), doc: row.doc, props: row.props });
  }
  return stored;
}

/**
 * The plan's rows written at Timestamp `ts`; an insert that met a row another process wrote
 * meanwhile loses the race.
 */
async function writeRows(
  client: pg.PoolClient,
  tableId: string,
  ts: string,
  plan: {
    readonly inserts: readonly PlannedRow[];
    readonly updates: readonly PlannedRow[];
    readonly deletes: readonly Omit<PlannedRow, 'properties'>[];
  },
): Promise<void> {
  const columns = (rows: readonly PlannedRow[]) => [
    rows.map((row) => row.pk),
    rows.map((row) => row.rk),
    rows.map((row) => row.properties.props),
    rows.map((row) => row.properties.doc),
  ];
  if (plan.inserts.length > 0) {
    const result = await client.query({ ...insertEntitiesSql, values: [tableId, ts, ...columns(plan.inserts)] });
    if (result.rowCount !== plan.inserts.length) throw new RaceLost();
  }
  if (plan.updates.length > 0)
    await client.query({ ...updateEntitiesSql, values: [tableId, ts, ...columns(plan.updates)] });
  if (plan.deletes.length > 0) {
    await client.query({
      ...deleteEntitiesSql,
      values: [tableId, plan.deletes.map((row) => row.pk), plan.deletes.map((row) => row.rk)],
    });
  }
}
