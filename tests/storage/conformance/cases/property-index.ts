// Automatic property indexes (src/storage/property-index.ts) change how an engine finds the rows of
// an equality condition, never which: over a table holding every type's edge values of one
// property, each equality literal an index may serve keeps every row that satisfies it (by the
// query engine's predicate) and drops the rows without the property, in key order, across small
// steps, alone and with another condition, before and after the writes that follow. The scans are
// repeated with pauses, so that an engine whose factory indexes early (a small autoIndexRows) has
// built its index and answers the later rounds from it; the case sees results only.
import assert from 'node:assert/strict';
import type { EdmValue } from '../../../../src/domain/edm.js';
import type { Entity } from '../../../../src/domain/entity.js';
import type { PropertyCondition, TableStore, TableInfo } from '../../../../src/storage/table-store.js';
import { int32Values, int64Values, numberLiterals, satisfies, stringLiterals } from '../random-values.js';
import type { ConformanceCase } from '../suite.js';
import { commitOk, del, edm, keyText, merge, props, put, walk } from '../support.js';
import { seedRows, type Row } from './seed.js';

/** Values of the indexed property `v`, one row each; a row without it and rows with it escaped. */
const values: readonly (EdmValue | undefined)[] = [
  ...int32Values.map(edm.int32),
  ...int64Values.map(edm.int64),
  edm.int64(2n ** 53n - 1n),
  edm.int64(-(2n ** 53n)),
  edm.int64(7n),
  ...[
    NaN,
    Infinity,
    -Infinity,
    -0,
    0,
    0.5,
    -0.5,
    1.5,
    2,
    7,
    1e308,
    -1e308,
    5e-324,
    2 ** 53,
    2 ** 53 - 1,
    2 ** 53 + 2,
    2147483647.5,
    0.1,
  ].map(edm.double),
  ...[
    '',
    'a',
    'A',
    '7',
    'true',
    'NaN',
    '-0',
    'é',
    'a\u0000b',
    '\u0000',
    'lone \ud800',
    '{"@utf16":"YQA="}',
    '\u{1f600}',
  ].map(edm.string),
  edm.boolean(true),
  edm.boolean(false),
  edm.int64(0n),
  edm.guid('00000000-0000-0000-0000-000000000000'),
  edm.dateTime(0n),
  edm.binary(Buffer.from('a')),
  undefined,
];

const literals: readonly PropertyCondition[] = [
  ...[...numberLiterals, 2n ** 53n - 1n, 2 ** 53 - 1, 0.1, 7n].map(
    (value) => ({ kind: 'number', property: 'v', operator: 'eq', value }) as const,
  ),
  ...[...stringLiterals, '7', '-0', '\u0001'].map(
    (value) => ({ kind: 'string', property: 'v', operator: 'eq', value }) as const,
  ),
  ...[true, false].map((value) => ({ kind: 'boolean', property: 'v', operator: 'eq', value }) as const),
];

/** Rows in three partitions, the values spread over them so that every step meets several types. */
function rows(): Row[] {
  return values.flatMap((value, i) =>
    [0, 1, 2].map((p): Row => {
      const properties = props({ w: edm.int32((i + p) % 3) });
      if (value !== undefined) properties.set('v', value);
      return { partitionKey: `p${p}`, rowKey: `r${String(i).padStart(3, '0')}`, properties };
    }),
  );
}

/** Walks with `conditions` and checks that no satisfying row of `table` was dropped and no row without `v` kept. */
async function check(
  store: TableStore,
  t: TableInfo,
  all: readonly Entity[],
  conditions: PropertyCondition[],
  limit: number,
  context: string,
): Promise<void> {
  const kept = new Set((await walk(store, t, {}, limit, conditions)).entities.map(keyText));
  for (const row of all) {
    const what = `${context}: ${conditions.map((c) => `${c.kind === 'timestamp' ? 'Timestamp' : c.property} eq ${String(c.value)}`).join(' and ')} (limit ${limit}) ${keyText(row)}`;
    if (!row.properties.has('v')) assert.ok(!kept.has(keyText(row)), `${what}: a row without the property is dropped`);
    else if (conditions.every((c) => satisfies(row, c)))
      assert.ok(kept.has(keyText(row)), `${what}: a satisfying row was dropped`);
  }
}

async function checkAll(store: TableStore, t: TableInfo, context: string): Promise<void> {
  const all = (await walk(store, t, {})).entities;
  for (const literal of literals) {
    await check(store, t, all, [literal], literal.kind === 'string' ? 5 : 1000, context);
    await check(store, t, all, [{ kind: 'number', property: 'w', operator: 'eq', value: 1 }, literal], 3, context);
  }
}

const rounds = 4;
const pauseMs = 150;

export const propertyIndexCases: readonly ConformanceCase[] = [
  {
    name: 'equality scans on a property keep every satisfying row, whether or not the engine has indexed it',
    async run({ store, table }) {
      const t = await table();
      await seedRows(store, t, rows());
      for (let round = 0; round < rounds; round++) {
        await checkAll(store, t, `round ${round}`);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
      // Writes after the index: values changed into and out of a literal, by replace, merge and
      // batch, rows deleted and inserted.
      await commitOk(store, t, [
        put('p0', 'r000', props({ v: edm.int64(7n), w: edm.int32(1) })),
        del('p0', 'r001'),
        put('p0', 'new', props({ v: edm.double(7) })),
      ]);
      await commitOk(store, t, [merge('p1', 'r002', props({ v: edm.string('7') }))]);
      await commitOk(store, t, [merge('p2', 'r003', props({ v: edm.double(-0) }))]);
      await commitOk(store, t, [put('p1', 'r004', props({ v: edm.boolean(false), w: edm.int32(1) }))]);
      await commitOk(store, t, [del('p2', 'r005')]);
      await checkAll(store, t, 'after writes');
      const sevens = (
        await walk(store, t, {}, 2, [{ kind: 'number', property: 'v', operator: 'eq', value: 7 }])
      ).entities.filter((row) => satisfies(row, { kind: 'number', property: 'v', operator: 'eq', value: 7 }));
      assert.ok(
        sevens.some((row) => row.partitionKey === 'p0' && row.rowKey === 'r000') &&
          sevens.some((row) => row.rowKey === 'new'),
        'written sevens are found',
      );
    },
  },
];
