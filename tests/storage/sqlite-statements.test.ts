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

// Find Blobs by Tags in one container with a range of values: the statement must walk
// blob_tags_by_value in its order, never sort. Written with the container's equality as a seek
// term, SQLite 3.53 drops `container` from the ORDER BY as a constant, no longer sees the index's
// (value, container, name) order, and sorts every row of the first value before its LIMIT: a page
// of a range over a tag that 1,000,000 blobs share read them all (docs/performance.md, "Find Blobs
// by Tags as the container grows").
test('Find Blobs by Tags in one container walks its index in order, with no sort, for a range too', async () => {
  const finds: { db: Database.Database; sql: string }[] = [];
  const prepare = Database.prototype.prepare;
  await statementsPreparedBy(async (tables) => {
    const blobs = await tables.openBlobStore();
    await blobs.createContainer('acct', { name: 'c', etag: '"0x1"', lastModifiedMs: 0, state: '{}' });
    const seen = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, sql: string) {
      if (/\bFROM blob_tags t\b/.test(sql)) finds.push({ db: this, sql });
      return seen.call(this, sql);
    } as typeof prepare;
    const bound = (value: string) => ({ value, inclusive: true });
    const shapes = [
      { lower: bound('a'), upper: undefined },
      { lower: bound('a'), upper: bound('z') },
      { lower: bound('v'), upper: bound('v') },
    ];
    try {
      for (const { lower, upper } of shapes) {
        await blobs.findBlobsByTags('acct', { container: 'c', key: 'k', lower, upper, after: undefined, limit: 10 });
      }
    } finally {
      Database.prototype.prepare = seen;
    }
    assert.equal(finds.length, shapes.length, 'each shape prepares its find statement');
    for (const { db, sql } of finds) {
      // Any value of the right type plans the same.
      const names = [...sql.matchAll(/@(\w+)/g)].map(([, name]) => name!);
      const values = Object.fromEntries(names.map((name) => [name, name === 'limit' ? 10 : 'v']));
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(values) as { detail: string }[];
      const details = plan.map((row) => row.detail);
      assert.ok(
        details.some((line) => /blob_tags_by_value/.test(line)),
        `the find uses the index: ${details}`,
      );
      assert.deepEqual(
        details.filter((line) => /TEMP B-TREE/.test(line)),
        [],
        `a find that sorts: ${sql}`,
      );
    }
  });
});
