// Faults inside the SQLite engine (after SQLite's test_vfs, one level up): the writer's
// database fails its Nth statement, for every N of a workload of group commits (several commits,
// settings and table changes issued together, so they share one transaction with a savepoint
// each). Whatever N is, every job that resolved is applied whole, every job that rejected left no
// trace (its whole group is rolled back), and the writer goes on working afterwards. The expected
// state is the model store's after the resolved jobs alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type Database from 'better-sqlite3';
import { decodeKey, decodeProperties } from '../../src/storage/sqlite/codec.js';
import { openDatabase, selectTableSql } from '../../src/storage/sqlite/schema.js';
import { encodeWrites, SqliteWriter } from '../../src/storage/sqlite/writer.js';
import type { SettingKey, TableStore, TableInfo, Write } from '../../src/storage/table-store.js';
import { ModelStore } from './conformance/model.js';
import {
  absent,
  del,
  edm,
  merge,
  present,
  props,
  propertiesText,
  put,
  show,
  version,
  walk,
} from './conformance/support.js';

const account = 'acct';
const table: TableInfo = { account, name: 'Faults' };
const injected = 'injected SQLite fault';

/** The writer's database, failing its `failAt`th statement execution (run, get, all, iterate). */
class FaultyDatabase {
  executions = 0;
  failAt = Infinity;
  readonly db: Database.Database;

  constructor(readonly real: Database.Database) {
    const faulty = this;
    this.db = new Proxy(real, {
      get(target, property) {
        if (property === 'prepare') return (sql: string) => faulty.statement(target.prepare(sql));
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  private statement(real: Database.Statement): Database.Statement {
    const faulty = this;
    const proxy: Database.Statement = new Proxy(real, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (['run', 'get', 'all', 'iterate'].includes(String(property)) && ++faulty.executions === faulty.failAt)
            throw new Error(injected);
          const result: unknown = value.apply(target, args);
          return result === target ? proxy : result; // chained setters (safeIntegers, raw) stay wrapped
        };
      },
    });
    return proxy;
  }

  close(): void {
    this.real.close();
  }
}

/** One job of the workload, on the writer and the same on the model. */
interface Job {
  readonly name: string;
  writer(writer: SqliteWriter): Promise<unknown>;
  model(model: TableStore): Promise<unknown>;
}

function commitJob(name: string, writes: Write[]): Job {
  const encoded = encodeWrites(writes);
  return { name, writer: (w) => w.commit(account, table.name, encoded), model: (m) => m.commit(table, writes) };
}

/** Groups of jobs issued together; versions are not known ahead, so conditions use absent/present. */
function workload(): Job[][] {
  const settingJob = (name: string, key: SettingKey, value: string): Job => ({
    name,
    writer: (w) => w.putSettings(account, [{ key, value }]),
    model: (m) => m.putSettings(account, [{ key, value }]),
  });
  return [
    [
      commitJob('batch A', [
        put('p', 'a1', props({ n: edm.int32(1) }), absent),
        put('p', 'a2'),
        merge('p', 'x', props({ m: edm.boolean(true) }), present),
        del('p', 'y'),
      ]),
      commitJob('batch B', [put('q', 'b1', props(), absent), put('q', 'b2', props({ s: edm.string('b2') }))]),
      settingJob('account setting', { scope: 'account', name: 'cors' }, 'v1'),
    ],
    [
      {
        name: 'create Other',
        writer: (w) => w.createTable(account, 'Other'),
        model: (m) => m.createTable(account, 'Other'),
      },
      commitJob('batch C', [put('p', 'c1'), merge('p', 'x', props({ k: edm.int64(7n) }))]),
      commitJob('failing batch', [put('p', 'c2'), put('p', 'x', props(), version(1n))]),
    ],
    [
      {
        name: 'delete Other',
        writer: (w) => w.deleteTable(account, 'Other'),
        model: (m) => m.deleteTable(account, 'Other'),
      },
      settingJob('table setting', { scope: 'table', table: table.name }, '[acl]'),
    ],
  ];
}

/** A job's answer without the commit timestamp, which the two stores choose each their own way. */
function answer(value: unknown): string {
  if (typeof value !== 'object' || value === null || !('timestamp' in value)) return show(value);
  const { timestamp: _timestamp, ...rest } = value as { timestamp: bigint };
  return show(rest);
}

/** Everything the workload can touch, read straight from the database: entities without versions. */
function databaseState(db: Database.Database): string {
  const id = (db.prepare(selectTableSql).get(account, table.name.toLowerCase()) as { id: number } | undefined)?.id;
  const rows = db
    .prepare('SELECT pk, rk, json(props) AS props FROM entities WHERE table_id = ? ORDER BY pk, rk')
    .all(id) as { pk: Buffer; rk: Buffer; props: string }[];
  const entities = rows.map(
    (row) => `${decodeKey(row.pk)}/${decodeKey(row.rk)}: ${propertiesText(decodeProperties(row.props))}`,
  );
  const tables = (
    db.prepare('SELECT name FROM tables WHERE account = ? ORDER BY name_lower').all(account) as { name: string }[]
  ).map((t) => t.name);
  const settings = db
    .prepare('SELECT scope, name, value FROM settings WHERE account = ? ORDER BY scope, name')
    .all(account);
  return show({ entities, tables, settings });
}

async function modelState(model: ModelStore): Promise<string> {
  const entities = (await walk(model, table, {})).entities.map(
    (e) => `${e.partitionKey}/${e.rowKey}: ${propertiesText(e.properties)}`,
  );
  const tables = (await model.listTables(account, undefined, 100)).map((t) => t.name);
  const settings = [];
  const cors = await model.getSetting(account, { scope: 'account', name: 'cors' });
  if (cors !== undefined) settings.push({ scope: 'service', name: 'cors', value: cors });
  const acl = await model.getSetting(account, { scope: 'table', table: table.name });
  if (acl !== undefined) settings.push({ scope: 'table', name: table.name.toLowerCase(), value: acl });
  return show({ entities, tables, settings });
}

/** The table and two entities the workload changes, on both sides, before any fault is armed. */
async function seed(writer: SqliteWriter, model: ModelStore): Promise<void> {
  const writes = [put('p', 'x', props({ v: edm.int32(1) })), put('p', 'y')];
  await writer.createTable(account, table.name);
  await model.createTable(account, table.name);
  await commitJob('seed', writes).writer(writer);
  await model.commit(table, writes);
}

/** Runs the workload with statement `failAt` failing; returns how many statements ran. */
async function runWithFault(failAt: number): Promise<{ executions: number; faults: number }> {
  const faulty = new FaultyDatabase(openDatabase(':memory:', 'writer'));
  try {
    const writer = new SqliteWriter(faulty.db);
    const model = new ModelStore();
    await seed(writer, model);
    faulty.executions = 0;
    faulty.failAt = failAt;
    let faults = 0;
    for (const group of workload()) {
      const results = await Promise.allSettled(group.map((job) => job.writer(writer)));
      for (const [i, result] of results.entries()) {
        if (result.status === 'rejected') {
          assert.match(
            String(result.reason),
            new RegExp(injected),
            `${group[i]!.name}: only the injected fault rejects`,
          );
          faults++;
          continue;
        }
        // A job that resolved is applied: replay it on the model, in the writer's order.
        assert.equal(
          answer(await group[i]!.model(model)),
          answer(result.value),
          `${group[i]!.name}: the same answer as the model`,
        );
      }
      assert.equal(
        databaseState(faulty.real),
        await modelState(model),
        `statement ${failAt} failing: only whole, resolved jobs applied`,
      );
    }
    const executions = faulty.executions;
    // The writer works on after a rolled-back group.
    faulty.failAt = Infinity;
    const after = [put('r', 'after')];
    assert.deepEqual(
      ((await commitJob('after', after).writer(writer)) as { ok: boolean }).ok,
      true,
      'a commit after the fault',
    );
    await model.commit(table, after);
    assert.equal(databaseState(faulty.real), await modelState(model), 'and its state is still the model');
    return { executions, faults };
  } finally {
    faulty.close();
  }
}

test('SQLite writer: a statement failing anywhere in a group commit rolls back whole jobs only, and the writer recovers', async (t) => {
  const { executions } = await runWithFault(Infinity);
  let faulted = 0;
  for (let failAt = 1; failAt <= executions; failAt++) {
    const { faults } = await runWithFault(failAt);
    assert.ok(faults > 0, `statement ${failAt} of ${executions} failing reached some job`);
    faulted++;
  }
  t.diagnostic(`${executions} statements in the workload, each failed once (${faulted} runs)`);
});
