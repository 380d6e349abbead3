// Key ranges and scan steps (TableStore.scan, KeyBound): inclusive, exclusive and open bounds on the
// PartitionKey alone or on both keys, empty ranges, steps that together return every row of the
// range once in key order, `next` exclusive, `limit` respected, `examined` and `bytes` counted.
import assert from 'node:assert/strict';
import type { KeyBound, KeyRange } from '../../../../src/domain/keys.js';
import type { PropertyCondition } from '../../../../src/storage/table-store.js';
import type { ConformanceCase } from '../suite.js';
import { edm, inRange, keysOf, noiseBytes, props, rangeText, walk } from '../support.js';
import { seedRows, sortedRows, type Row } from './seed.js';

const boundPartitions = ['', 'a', 'ab', 'b', '\u{1f600}', '\ue000'];
const boundRows = ['', '1', '10', '2'];

function gridRows(): Row[] {
  return boundPartitions.flatMap((partitionKey) =>
    boundRows.map((rowKey) => ({ partitionKey, rowKey, properties: props({ n: edm.int32(1) }) })),
  );
}

/** Every kind of bound: PartitionKey alone or both keys, inclusive or not, at, between and past stored keys. */
function candidateBounds(): (KeyBound | undefined)[] {
  const bounds: (KeyBound | undefined)[] = [undefined];
  for (const inclusive of [true, false]) {
    for (const partitionKey of ['', 'a', 'aa', 'b', '\u{1f600}', '\uffff']) bounds.push({ partitionKey, inclusive });
    for (const partitionKey of ['a', '\ue000']) {
      for (const rowKey of ['', '1', '100', '3']) bounds.push({ partitionKey, rowKey, inclusive });
    }
  }
  return bounds;
}

/** Rows in partitions p0…p(n-1), `perPartition` each, with a payload. */
function manyRows(partitions: number, perPartition: number): Row[] {
  const rows: Row[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let r = 0; r < perPartition; r++) {
      rows.push({
        partitionKey: `p${p}`,
        rowKey: `r${String(r).padStart(4, '0')}`,
        properties: props({ n: edm.int32(r), s: edm.string(`value ${p}/${r}`) }),
      });
    }
  }
  return rows;
}

const dropsEverything: PropertyCondition = { kind: 'number', property: 'n', operator: 'lt', value: -1 };

export const scanCases: readonly ConformanceCase[] = [
  {
    name: 'bounds: every combination of open, inclusive and exclusive, PartitionKey-only and full-key bounds',
    async run({ store, table }) {
      const t = await table();
      const rows = sortedRows(gridRows());
      await seedRows(store, t, rows);
      const bounds = candidateBounds();
      for (const lower of bounds) {
        for (const upper of bounds) {
          const range: KeyRange = { ...(lower && { lower }), ...(upper && { upper }) };
          const expected = keysOf(rows.filter((row) => inRange(row, range)));
          assert.deepEqual(keysOf((await walk(store, t, range)).entities), expected, `scan of ${rangeText(range)}`);
        }
      }
    },
  },
  {
    name: 'bounds by example: PartitionKey-only bounds cover whole partitions; crossed or empty ranges return nothing',
    async run({ store, table }) {
      const t = await table();
      await seedRows(store, t, gridRows());
      const scanKeys = async (range: KeyRange) => keysOf((await walk(store, t, range)).entities);
      const partition = (pk: string) => boundRows.map((rk) => JSON.stringify([pk, rk]));
      assert.deepEqual(
        await scanKeys({
          lower: { partitionKey: 'a', inclusive: true },
          upper: { partitionKey: 'a', inclusive: true },
        }),
        partition('a'),
        'one partition',
      );
      assert.deepEqual(
        await scanKeys({
          lower: { partitionKey: 'a', inclusive: false },
          upper: { partitionKey: 'b', inclusive: false },
        }),
        partition('ab'),
        'between partitions',
      );
      assert.deepEqual(
        await scanKeys({
          lower: { partitionKey: 'b', inclusive: true },
          upper: { partitionKey: 'a', inclusive: true },
        }),
        [],
        'lower above upper',
      );
      assert.deepEqual(
        await scanKeys({
          lower: { partitionKey: 'a', inclusive: false },
          upper: { partitionKey: 'a', inclusive: true },
        }),
        [],
        'lower excludes what upper includes',
      );
      const at = { partitionKey: 'a', rowKey: '10' };
      assert.deepEqual(
        await scanKeys({ lower: { ...at, inclusive: true }, upper: { ...at, inclusive: true } }),
        [JSON.stringify(['a', '10'])],
        'a point',
      );
      assert.deepEqual(
        await scanKeys({ lower: { ...at, inclusive: true }, upper: { ...at, inclusive: false } }),
        [],
        'a point, upper exclusive',
      );
      assert.deepEqual(
        await scanKeys({ lower: { ...at, inclusive: false }, upper: { ...at, inclusive: true } }),
        [],
        'a point, lower exclusive',
      );
      assert.deepEqual(await scanKeys({ lower: { partitionKey: '\uffff', inclusive: true } }), [], 'past every key');
      assert.deepEqual(await scanKeys({ upper: { partitionKey: '', inclusive: false } }), [], 'before the empty key');
      assert.deepEqual(
        await scanKeys({ upper: { partitionKey: '', rowKey: '', inclusive: true } }),
        [JSON.stringify(['', ''])],
        'up to the empty keys',
      );
    },
  },
  {
    name: 'scan steps return every row of a range once, in key order, at most limit each, next exclusive',
    async run({ store, table }) {
      const t = await table();
      const rows = sortedRows(manyRows(4, 30));
      await seedRows(store, t, rows);
      const ranges: KeyRange[] = [
        {},
        { lower: { partitionKey: 'p1', inclusive: true }, upper: { partitionKey: 'p1', inclusive: true } },
        {
          lower: { partitionKey: 'p0', rowKey: 'r0010', inclusive: false },
          upper: { partitionKey: 'p3', rowKey: 'r0005', inclusive: true },
        },
        {
          lower: { partitionKey: 'p2', rowKey: 'r0029', inclusive: true },
          upper: { partitionKey: 'p3', inclusive: false },
        },
      ];
      for (const range of ranges) {
        const expected = keysOf(rows.filter((row) => inRange(row, range)));
        for (const limit of [1, 2, 3, 7, 29, 1000]) {
          const result = await walk(store, t, range, limit);
          assert.deepEqual(keysOf(result.entities), expected, `${rangeText(range)} with limit ${limit}`);
          assert.ok(result.steps >= Math.ceil(expected.length / limit), 'no step exceeded its limit');
        }
      }
    },
  },
  {
    name: 'a scan longer than any one step continues to the end (1,200 rows, limit 1,000)',
    async run({ store, table }) {
      const t = await table();
      const rows = sortedRows(manyRows(2, 600));
      await seedRows(store, t, rows);
      const result = await walk(store, t, {}, 1000);
      assert.deepEqual(keysOf(result.entities), keysOf(rows));
      const partition = await walk(
        store,
        t,
        { lower: { partitionKey: 'p1', inclusive: true }, upper: { partitionKey: 'p1', inclusive: true } },
        1000,
      );
      assert.deepEqual(keysOf(partition.entities), keysOf(rows.slice(600)));
    },
  },
  {
    name: 'a missing table scans empty, with and without conditions',
    async run({ store, account }) {
      const missing = { account: account(), name: 'nosuchtable' };
      for (const conditions of [[], [dropsEverything]]) {
        const step = await store.scan(missing, {}, { conditions, limit: 10 });
        assert.deepEqual(step.entities, []);
        assert.equal(step.next, undefined, 'nothing follows');
      }
    },
  },
  {
    name: 'examined counts every row of the range exactly once across steps, also rows the conditions drop',
    async run({ store, table }) {
      const t = await table();
      const rows = sortedRows(manyRows(3, 40));
      await seedRows(store, t, rows);
      const range: KeyRange = {
        lower: { partitionKey: 'p0', rowKey: 'r0020', inclusive: true },
        upper: { partitionKey: 'p2', rowKey: 'r0010', inclusive: false },
      };
      const inside = rows.filter((row) => inRange(row, range)).length;
      for (const limit of [1, 5, 1000]) {
        const plain = await walk(store, t, range, limit);
        assert.equal(plain.examined, inside, `unconditional, limit ${limit}`);
        const filtered = await walk(store, t, range, limit, [dropsEverything]);
        // A prefilter may keep rows that fail it; whether kept or dropped, each row counts once.
        assert.equal(
          filtered.examined,
          inside,
          `every row examined once with a condition that fails them all, limit ${limit}`,
        );
      }
    },
  },
  {
    name: 'bytes: more than zero for a step with entities, and at least the data of large values',
    async run({ store, table }) {
      const t = await table();
      const large = noiseBytes(48 * 1024, 7);
      await seedRows(store, t, [
        { partitionKey: 'p', rowKey: 'small', properties: props({ n: edm.int32(1) }) },
        {
          partitionKey: 'p',
          rowKey: 'x-large',
          properties: props({ b: edm.binary(large), s: edm.string(large.toString('base64')) }),
        },
      ]);
      const small = await store.scan(
        t,
        { upper: { partitionKey: 'p', rowKey: 'small', inclusive: true } },
        { conditions: [], limit: 10 },
      );
      assert.equal(small.entities.length, 1);
      assert.ok(small.bytes > 0, `bytes of a one-entity step: ${small.bytes}`);
      for (const conditions of [[], [{ kind: 'timestamp', operator: 'ge', value: 0n } as const]]) {
        const all = await walk(store, t, {}, 10, conditions);
        assert.equal(all.entities.length, 2);
        // The stored data holds 48 KiB of noise twice over (once base64): whatever the form, at least 48 KiB.
        assert.ok(
          all.bytes >= large.length,
          `bytes of the large entity (${conditions.length} conditions): ${all.bytes}`,
        );
      }
    },
  },
];
