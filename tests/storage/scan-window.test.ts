// TableStore.scan's bounded steps on the real SQLite store, in memory (the HTTP thread's
// connection) and on disk (the scan threads), and on PostgreSQL when the run has a database: every row of the range is
// examined exactly once
// across the steps, no step examines more than its window, and no matching row is lost at a
// window's edge.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EdmValue } from '../../src/domain/edm.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { PropertyCondition, TableStore, TableInfo } from '../../src/storage/table-store.js';
import { openPostgresStore, testDatabaseUrl } from '../helpers/postgres.js';
import { compareKeys, keyText, type Key } from '../helpers/query.js';
import { type KeyBound, type KeyRange } from '../../src/domain/keys.js';

const entityCount = 300;
const partitions = 7;

function keys(i: number): { partitionKey: string; rowKey: string } {
  return { partitionKey: `p${i % partitions}`, rowKey: `r${String(i).padStart(4, '0')}` };
}

/** `n` cycles through Int32, Int64 and Double values, and a string now and then. */
function valueOf(i: number): EdmValue {
  switch (i % 4) {
    case 0:
      return { type: 'Edm.Int32', value: i % 10 };
    case 1:
      return { type: 'Edm.Int64', value: BigInt(i % 10) };
    case 2:
      return { type: 'Edm.Double', value: (i % 10) + 0.5 };
    default:
      return { type: 'Edm.String', value: String(i % 10) };
  }
}

function numeric(value: EdmValue): number | undefined {
  return value.type === 'Edm.String' || value.type === 'Edm.Boolean' ? undefined : Number(value.value);
}

const keyOfRow = (row: { partitionKey: string; rowKey: string }): Key => [row.partitionKey, row.rowKey];
const byKey = (a: { partitionKey: string; rowKey: string }, b: { partitionKey: string; rowKey: string }) =>
  compareKeys(keyOfRow(a), keyOfRow(b));

/** Whether `key` lies inside `range` (TableStore.KeyBound: without a RowKey a bound is on PartitionKey alone). */
function inside(key: Key, { lower, upper }: KeyRange): boolean {
  const side = (bound: KeyBound): number =>
    bound.rowKey === undefined
      ? compareKeys([key[0], ''], [bound.partitionKey, ''])
      : compareKeys(key, [bound.partitionKey, bound.rowKey]);
  const above = (bound: KeyBound) => side(bound) > 0 || (bound.inclusive && side(bound) === 0);
  const below = (bound: KeyBound) => side(bound) < 0 || (bound.inclusive && side(bound) === 0);
  return (lower === undefined || above(lower)) && (upper === undefined || below(upper));
}

/** Opens a store whose steps examine at most `stepExamineMax` rows; `dirs` collects what to remove afterwards. */
type OpenStore = (stepExamineMax: number, dirs: string[]) => Promise<TableStore>;

const setups: readonly { label: string; open: OpenStore }[] = [
  { label: 'in memory', open: (stepExamineMax) => SqliteStore.open({ location: undefined, stepExamineMax }) },
  {
    label: 'on disk, scan threads',
    open: (stepExamineMax, dirs) => {
      const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-scan-'));
      dirs.push(location);
      return SqliteStore.open({ location, stepExamineMax });
    },
  },
  ...(testDatabaseUrl() === undefined
    ? []
    : [{ label: 'PostgreSQL', open: (stepExamineMax: number) => openPostgresStore({ stepExamineMax }) }]),
];

for (const setup of setups) {
  describe(`conditional scan steps (${setup.label})`, () => {
    // One store per window size: the window is the engine's own setting.
    const windows = [7, 11, 1, 1000] as const;
    const stores = new Map<number, TableStore>();
    const locations: string[] = [];
    const table: TableInfo = { account: 'devstoreaccount1', name: 'windows' };
    const all = Array.from({ length: entityCount }, (_, i) => ({ ...keys(i), value: valueOf(i) })).sort(byKey);

    before(async () => {
      for (const stepExamineMax of windows) {
        const store = await setup.open(stepExamineMax, locations);
        stores.set(stepExamineMax, store);
        await store.createTable(table.account, table.name);
        const writes = all.map(({ partitionKey, rowKey, value }) => ({
          partitionKey,
          rowKey,
          condition: { kind: 'none' } as const,
          action: { kind: 'put' as const, properties: new Map([['n', value]]) },
        }));
        const result = await store.commit(table, writes);
        assert.ok(result.ok);
      }
    });
    after(async () => {
      for (const store of stores.values()) await store.close();
      for (const location of locations) rmSync(location, { recursive: true, force: true });
    });

    const ranges: { name: string; range: KeyRange }[] = [
      { name: 'the whole table', range: {} },
      {
        name: 'one partition',
        range: { lower: { partitionKey: 'p3', inclusive: true }, upper: { partitionKey: 'p3', inclusive: true } },
      },
      {
        name: 'a key range across partitions',
        range: {
          lower: { partitionKey: 'p1', rowKey: 'r0100', inclusive: false },
          upper: { partitionKey: 'p5', rowKey: 'r0200', inclusive: true },
        },
      },
    ];
    const conditions: { name: string; condition: PropertyCondition; holds: (v: number) => boolean }[] = [
      { name: 'n eq 4', condition: { kind: 'number', property: 'n', operator: 'eq', value: 4 }, holds: (v) => v === 4 },
      { name: 'n lt 2', condition: { kind: 'number', property: 'n', operator: 'lt', value: 2 }, holds: (v) => v < 2 },
      {
        name: 'n ge 3L',
        condition: { kind: 'number', property: 'n', operator: 'ge', value: 3n },
        holds: (v) => v >= 3,
      },
    ];

    for (const { name, range } of ranges) {
      const inRange = all.filter((e) => inside(keyOfRow(e), range));
      for (const { name: conditionName, condition, holds } of conditions) {
        for (const [limit, examineMax] of [
          [512, windows[0]],
          [3, windows[1]],
          [1, windows[2]],
          [512, windows[3]],
        ] as const) {
          test(`${name}, ${conditionName}, limit ${limit}, window ${examineMax}`, async () => {
            const expected = inRange.filter((e) => {
              const v = numeric(e.value);
              return v !== undefined && holds(v);
            });
            let current: KeyRange = range;
            let examined = 0;
            const seen: Key[] = [];
            for (let steps = 0; ; steps++) {
              assert.ok(steps <= inRange.length + 1, 'the scan ends');
              const step = await stores.get(examineMax)!.scan(table, current, { conditions: [condition], limit });
              assert.ok(step.examined <= examineMax, `a step examined ${step.examined} > ${examineMax}`);
              assert.ok(step.entities.length <= limit);
              examined += step.examined;
              seen.push(...step.entities.map(keyOfRow));
              if (step.next === undefined) break;
              current = { ...current, lower: step.next };
            }
            assert.equal(examined, inRange.length, 'every row of the range examined once');
            assert.deepEqual([...seen].sort(compareKeys).map(keyText), seen.map(keyText), 'rows come in key order');
            const inRangeKeys = new Set(inRange.map((e) => keyText(keyOfRow(e))));
            assert.ok(
              seen.every((k) => inRangeKeys.has(keyText(k))),
              'no row outside the range',
            );
            const seenKeys = new Set(seen.map(keyText));
            assert.equal(seenKeys.size, seen.length, 'no row twice');
            const lost = expected.map(keyOfRow).filter((k) => !seenKeys.has(keyText(k)));
            assert.deepEqual(lost.map(keyText), [], 'no matching row lost');
          });
        }
      }
    }
  });
}
