// The SQLite engine's statements (queues, tables, blobs) are prepared once and stay prepared: none
// binds a bare LIMIT parameter, which SQLite (3.53) plans with the bound value, so that each run with a new
// binding (better-sqlite3 binds every parameter on every run) parses and plans the statement
// again (boundLimit in src/storage/sqlite/schema.ts). Peek Messages spent a quarter of its CPU
// time so before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

/** A LIMIT (or OFFSET) whose value is a parameter on its own: `LIMIT ?`, `LIMIT @limit`, `LIMIT ?)`. */
const bareBoundLimit = /\b(LIMIT|OFFSET)\s+[?@:$]\w*\s*(\)|,|$|OFFSET\b)/i;

/** The SQL of every statement prepared while `work` runs over an in-memory SQLite store. */
async function statementsPreparedBy(work: (tables: SqliteStore) => Promise<void>): Promise<string[]> {
  const prepared: string[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    prepared.push(sql);
    return prepare.call(this, sql);
  } as typeof prepare;
  let tables: SqliteStore | undefined;
  try {
    // In memory the writer runs inline, so its statements are prepared in this thread too.
    tables = await SqliteStore.open({ location: undefined });
    await work(tables);
  } finally {
    Database.prototype.prepare = prepare;
    await tables?.close();
  }
  return prepared;
}

test('no queue statement of the SQLite engine binds its LIMIT as a bare parameter', async () => {
  const prepared = await statementsPreparedBy(async (tables) => {
    const queues = tables.openQueueStore();
    await queues.createQueue('acct', 'q', new Map());
    await queues.peekMessages('acct', 'q', { count: 1, nowMs: Date.now() });
  });
  const queueStatements = prepared.filter((sql) => /\b(messages|queues)\b/.test(sql));
  assert.ok(
    queueStatements.some((sql) => /\bLIMIT\b/.test(sql)),
    'the queue statements were seen',
  );
  assert.deepEqual(
    queueStatements.filter((sql) => bareBoundLimit.test(sql)),
    [],
    'statements whose LIMIT is a bare parameter',
  );
});

test('no table or blob statement of the SQLite engine binds its LIMIT as a bare parameter', async () => {
  const prepared = await statementsPreparedBy(async (tables) => {
    await tables.createTable('acct', 'orders');
    const table = (await tables.getTable('acct', 'orders'))!;
    await tables.scan(table, {}, { conditions: [], limit: 10 });
    await tables.listTables('acct', undefined, 10);
    // Its reads are prepared when it opens; a reclaim pass prepares the writer's.
    const blobs = await tables.openBlobStore();
    await blobs.reclaimContent(Date.now(), Date.now(), 10);
  });
  const statements = prepared.filter((sql) => /\bLIMIT\b/.test(sql) && !/\b(messages|queues)\b/.test(sql));
  for (const seen of [/\bFROM blobs\b/, /\bFROM blob_garbage\b/, /\bORDER BY pk, rk\b/, /\bFROM tables\b/]) {
    assert.ok(
      statements.some((sql) => seen.test(sql)),
      `a statement ${seen} was seen`,
    );
  }
  assert.deepEqual(
    statements.filter((sql) => bareBoundLimit.test(sql)),
    [],
    'statements whose LIMIT is a bare parameter',
  );
});
