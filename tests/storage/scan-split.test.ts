// A conditional scan step split across two scan threads (src/storage/sqlite/split-scan.ts): the
// predicted cut always lies strictly inside the range, the two sub-ranges cover it exactly, and
// steps walked through scanOnThreads on a real on-disk database examine every row once and
// return exactly what unsplit steps return, whatever the keys look like (decimal counters, GUIDs,
// astral characters, one big partition) and however badly the cut is predicted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RangeReader } from '../../src/storage/sqlite/range-reader.js';
import { ScanPool } from '../../src/storage/sqlite/scan-pool.js';
import { openDatabase } from '../../src/storage/sqlite/schema.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { compareIndexKeys, type IndexKey } from '../../src/domain/keys.js';
import {
  interpolateKey,
  joinSplit,
  planSplit,
  probeOffset,
  SplitScanner,
} from '../../src/storage/sqlite/split-scan.js';
import type { PropertyCondition, TableInfo } from '../../src/storage/table-store.js';
import type { KeyRange } from '../../src/domain/keys.js';

describe('interpolateKey', () => {
  const cases: { name: string; a: IndexKey; b: IndexKey }[] = [
    { name: 'decimal partitions across a carry', a: ['p00095', 'r051'], b: ['p00105', 'r075'] },
    { name: 'one partition, decimal rows', a: ['orders', '000120'], b: ['orders', '000377'] },
    { name: 'GUID-like partitions', a: ['0f3a9c2e-11aa', 'x'], b: ['1b07d4f0-9e21', 'x'] },
    { name: 'astral and private-use characters', a: ['\u{1F600}a', '\uE000'], b: ['\u{1F600}z', ''] },
    { name: 'a key that is a prefix of the other', a: ['ab', ''], b: ['abc', 'd'] },
  ];
  for (const { name, a, b } of cases) {
    test(`${name}: results grow with t and lie past the second key`, () => {
      let previous: IndexKey = b;
      for (const t of [1.5, 2, 4, 8, 64, 1e3]) {
        const key = interpolateKey(a, b, t);
        if (key === undefined) break;
        assert.ok(
          compareIndexKeys(key, previous) >= 0,
          `${JSON.stringify(key)} at t=${t} before ${JSON.stringify(previous)}`,
        );
        previous = key;
      }
    });
  }

  test('decimal counters interpolate across their carries', () => {
    // 10 partitions in 1,024 rows: 8.68 times as far is ~87 partitions on.
    const key = interpolateKey(['p00095', 'r051'], ['p00105', 'r075'], 8.68);
    assert.ok(key !== undefined && key[0] >= 'p00175' && key[0] < 'p00195', JSON.stringify(key));
  });
});

describe('planSplit and joinSplit', () => {
  const first: IndexKey = ['p00000', 'r000'];
  const probe: IndexKey = ['p00010', 'r024'];

  test('the two sub-ranges meet at the cut and share the window', () => {
    const plan = planSplit({}, 20_000, { from: first, to: probe, rows: 1024, startRows: 0 })!;
    assert.ok(plan);
    assert.deepEqual(plan.first.range.upper, { ...plan.cut, inclusive: false });
    assert.deepEqual(plan.second.range.lower, plan.cut);
    assert.equal(plan.first.examineMax + plan.second.examineMax, 20_000);
    assert.ok(compareIndexKeys([plan.cut.partitionKey, plan.cut.rowKey ?? ''], probe) > 0);
  });

  test('no split when the cut would reach the upper bound, or the window is too small', () => {
    const sample = { from: first, to: probe, rows: 1024, startRows: 0 };
    assert.equal(planSplit({ upper: { partitionKey: 'p00011', inclusive: false } }, 20_000, sample), undefined);
    assert.equal(
      planSplit({ upper: { partitionKey: 'p00010', rowKey: 'r999', inclusive: true } }, 20_000, sample),
      undefined,
    );
    assert.equal(planSplit({}, 100, { ...sample, rows: probeOffset(100) }), undefined);
    // PartitionKey gt 'p00010' excludes every row of p00010: a cut inside it would widen the range.
    const inside = { from: ['p00010', 'a'], to: ['p00010', 'b'], rows: 8000, startRows: 0 } as const;
    assert.equal(planSplit({}, 20_000, inside)?.cut.partitionKey, 'p00010');
    assert.equal(planSplit({ lower: { partitionKey: 'p00010', inclusive: false } }, 20_000, inside), undefined);
  });

  test('a cut from the step before lies as far past its end as the share asks', () => {
    // The step before read 10,000 rows from p00000 to p00100: the next share of ~8,900 rows ends near p00189.
    const plan = planSplit({ lower: { partitionKey: 'p00100', rowKey: 'r000', inclusive: false } }, 20_000, {
      from: ['p00000', 'r000'],
      to: ['p00100', 'r000'],
      rows: 10_000,
      startRows: 10_000,
    })!;
    assert.ok(plan.cut.partitionKey >= 'p00180' && plan.cut.partitionKey < 'p00195', JSON.stringify(plan.cut));
  });

  const plan = planSplit({}, 20_000, { from: first, to: probe, rows: 1024, startRows: 0 })!;
  const row = (pk: string, rk: string) => [pk, rk, 0n, '{}', 2] as const;
  test('joins when the first thread reached the cut', () => {
    const a = { rows: [row('p00001', 'r1')], examined: 9000, next: undefined };
    const b = {
      rows: [row('p00100', 'r1'), row('p00150', 'r2')],
      examined: 8000,
      next: { partitionKey: 'p00150', rowKey: 'r2', inclusive: false },
    };
    assert.deepEqual(joinSplit(plan, a, b, 512), { rows: [...a.rows, ...b.rows], examined: 17_000, next: b.next });
  });
  test("the first thread's answer alone when it stopped before the cut", () => {
    const a = {
      rows: [row('p00001', 'r1')],
      examined: 11_112,
      next: { partitionKey: 'p00050', rowKey: 'r1', inclusive: false },
    };
    const b = { rows: [row('p00100', 'r1')], examined: 8000, next: undefined };
    assert.equal(joinSplit(plan, a, b, 512), a);
  });
  test('ends at the cut when both together hold more than a step may return', () => {
    const a = { rows: [row('p00001', 'r1'), row('p00002', 'r1')], examined: 9000, next: undefined };
    const b = { rows: [row('p00100', 'r1')], examined: 10, next: undefined };
    assert.deepEqual(joinSplit(plan, a, b, 2), { rows: a.rows, examined: 9000, next: plan.cut });
  });
});

describe('split steps on a real on-disk database', () => {
  const table: TableInfo = { account: 'devstoreaccount1', name: 'splits' };
  /** Key shapes: [name, key of row i]. */
  const shapes: readonly [string, (i: number) => IndexKey][] = [
    [
      'decimal partitions of 37',
      (i) => [`p${String(Math.floor(i / 37)).padStart(5, '0')}`, `r${String(i % 37).padStart(3, '0')}`],
    ],
    ['one partition', (i) => ['only', String((i * 7919) % 100_003).padStart(6, '0')]],
    ['GUID-like', (i) => [((i * 2654435761) >>> 0).toString(16).padStart(8, '0'), '']],
    ['astral', (i) => [`\u{1F600}${String.fromCodePoint(0x1f300 + (i % 700))}`, String(i)]],
  ];
  const rowsPerShape = 3000;
  let location: string;
  let store: SqliteStore;
  let pool: ScanPool;
  let db: ReturnType<typeof openDatabase>;
  let reader: RangeReader;
  let splitter: SplitScanner;
  const ids = new Map<string, number>();

  before(async () => {
    location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-split-'));
    store = await SqliteStore.open({ location });
    for (const [name, keyOf] of shapes) {
      const info = { ...table, name: `${table.name}${ids.size}` };
      await store.createTable(info.account, info.name);
      const writes = Array.from({ length: rowsPerShape }, (_, i) => {
        const [partitionKey, rowKey] = keyOf(i);
        return {
          partitionKey,
          rowKey,
          condition: { kind: 'none' } as const,
          action: { kind: 'put' as const, properties: new Map([['n', { type: 'Edm.Int32' as const, value: i % 10 }]]) },
        };
      });
      for (let i = 0; i < writes.length; i += 100) assert.ok((await store.commit(info, writes.slice(i, i + 100))).ok);
      ids.set(name, ids.size + 1);
    }
    const file = path.join(location, 'cerulean.sqlite');
    pool = await ScanPool.start(file);
    db = openDatabase(file, 'reader');
    reader = new RangeReader(db);
    splitter = new SplitScanner(pool, reader, 'always');
    for (const [name] of shapes) {
      const row = db.prepare('SELECT id FROM tables WHERE name = ?').get(`${table.name}${ids.get(name)! - 1}`) as {
        id: number;
      };
      ids.set(name, row.id);
    }
  });
  after(async () => {
    await pool?.close();
    db?.close();
    await store?.close();
    rmSync(location, { recursive: true, force: true });
  });

  const condition: PropertyCondition = { kind: 'number', property: 'n', operator: 'eq', value: 3 };
  type Step = { rows: readonly (readonly [string, string, ...unknown[]])[]; examined: number; next: KeyRange['lower'] };
  interface Walk {
    keys: string[];
    examined: number;
    /** Steps that stopped short of their window with room for more rows: only a split step does. */
    short: number;
  }
  async function walk(scan: (range: KeyRange) => Promise<Step>, examineMax: number, limit: number): Promise<Walk> {
    const result: Walk = { keys: [], examined: 0, short: 0 };
    let range: KeyRange = {};
    for (;;) {
      const step = await scan(range);
      assert.ok(step.examined <= examineMax, `a step examined ${step.examined} > ${examineMax}`);
      assert.ok(step.rows.length <= Math.min(limit, 512));
      result.keys.push(...step.rows.map(([pk, rk]) => JSON.stringify([pk, rk])));
      result.examined += step.examined;
      if (step.next === undefined) return result;
      if (step.examined < examineMax && step.rows.length < limit) result.short++;
      range = { lower: step.next };
    }
  }

  for (const [name, keyOf] of shapes) {
    const allKeys = new Set(Array.from({ length: rowsPerShape }, (_, i) => JSON.stringify(keyOf(i))));
    const matching = Array.from({ length: rowsPerShape }, (_, i) => i)
      .filter((i) => i % 10 === 3)
      .map((i) => keyOf(i))
      .sort(compareIndexKeys)
      .map((key) => JSON.stringify(key));
    for (const [examineMax, limit] of [
      [1000, 512],
      [2000, 3],
      [400, 512],
    ] as const) {
      test(`${name}, window ${examineMax}, limit ${limit}: every row examined once, no match lost`, async () => {
        const id = ids.get(name)!;
        for (const [how, scan] of [
          ['split', (range: KeyRange) => splitter.scan(id, range, [condition], limit, examineMax)],
          ['unsplit', (range: KeyRange) => pool.scan(id, range, [condition], limit, examineMax)],
        ] as const) {
          const result = await walk(scan, examineMax, limit);
          assert.equal(result.examined, rowsPerShape, `${how}: rows examined`);
          const sorted = [...result.keys].sort((x, y) =>
            compareIndexKeys(JSON.parse(x) as IndexKey, JSON.parse(y) as IndexKey),
          );
          assert.deepEqual(result.keys, sorted, `${how}: key order`);
          assert.equal(new Set(result.keys).size, result.keys.length, `${how}: no row twice`);
          assert.ok(
            result.keys.every((k) => allKeys.has(k)),
            `${how}: only stored rows`,
          );
          // Besides the matches a step returns the row that closes its window (the query decides every row).
          const found = new Set(result.keys);
          assert.deepEqual(
            matching.filter((k) => !found.has(k)),
            [],
            `${how}: no matching row lost`,
          );
          if (how === 'split' && examineMax === 1000 && limit === 512)
            assert.ok(result.short > 0, 'some steps were split');
        }
      });
    }
  }
});
