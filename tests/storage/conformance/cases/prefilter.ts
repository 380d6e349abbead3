// The prefilter contract of conditional scans (TableStore.PropertyCondition): over random rows of mixed
// types and random conditions, no row that satisfies every condition is ever dropped (satisfaction
// as the query engine decides it, src/table/query/evaluate.ts), a row without the property is dropped,
// and a stored NaN or ±Infinity Double survives every number condition but `eq` (which it never
// satisfies, and which an index on the property may serve: src/storage/property-index.ts).
import assert from 'node:assert/strict';
import type { EdmValue } from '../../../../src/domain/edm.js';
import type { Entity } from '../../../../src/domain/entity.js';
import type { KeyRange } from '../../../../src/domain/keys.js';
import type { PropertyCondition, TableStore, TableInfo } from '../../../../src/storage/table-store.js';
import { runSeed, seededRandom, type Random } from '../../../query/random.js';
import {
  dateTimeValues,
  numberLiterals,
  operators,
  randomCondition,
  randomValue,
  satisfies,
  stringLiterals,
} from '../random-values.js';
import type { ConformanceCase } from '../suite.js';
import { edm, keyText, props, rangeText, valueText, walk } from '../support.js';
import { seedRows, type Row } from './seed.js';

function randomRows(random: Random, partitions: number): Row[] {
  const rows: Row[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let r = 0; r < 60; r++) {
      const properties = props();
      const v = randomValue(random);
      if (v !== undefined) properties.set('v', v);
      if (random.chance(0.3)) properties.set('w', edm.int32(random.int(5)));
      rows.push({ partitionKey: `p${p}`, rowKey: `r${String(r).padStart(3, '0')}`, properties });
    }
  }
  return rows;
}

function conditionText(condition: PropertyCondition): string {
  const value =
    typeof condition.value === 'number'
      ? valueText(edm.double(condition.value))
      : JSON.stringify(String(condition.value));
  return `${condition.kind === 'timestamp' ? 'Timestamp' : condition.property} ${condition.operator} ${condition.kind}:${value}`;
}

function describeRow(row: Entity): string {
  const v = row.properties.get('v');
  return `${keyText(row)} v=${v === undefined ? 'missing' : valueText(v)} ts=${row.timestamp}`;
}

/** Scans with `conditions` and checks each row of the range against the contract. */
async function checkConditions(
  store: TableStore,
  t: TableInfo,
  rows: readonly Entity[],
  range: KeyRange,
  conditions: PropertyCondition[],
  limit: number,
  context: string,
): Promise<void> {
  const kept = new Set((await walk(store, t, range, limit, conditions)).entities.map(keyText));
  const what = `${context}: ${conditions.map(conditionText).join(' and ')} over ${rangeText(range)} (limit ${limit})`;
  for (const row of rows) {
    if (!inside(row, range)) continue;
    const missing = conditions.some((c) => c.kind !== 'timestamp' && !row.properties.has(c.property));
    if (missing) {
      assert.ok(!kept.has(keyText(row)), `${what}: a row without the property is dropped: ${describeRow(row)}`);
      continue;
    }
    const mustKeep = conditions.every(
      (c) =>
        satisfies(row, c) ||
        (c.kind === 'number' && c.operator !== 'eq' && nonFiniteDouble(row.properties.get(c.property))),
    );
    if (mustKeep)
      assert.ok(
        kept.has(keyText(row)),
        `${what}: a row that may satisfy every condition was dropped: ${describeRow(row)}`,
      );
  }
}

function nonFiniteDouble(value: EdmValue | undefined): boolean {
  return value?.type === 'Edm.Double' && !Number.isFinite(value.value);
}

function inside(row: Entity, range: KeyRange): boolean {
  return range.lower === undefined || row.partitionKey === range.lower.partitionKey;
}

async function loadRandomRows(store: TableStore, t: TableInfo, random: Random, partitions = 4): Promise<Entity[]> {
  await seedRows(store, t, randomRows(random, partitions));
  return (await walk(store, t, {})).entities;
}

export const prefilterCases: readonly ConformanceCase[] = [
  {
    name: 'random conditions over random mixed-type rows never drop a row that satisfies them',
    async run({ store, table }) {
      const seed = runSeed();
      const random = seededRandom(seed);
      const t = await table();
      const rows = await loadRandomRows(store, t, random);
      const timestamps = [...new Set(rows.map((row) => row.timestamp))];
      for (let trial = 0; trial < 100; trial++) {
        const conditions = Array.from({ length: random.chance(0.3) ? 2 : 1 }, () =>
          randomCondition(random, timestamps),
        );
        const pk = `p${random.int(4)}`;
        const range: KeyRange = random.chance(0.5)
          ? {}
          : { lower: { partitionKey: pk, inclusive: true }, upper: { partitionKey: pk, inclusive: true } };
        await checkConditions(
          store,
          t,
          rows,
          range,
          conditions,
          random.pick([2, 7, 1000]),
          `QUERY_SEED=${seed} trial ${trial}`,
        );
      }
    },
  },
  {
    name: 'every operator at every type edge: no satisfying row dropped, rows without the property dropped',
    async run({ store, table }) {
      const t = await table();
      const rows = await loadRandomRows(store, t, seededRandom(20261123), 2);
      const timestamps = [...new Set(rows.map((row) => row.timestamp))];
      const literals: PropertyCondition[] = [
        ...numberLiterals.map((value) => ({ kind: 'number', property: 'v', operator: 'eq', value }) as const),
        ...stringLiterals.map((value) => ({ kind: 'string', property: 'v', operator: 'eq', value }) as const),
        ...[true, false].map((value) => ({ kind: 'boolean', property: 'v', operator: 'eq', value }) as const),
        ...dateTimeValues.map((value) => ({ kind: 'dateTime', property: 'v', operator: 'eq', value }) as const),
        ...timestamps
          .flatMap((value) => [value - 1n, value, value + 1n])
          .map((value) => ({ kind: 'timestamp', operator: 'eq', value }) as const),
        { kind: 'number', property: 'nowhere', operator: 'ne', value: 0 },
      ];
      for (const literal of literals) {
        for (const operator of operators) {
          await checkConditions(store, t, rows, {}, [{ ...literal, operator }], 1000, 'edges');
        }
      }
    },
  },
  {
    name: 'a stored NaN or ±Infinity Double is kept by every number condition but eq',
    async run({ store, table }) {
      const t = await table();
      await seedRows(store, t, [
        { partitionKey: 'p', rowKey: 'nan', properties: props({ v: edm.double(NaN) }) },
        { partitionKey: 'p', rowKey: 'inf', properties: props({ v: edm.double(Infinity) }) },
        { partitionKey: 'p', rowKey: 'neginf', properties: props({ v: edm.double(-Infinity) }) },
        { partitionKey: 'p', rowKey: 'none', properties: props({ w: edm.double(NaN) }) },
      ]);
      for (const value of [0, -1e308, 1e308, 2n ** 62n, -(2n ** 62n), 0.5]) {
        for (const operator of operators) {
          const kept = (
            await walk(store, t, {}, 1000, [{ kind: 'number', property: 'v', operator, value }])
          ).entities.map((e) => e.rowKey);
          if (operator === 'eq') assert.ok(!kept.includes('none'), `v eq ${value}`);
          else assert.deepEqual(kept, ['inf', 'nan', 'neginf'], `v ${operator} ${value}`);
        }
      }
    },
  },
];
