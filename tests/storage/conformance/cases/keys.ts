// Key order (Azure REST: understanding-the-table-service-data-model): ordinal over UTF-16 code units, PartitionKey
// first, at the edges
// where engines go wrong: surrogate pairs against U+E000–U+FFFF (UTF-8 and code-point order put
// them the other way round), digits as text, empty keys, 1 KiB keys, keys that differ only in
// their last unit, case and Unicode normalization (none), and a composite key that is not the
// concatenation of its parts.
import assert from 'node:assert/strict';
import type { ConformanceCase } from '../suite.js';
import { compareText, keysOf, props, walk, type Keys } from '../support.js';
import { read, seedRows, sortedRows, type Row } from './seed.js';

const long = 'x'.repeat(1023);

/** Every character here passes key validation (no `/ \ # ?`, no C0/C1 controls, no lone surrogate). */
const edgeKeys: readonly string[] = [
  '',
  ' ',
  '!',
  '~',
  '1',
  '10',
  '2',
  'A',
  'a',
  'a ',
  'aa',
  'é', // U+00E9, precomposed
  'e\u0301', // e + combining acute: another key, no normalization
  '\u00a0',
  '\u00ff',
  '\u0100',
  '\u07ff',
  '\u0800',
  '\ud7ff',
  '\u{10000}',
  '\u{1f600}',
  '\u{1f600}a',
  '\u{10ffff}',
  '\ue000',
  '\uf8ff',
  '\ufffd',
  '\uffff',
  long,
  `${long}x`, // 1,024 units
  `${long}y`,
  `${long}\ue000`,
  `${long.slice(1)}\u{1f600}`, // 1,024 units, ends in a surrogate pair
  `${long.slice(1)}\u{1f601}`, // differs from the one before in its last unit only
];

/** Facts stated outright, so that a wrong comparator in the test cannot hide a wrong engine. */
const orderFacts: readonly [string, string][] = [
  ['', ' '],
  ['10', '2'],
  ['A', 'a'],
  ['a', 'a '],
  ['e\u0301', 'é'],
  ['\u{1f600}', '\ue000'],
  ['\u{10ffff}', '\ue000'],
  ['\ud7ff', '\u{10000}'],
  [`${long}x`, `${long}y`],
  [`${long.slice(1)}\u{1f600}`, `${long.slice(1)}\u{1f601}`],
];

function edgeRows(): Row[] {
  const rows: Row[] = [];
  for (const key of edgeKeys) {
    rows.push({ partitionKey: key, rowKey: 'r', properties: props() });
    rows.push({ partitionKey: 'p', rowKey: key, properties: props() });
  }
  // The PartitionKey decides before the RowKey looks: ('a', 'zzz') < ('a ', '') although 'azzz' > 'a '.
  rows.push({ partitionKey: 'a', rowKey: 'zzz', properties: props() });
  rows.push({ partitionKey: 'a ', rowKey: '', properties: props() });
  rows.push({ partitionKey: '', rowKey: '', properties: props() });
  return dedupe(rows);
}

function dedupe(rows: Row[]): Row[] {
  const seen = new Set<string>();
  return rows.filter((row) => {
    const key = JSON.stringify([row.partitionKey, row.rowKey]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export const keyOrderCases: readonly ConformanceCase[] = [
  {
    name: 'keys sort by UTF-16 code units at the edges (surrogates before U+E000, 10 before 2, empty, 1 KiB)',
    async run({ store, table }) {
      for (const [a, b] of orderFacts)
        assert.ok(compareText(a, b) < 0, `the test's own order: ${JSON.stringify(a)} < ${JSON.stringify(b)}`);
      for (const key of edgeKeys) assert.ok(key.length <= 1024, 'keys within 1 KiB');
      const t = await table();
      const rows = edgeRows();
      await seedRows(store, t, rows);
      const expected = keysOf(sortedRows(rows));
      assert.deepEqual(keysOf((await walk(store, t, {})).entities), expected, 'a scan of the whole table');
      assert.deepEqual(keysOf((await walk(store, t, {}, 1)).entities), expected, 'a scan one row per step');
    },
  },
  {
    name: 'getEntity finds every edge key exactly (case-sensitive, no normalization)',
    async run({ store, table }) {
      const t = await table();
      const rows = edgeRows();
      await seedRows(store, t, rows);
      for (const row of rows)
        assert.ok(
          await read(store, t, row.partitionKey, row.rowKey),
          `read ${JSON.stringify([row.partitionKey, row.rowKey])}`,
        );
      for (const [pk, rk] of [
        ['p', 'B'],
        ['p', 'A '],
        ['p', 'ee\u0301'],
        ['p', `${long}z`],
        ['P', 'a'],
        ['p', '\u{1f600}b'],
      ]) {
        assert.equal(await read(store, t, pk!, rk!), undefined, `no entity at ${JSON.stringify([pk, rk])}`);
      }
    },
  },
  {
    name: 'bounds at every edge key: a scan starts and ends exactly there',
    async run({ store, table }) {
      const t = await table();
      const rows = sortedRows(edgeRows());
      await seedRows(store, t, rows);
      for (let i = 0; i < rows.length; i++) {
        const { partitionKey, rowKey } = rows[i] as Keys;
        const from = await store.scan(
          t,
          { lower: { partitionKey, rowKey, inclusive: true } },
          { conditions: [], limit: 1 },
        );
        assert.deepEqual(
          keysOf(from.entities.slice(0, 1)),
          keysOf([rows[i]!]),
          `first row from ${JSON.stringify([partitionKey, rowKey])} inclusive`,
        );
        const after = await walk(store, t, { lower: { partitionKey, rowKey, inclusive: false } });
        assert.deepEqual(
          keysOf(after.entities),
          keysOf(rows.slice(i + 1)),
          `rows after ${JSON.stringify([partitionKey, rowKey])}`,
        );
        const upTo = await walk(store, t, { upper: { partitionKey, rowKey, inclusive: false } });
        assert.deepEqual(
          keysOf(upTo.entities),
          keysOf(rows.slice(0, i)),
          `rows before ${JSON.stringify([partitionKey, rowKey])}`,
        );
      }
    },
  },
];
