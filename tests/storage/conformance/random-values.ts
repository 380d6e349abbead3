// Random typed values and scan conditions at the edges of each EDM type, and whether a row
// satisfies a condition as the query engine decides it (src/table/query/evaluate.ts). Shared by the
// prefilter cases and the model test.
import { dateTimeTicksMax, dateTimeTicksMin, int64Max, int64Min, type EdmValue } from '../../../src/domain/edm.js';
import type { Entity } from '../../../src/domain/entity.js';
import { compilePredicate, readEntityProperty } from '../../../src/table/query/evaluate.js';
import type { ComparisonOperator, PropertyCondition } from '../../../src/storage/table-store.js';
import type { Random } from '../../query/random.js';
import { edm, noiseBytes } from './support.js';

export const operators: readonly ComparisonOperator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];
const someTicks = 17_040_672_001_234_567n;

export const int32Values = [-2147483648, -1, 0, 1, 2, 7, 2147483647];
export const int64Values = [int64Min, -(2n ** 53n) - 1n, -1n, 0n, 1n, 2n, 2n ** 53n, 2n ** 53n + 1n, int64Max];
const doubleValues = [
  NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  0.5,
  -0.5,
  1.5,
  2,
  1e308,
  -1e308,
  5e-324,
  2 ** 53,
  2 ** 53 + 2,
  2147483647.5,
];
const stringValues = [
  '',
  'a',
  'A',
  'ab',
  'b',
  '10',
  '2',
  'é',
  'e\u0301',
  '\u{1f600}',
  '\ue000',
  '\uffff',
  'true',
  '1.5',
  'NaN',
];
export const dateTimeValues = [
  dateTimeTicksMin,
  dateTimeTicksMax,
  -1n,
  0n,
  1n,
  someTicks,
  someTicks - 1n,
  someTicks + 1n,
  someTicks + 9_999n,
  someTicks - 10_000n,
];

/**
 * String literals stay below U+D800: there UTF-8 byte order agrees with UTF-16 order, so an engine
 * may compare stored text either way (src/table/query/pushdown.ts never sends other string literals).
 */
export const stringLiterals = ['', 'a', 'A', 'ab', 'b', '1', '10', '2', 'é', 'true', 'a\u00ff', 'NaN'];
export const numberLiterals: (number | bigint)[] = [
  ...int32Values,
  -10,
  3,
  0.5,
  -0,
  1.5,
  2 ** 53,
  1e308,
  -1e308,
  5e-324,
  2147483647.5,
  ...int64Values,
];

export function randomValue(random: Random): EdmValue | undefined {
  const pick = random.int(9);
  switch (pick) {
    case 0:
      return edm.int32(random.chance(0.5) ? random.pick(int32Values) : random.int(21) - 10);
    case 1:
      return edm.int64(random.chance(0.5) ? random.pick(int64Values) : BigInt(random.int(21) - 10));
    case 2:
      return edm.double(random.chance(0.6) ? random.pick(doubleValues) : (random.int(41) - 20) / 2);
    case 3:
      return edm.string(random.pick(stringValues));
    case 4:
      return edm.boolean(random.chance(0.5));
    case 5:
      return edm.dateTime(random.pick(dateTimeValues));
    case 6:
      return edm.guid(
        random.chance(0.5) ? '00000000-0000-0000-0000-000000000000' : 'c9da6455-213d-42c9-9a79-3e9149a57833',
      );
    case 7:
      return edm.binary(noiseBytes(random.int(4), random.int(100) + 1));
    default:
      return undefined; // no such property
  }
}

/** A condition on one of `properties` (or on Timestamp, near one of `timestamps`). */
export function randomCondition(
  random: Random,
  timestamps: readonly bigint[],
  properties: readonly string[] = ['v', 'v', 'v', 'w'],
): PropertyCondition {
  const operator = random.pick(operators);
  const property = random.pick(properties);
  switch (random.int(5)) {
    case 0:
      return {
        kind: 'number',
        property,
        operator,
        value: random.chance(0.7) ? random.pick(numberLiterals) : random.int(21) - 10,
      };
    case 1:
      return { kind: 'string', property, operator, value: random.pick(stringLiterals) };
    case 2:
      return { kind: 'boolean', property, operator, value: random.chance(0.5) };
    case 3:
      return { kind: 'dateTime', property, operator, value: random.pick(dateTimeValues) };
    default: {
      const base = timestamps.length === 0 ? 0n : random.pick(timestamps);
      return { kind: 'timestamp', operator, value: base + BigInt(random.int(3) - 1) };
    }
  }
}

/** The literal a condition compares with, as the filter it came from would have typed it. */
function literalOf(condition: PropertyCondition): EdmValue {
  switch (condition.kind) {
    case 'number':
      if (typeof condition.value === 'bigint') return edm.int64(condition.value);
      return Number.isInteger(condition.value) &&
        Math.abs(condition.value) <= 2147483647 &&
        !Object.is(condition.value, -0)
        ? edm.int32(condition.value)
        : edm.double(condition.value);
    case 'string':
      return edm.string(condition.value);
    case 'boolean':
      return edm.boolean(condition.value);
    case 'dateTime':
    case 'timestamp':
      return edm.dateTime(condition.value);
  }
}

/** Whether the row satisfies the condition, by the query engine's own predicate. */
export function satisfies(row: Entity, condition: PropertyCondition): boolean {
  let predicate = predicates.get(condition);
  if (predicate === undefined) {
    const property = condition.kind === 'timestamp' ? 'Timestamp' : condition.property;
    predicate = compilePredicate(
      { kind: 'comparison', property, operator: condition.operator, literal: literalOf(condition) },
      readEntityProperty,
    );
    predicates.set(condition, predicate);
  }
  return predicate(row);
}

/** Each condition compiled once. */
const predicates = new WeakMap<PropertyCondition, (row: Entity) => boolean>();
