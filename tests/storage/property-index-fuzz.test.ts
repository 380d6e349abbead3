// Automatic property indexes against random data: a store that indexes at once (autoIndexRows 1)
// answers every query exactly as one that never indexes (0), through the real query service, for
// random values of every type in the filtered property (colliding across types on purpose:
// 2, 2L, 2.0, '2', true, NaN, ±Infinity, -0, 2^53 and its neighbours) and random equality
// filters combined with key ranges and other conditions; and once indexed, an equality reads only
// rows whose indexed value matches.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../src/domain/edm.js';
import type { Entity } from '../../src/domain/entity.js';
import { encodeMinimalProperties } from '../../src/table/wire/odata.js';
import { createTableServices } from '../../src/table/service/services.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { TableStore, TableInfo, Write } from '../../src/storage/table-store.js';
import { openPostgresStore, testDatabaseUrl } from '../helpers/postgres.js';
import { makeTempDir, removeDir } from '../helpers/server.js';

const account = 'devstoreaccount1';
const entityCount = 3_000;

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const twoTo53 = 2n ** 53n;
const values: readonly (EdmValue | undefined)[] = [
  undefined,
  ...[-2, -1, 0, 1, 2, 3].map((value): EdmValue => ({ type: 'Edm.Int32', value })),
  ...[-2n, 0n, 1n, 2n, twoTo53 - 1n, twoTo53, twoTo53 + 1n].map((value): EdmValue => ({ type: 'Edm.Int64', value })),
  ...[-0, 0, 1, 2, 2.5, -2, Number(twoTo53), NaN, Infinity, -Infinity].map((value): EdmValue => ({
    type: 'Edm.Double',
    value,
  })),
  ...['', '0', '1', '2', 'a', 'A', 'é', '2.0'].map((value): EdmValue => ({ type: 'Edm.String', value })),
  { type: 'Edm.Boolean', value: true },
  { type: 'Edm.Boolean', value: false },
  { type: 'Edm.Guid', value: '00000000-0000-0000-0000-000000000002' },
];

const literals = [
  '0',
  '1',
  '2',
  '-2',
  '3',
  '2L',
  '0L',
  '9007199254740991L',
  '9007199254740992L',
  '9007199254740993L',
  '2.0',
  '2.5',
  '-0.0',
  '0.0',
  '9007199254740992.0',
  "''",
  "'2'",
  "'a'",
  "'é'",
  "'2.0'",
  'true',
  'false',
];
const extras = [
  '',
  ' and w eq 1',
  " and PartitionKey ge 'p05'",
  " and RowKey lt '0500'",
  ' and w ne 2',
  " and v ne 'zz'",
];

function entities(): Write[][] {
  const next = random(7);
  const byPartition: Write[][] = [];
  for (let i = 0; i < entityCount; i++) {
    const partition = i % 10;
    const v = values[Math.floor(next() * values.length)];
    const properties = new Map<string, EdmValue>([['w', { type: 'Edm.Int32', value: Math.floor(next() * 3) }]]);
    if (v !== undefined) properties.set('v', v);
    (byPartition[partition] ??= []).push({
      partitionKey: `p${String(partition).padStart(2, '0')}`,
      rowKey: String(i).padStart(4, '0'),
      condition: { kind: 'none' },
      action: { kind: 'put', properties },
    });
  }
  return byPartition;
}

async function load(store: TableStore, table: TableInfo): Promise<void> {
  await store.createTable(table.account, table.name);
  for (const partition of entities()) {
    for (let at = 0; at < partition.length; at += 100) {
      const result = await store.commit(table, partition.slice(at, at + 100));
      assert.ok(result.ok);
    }
  }
}

function text(entity: Entity): string {
  return `${entity.partitionKey}/${entity.rowKey} ${encodeMinimalProperties(entity.properties)}`;
}

/** Every page of `filter`, $top 50; the entities and the rows read. */
async function query(
  store: TableStore,
  table: TableInfo,
  filter: string,
): Promise<{ entities: string[]; scanned: number }> {
  const queries = createTableServices(store).queries;
  const result = { entities: [] as string[], scanned: 0 };
  let resume: { partitionKey: string; rowKey: string | undefined } | undefined;
  do {
    const page = await queries.queryEntities(table, { filter, top: 50, resume });
    result.entities.push(...page.entities.map(text));
    result.scanned += page.scanned;
    resume = page.next && { partitionKey: page.next.partitionKey, rowKey: page.next.rowKey };
  } while (resume !== undefined);
  return result;
}

const engines: { label: string; disk: boolean; postgres: boolean }[] = [
  { label: 'SQLite in memory', disk: false, postgres: false },
  { label: 'SQLite on disk', disk: true, postgres: false },
  ...(testDatabaseUrl() === undefined ? [] : [{ label: 'PostgreSQL', disk: false, postgres: true }]),
];

for (const { label, disk: onDisk, postgres } of engines) {
  describe(`property indexes against random data (${label})`, () => {
    const table: TableInfo = { account, name: 'fuzz' };
    const dirs: string[] = [];
    let indexing: TableStore;
    let never: TableStore;
    const open = (autoIndexRows: number) => {
      if (postgres) return openPostgresStore({ autoIndexRows });
      const location = onDisk ? makeTempDir() : undefined;
      if (location !== undefined) dirs.push(location);
      return SqliteStore.open({ location, autoIndexRows });
    };

    before(async () => {
      [indexing, never] = await Promise.all([open(1), open(0)]);
      await Promise.all([load(indexing, table), load(never, table)]);
    });
    after(async () => {
      await Promise.all([indexing?.close(), never?.close()]);
      for (const dir of dirs) removeDir(dir);
    });

    test('every equality filter answers as without an index', async () => {
      // The first query of `v` asks for the index; let the writer build it before comparing.
      await query(indexing, table, 'v eq 1');
      for (let attempt = 0; (await query(indexing, table, 'v eq 1')).scanned >= entityCount; attempt++) {
        assert.ok(attempt < 200, 'the index of v is built');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const next = random(11);
      const filters = literals.flatMap((literal) => extras.map((extra) => `v eq ${literal}${extra}`));
      for (let i = 0; i < 40; i++) {
        const pick = () => literals[Math.floor(next() * literals.length)];
        filters.push(
          `v eq ${pick()} and v eq ${pick()}`,
          `w eq 1 and v eq ${pick()}`,
          `(v eq ${pick()}) and not (v eq ${pick()})`,
        );
      }
      let indexed = 0;
      for (const filter of filters) {
        const [mine, theirs] = await Promise.all([query(indexing, table, filter), query(never, table, filter)]);
        assert.deepEqual(mine.entities, theirs.entities, filter);
        if (mine.scanned < theirs.scanned) indexed++;
      }
      // Most filters start with an equality the index serves (not 2^53 + 1, nor a NUL string).
      assert.ok(indexed > filters.length / 2, `${indexed} of ${filters.length} read fewer rows`);
    });

    test('writes after the index: every value moved, every answer still the same', async () => {
      const next = random(13);
      for (let round = 0; round < 5; round++) {
        const writes: Write[] = [];
        for (let i = 0; i < 100; i++) {
          const row = Math.floor(next() * entityCount);
          const v = values[Math.floor(next() * values.length)];
          const action: Write['action'] =
            next() < 0.2
              ? { kind: 'delete' }
              : next() < 0.5
                ? { kind: 'merge', properties: new Map(v === undefined ? [] : [['v', v]]) }
                : {
                    kind: 'put',
                    properties: new Map<string, EdmValue>([
                      ['w', { type: 'Edm.Int32', value: 1 }],
                      ...(v === undefined ? [] : [['v', v] as [string, EdmValue]]),
                    ]),
                  };
          writes.push({
            partitionKey: `p${String(row % 10).padStart(2, '0')}`,
            rowKey: String(row).padStart(4, '0'),
            condition: { kind: 'none' },
            action,
          });
        }
        for (const write of writes) {
          for (const store of [indexing, never]) await store.commit(table, [write]);
        }
        for (const literal of literals) {
          const [mine, theirs] = await Promise.all([
            query(indexing, table, `v eq ${literal}`),
            query(never, table, `v eq ${literal}`),
          ]);
          assert.deepEqual(mine.entities, theirs.entities, `round ${round}: v eq ${literal}`);
        }
      }
    });
  });
}
