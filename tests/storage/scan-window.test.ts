// Store.scanWhere's bounded steps on the real SQLite store, in memory (the HTTP thread's
// connection) and on disk (the scan threads): every row of the range is examined exactly once
// across the steps, no step examines more than its window, and no matching row is lost at a
// window's edge.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EdmValue } from '../../src/protocol/edm.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { KeyRange, PropertyCondition, TableInfo } from '../../src/storage/store.js';

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

const keyOrder = (a: { partitionKey: string; rowKey: string }, b: { partitionKey: string; rowKey: string }) =>
  a.partitionKey < b.partitionKey ? -1 : a.partitionKey > b.partitionKey ? 1 : a.rowKey < b.rowKey ? -1 : a.rowKey > b.rowKey ? 1 : 0;

const setups = [
  { label: 'in memory', location: () => undefined },
  { label: 'on disk, scan threads', location: () => mkdtempSync(path.join(os.tmpdir(), 'cerulean-scan-')) },
];

for (const setup of setups) {
  describe(`conditional scan steps (${setup.label})`, () => {
    let store: SqliteStore;
    let location: string | undefined;
    const table: TableInfo = { account: 'devstoreaccount1', name: 'windows' };
    const all = Array.from({ length: entityCount }, (_, i) => ({ ...keys(i), value: valueOf(i) })).sort(keyOrder);

    before(async () => {
      location = setup.location();
      store = await SqliteStore.open({ location });
      await store.createTable(table.account, table.name);
      const writes = all.map(({ partitionKey, rowKey, value }) => ({
        partitionKey,
        rowKey,
        condition: { kind: 'none' } as const,
        action: { kind: 'put' as const, properties: new Map([['n', value]]) },
      }));
      const result = await store.commit(table, writes);
      assert.ok(result.ok);
    });
    after(async () => {
      await store?.close();
      if (location !== undefined) rmSync(location, { recursive: true, force: true });
    });

    const ranges: { name: string; range: KeyRange }[] = [
      { name: 'the whole table', range: {} },
      { name: 'one partition', range: { lower: { partitionKey: 'p3', inclusive: true }, upper: { partitionKey: 'p3', inclusive: true } } },
      {
        name: 'a key range across partitions',
        range: { lower: { partitionKey: 'p1', rowKey: 'r0100', inclusive: false }, upper: { partitionKey: 'p5', rowKey: 'r0200', inclusive: true } },
      },
    ];
    const conditions: { name: string; condition: PropertyCondition; holds: (v: number) => boolean }[] = [
      { name: 'n eq 4', condition: { kind: 'number', property: 'n', operator: 'eq', value: 4 }, holds: (v) => v === 4 },
      { name: 'n lt 2', condition: { kind: 'number', property: 'n', operator: 'lt', value: 2 }, holds: (v) => v < 2 },
      { name: 'n ge 3L', condition: { kind: 'number', property: 'n', operator: 'ge', value: 3n }, holds: (v) => v >= 3 },
    ];

    for (const { name, range } of ranges) {
      const inRange = all.filter(
        (e) =>
          (range.lower === undefined || keyOrder(e, { partitionKey: range.lower.partitionKey, rowKey: range.lower.rowKey ?? '' }) >= (range.lower.inclusive ? 0 : 1)) &&
          (range.upper === undefined ||
            (range.upper.rowKey === undefined
              ? e.partitionKey <= range.upper.partitionKey
              : keyOrder(e, { partitionKey: range.upper.partitionKey, rowKey: range.upper.rowKey }) <= (range.upper.inclusive ? 0 : -1))),
      );
      for (const { name: conditionName, condition, holds } of conditions) {
        for (const [limit, examineMax] of [[512, 7], [3, 11], [1, 1], [512, 1000]] as const) {
          test(`${name}, ${conditionName}, limit ${limit}, window ${examineMax}`, async () => {
            const expected = inRange.filter((e) => {
              const v = numeric(e.value);
              return v !== undefined && holds(v);
            });
            let current: KeyRange = range;
            let examined = 0;
            const seen: { partitionKey: string; rowKey: string }[] = [];
            for (let steps = 0; ; steps++) {
              assert.ok(steps <= inRange.length + 1, 'the scan ends');
              const step = await store.scanWhere(table, current, [condition], limit, examineMax);
              assert.ok(step.examined <= examineMax, `a step examined ${step.examined} > ${examineMax}`);
              assert.ok(step.entities.length <= limit);
              examined += step.examined;
              seen.push(...step.entities.map((e) => ({ partitionKey: e.partitionKey, rowKey: e.rowKey })));
              if (step.next === undefined) break;
              current = { ...current, lower: step.next };
            }
            assert.equal(examined, inRange.length, 'every row of the range examined once');
            const keyText = (k: { partitionKey: string; rowKey: string }) => `${k.partitionKey}/${k.rowKey}`;
            assert.deepEqual([...seen].sort(keyOrder).map(keyText), seen.map(keyText), 'rows come in key order');
            const inRangeKeys = new Set(inRange.map(keyText));
            assert.ok(seen.every((k) => inRangeKeys.has(keyText(k))), 'no row outside the range');
            const seenKeys = new Set(seen.map(keyText));
            assert.equal(seenKeys.size, seen.length, 'no row twice');
            const lost = expected.filter((e) => !seenKeys.has(keyText(e)));
            assert.deepEqual(lost.map(keyText), [], 'no matching row lost');
          });
        }
      }
    }
  });
}
