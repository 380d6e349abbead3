// The SQLite engine's statements (queues, tables, blobs) are prepared once and stay prepared: none
// binds a bare LIMIT parameter, which SQLite (3.53) plans with the bound value, so that each run with a new
// binding (better-sqlite3 binds every parameter on every run) parses and plans the statement
// again (boundLimit in src/storage/sqlite/schema.ts). Peek Messages spent a quarter of its CPU
// time so before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createIndexSql } from '../../src/storage/sqlite/property-indexes.js';
import { openDatabase } from '../../src/storage/sqlite/schema.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { repoRoot } from '../helpers/server.js';

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

/** `column = literal` in a WHERE (not `>=`, `<=`, `!=`, `IS`): its column, group 2. */
const equalityTerm = /(^|[^<>!=\w])(\w+)\s*=\s*(\d|')/g;

/** Every .ts file under `dir`, as text. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => readFileSync(join(dir, file), 'utf8'));
}

test('no SQLite statement binds a column that a partial index compares with = (SQLite would re-prepare it on every run)', () => {
  const db = openDatabase(':memory:', 'writer');
  let partial: { name: string; where: string }[];
  try {
    db.exec(createIndexSql(7, 'Bucket'));
    partial = (
      db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'").all() as {
        name: string;
        sql: string;
      }[]
    ).map(({ name, sql }) => ({ name, where: sql.slice(sql.lastIndexOf(' WHERE ') + 7) }));
  } finally {
    db.close();
  }
  for (const name of ['blobs_soft_deleted_keys', 'cx_7_Bucket', 'blob_lists_dead'])
    assert.ok(
      partial.some((index) => index.name === name),
      `${name} was seen`,
    );
  const sources = sourcesUnder(join(repoRoot, 'src', 'storage', 'sqlite')).join('\n');
  const hazards = partial.flatMap(({ name, where }) =>
    [...where.matchAll(equalityTerm)]
      .map((match) => match[2]!)
      .filter((column) => new RegExp(`\\b${column}\\s*=\\s*[?@:$]`).test(sources))
      .map((column) => `${name}: ${column}`),
  );
  assert.deepEqual(hazards, [], 'partial indexes whose = term a statement binds');
});

test('a property index of the earlier form (WHERE table_id = <id>) is built again in the current form at open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cerulean-partial-'));
  const file = join(dir, 'db.sqlite');
  try {
    const first = openDatabase(file, 'writer');
    first.exec(createIndexSql(7, 'Bucket').replace(/ WHERE .*$/, ' WHERE table_id = 7'));
    first.close();
    const again = openDatabase(file, 'writer');
    const { sql } = again.prepare("SELECT sql FROM sqlite_master WHERE name = 'cx_7_Bucket'").get() as { sql: string };
    again.close();
    assert.match(sql, / WHERE table_id IS 7$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
