// Differential test (SQLite's "optimizations off" idea): for random filters over random entities,
// reading the planner's ranges and applying the predicate must return exactly the rows of a plain
// scan with the predicate, in key order, also after clipping at a random resume point.
// Rerun a failure with QUERY_SEED=<seed printed in the message>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterComparisonsMax } from '../../src/limits.js';
import type { EdmValue } from '../../src/domain/edm.js';
import { clipRanges, compileEntityQuery, intersectRanges } from '../../src/table/query/index.js';
import type { QueryPlan } from '../../src/table/query/index.js';
import { runSeed, seededRandom } from './random.js';
import type { Random } from './random.js';
import { type Entity } from '../../src/domain/entity.js';
import { type KeyBound, type KeyRange } from '../../src/domain/keys.js';
import { scaled } from '../helpers/scale.js';

// Keys chosen to sit next to each other in UTF-16 order: prefixes, NUL and space successors,
// a quote, non-ASCII, a surrogate pair (which sorts below U+FFFF), and the empty string.
const partitionKeys = ['', 'a', 'a\u0000', 'a ', "a'", 'ab', 'b', 'ba', 'c', 'é', '😀', '\uffff'];
const rowKeys = ['', '0', '1', '10', '2', 'r', "r'", 'r\u0000', '😀'];
const extraLiterals = ['aa', 'a\u0001', 'bb', 'z', '00', '1 ', 'q'];
const keyLiterals = [...new Set([...partitionKeys, ...rowKeys, ...extraLiterals])];
const keyGrid = keyLiterals.flatMap((partitionKey) => keyLiterals.map((rowKey) => ({ partitionKey, rowKey })));
const sortedKeyGrid = [...keyGrid].sort(compareKeys);

interface Key {
  readonly partitionKey: string;
  readonly rowKey: string;
}

// ---------------------------------------------------------------------------------------------
// A reference reading of KeyBound (table-store.ts), written independently of plan.ts.

function compareKeys(a: Key, b: Key): number {
  if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
  if (a.rowKey !== b.rowKey) return a.rowKey < b.rowKey ? -1 : 1;
  return 0;
}

function compareToBound(key: Key, bound: KeyBound): number {
  if (bound.rowKey === undefined) {
    return key.partitionKey === bound.partitionKey ? 0 : key.partitionKey < bound.partitionKey ? -1 : 1;
  }
  return compareKeys(key, { partitionKey: bound.partitionKey, rowKey: bound.rowKey });
}

function inRange(key: Key, { lower, upper }: KeyRange): boolean {
  if (lower !== undefined) {
    const ordering = compareToBound(key, lower);
    if (ordering < 0 || (ordering === 0 && !lower.inclusive)) return false;
  }
  if (upper !== undefined) {
    const ordering = compareToBound(key, upper);
    if (ordering > 0 || (ordering === 0 && !upper.inclusive)) return false;
  }
  return true;
}

/** What a store scan of the ranges returns, in range order. */
function scan(sorted: readonly Entity[], ranges: readonly KeyRange[]): Entity[] {
  return ranges.flatMap((range) => sorted.filter((entity) => inRange(entity, range)));
}

// ---------------------------------------------------------------------------------------------
// Generators.

function randomEntities(random: Random): Entity[] {
  const entities: Entity[] = [];
  for (const partitionKey of partitionKeys) {
    for (const rowKey of rowKeys) {
      if (!random.chance(0.45)) continue;
      const properties = new Map<string, EdmValue>();
      if (random.chance(0.8)) properties.set('n', { type: 'Edm.Int32', value: random.int(7) - 3 });
      if (random.chance(0.7)) properties.set('big', { type: 'Edm.Int64', value: BigInt(random.int(5)) * 2n ** 40n });
      if (random.chance(0.7)) properties.set('d', { type: 'Edm.Double', value: random.pick([NaN, -1.5, 0, 2, 2.5]) });
      if (random.chance(0.8)) properties.set('flag', { type: 'Edm.Boolean', value: random.chance(0.5) });
      if (random.chance(0.7)) properties.set('s', { type: 'Edm.String', value: random.pick(keyLiterals) });
      if (random.chance(0.2)) properties.set('n', { type: 'Edm.String', value: '1' }); // a type mismatch
      entities.push({ partitionKey, rowKey, timestamp: BigInt(random.int(4)) * 10_000_000n, properties });
    }
  }
  return entities.sort(compareKeys);
}

function quoted(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const operators = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

function comparison(random: Random, property: string, literal: string): string {
  const operator = random.pick(operators);
  return random.chance(0.2) ? `${literal} ${operator} ${property}` : `${property} ${operator} ${literal}`;
}

function randomLeaf(random: Random): string {
  const roll = random.int(100);
  if (roll < 10) {
    return `PartitionKey eq ${quoted(random.pick(partitionKeys))} and RowKey eq ${quoted(random.pick(rowKeys))}`;
  }
  if (roll < 60) {
    const key = random.pick(['PartitionKey', 'RowKey']);
    const literal = random.chance(0.92) ? quoted(random.pick(keyLiterals)) : random.pick(['5', 'true', "X'00'"]);
    return comparison(random, key, literal);
  }
  if (roll < 85) {
    const [property, literals] = random.pick([
      ['n', ['0', '1', '-2', '1L', '0.5', "'1'"]],
      ['big', ['0L', '1099511627776L', '2199023255552.0', '3']],
      ['d', ['2', '2.5', '-1.5', '0.0', '1L']],
      ['flag', ['true', 'false', '1']],
      ['s', [quoted('a'), quoted('b'), quoted(''), '1']],
      ['missing', ['1', quoted('a')]],
    ] as const);
    return comparison(random, property, random.pick(literals));
  }
  if (roll < 92)
    return comparison(
      random,
      'Timestamp',
      random.pick(["datetime'1970-01-01T00:00:01Z'", "datetime'1970-01-01T00:00:02.5Z'"]),
    );
  if (roll < 96) return random.pick(['true', 'false']);
  return random.pick(['flag', 'missing', 'PartitionKey']);
}

function leafCount(text: string): number {
  return (text.match(/ (eq|ne|gt|ge|lt|le) |^(flag|missing|PartitionKey)$/g) ?? []).length;
}

function randomFilter(random: Random, depth: number, budget: { comparisons: number }): string {
  if (depth >= 4 || budget.comparisons <= 1 || random.chance(0.3)) {
    if (budget.comparisons <= 0) return random.pick(['true', 'false']);
    let leaf = randomLeaf(random);
    while (leafCount(leaf) > budget.comparisons) leaf = randomLeaf(random);
    budget.comparisons -= leafCount(leaf);
    return leaf;
  }
  if (random.chance(0.2)) return `not (${randomFilter(random, depth + 1, budget)})`;
  const operands = Array.from({ length: 2 + random.int(2) }, () => `(${randomFilter(random, depth + 1, budget)})`);
  return operands.join(random.chance(0.5) ? ' and ' : ' or ');
}

// ---------------------------------------------------------------------------------------------
// Checks.

/** Every key of the grid lies in at most one range, and the ranges come in ascending key order. */
function assertDisjointAscending(ranges: readonly KeyRange[], context: string): void {
  let lastRange = 0;
  for (const key of sortedKeyGrid) {
    let containing = -1;
    for (let index = 0; index < ranges.length; index++) {
      if (!inRange(key, ranges[index]!)) continue;
      if (containing !== -1 || index < lastRange) {
        assert.fail(
          `${context}: key ${JSON.stringify(key)} in range ${index} after range ${Math.max(containing, lastRange)}`,
        );
      }
      containing = index;
    }
    if (containing !== -1) lastRange = containing;
  }
}

function assertClassShape(plan: QueryPlan, context: string): void {
  const { queryClass, ranges } = plan;
  const only = ranges[0];
  switch (queryClass) {
    case 'table-scan':
      assert.deepEqual(ranges, [{}], context);
      break;
    case 'multi-range':
      assert.notEqual(ranges.length, 1, context);
      break;
    case 'point':
      assert.equal(ranges.length, 1, context);
      assert.ok(only?.lower?.rowKey !== undefined, context);
      assert.deepEqual(only.lower, only.upper, context);
      break;
    case 'partition-scan':
      assert.equal(ranges.length, 1, context);
      assert.deepEqual(only?.lower, { partitionKey: only?.lower?.partitionKey, inclusive: true }, context);
      assert.deepEqual(only?.upper, only?.lower, context);
      break;
    case 'range':
      assert.equal(ranges.length, 1, context);
      assert.ok(only?.lower !== undefined || only?.upper !== undefined, context);
      break;
    default: {
      const unreachable: never = queryClass;
      assert.fail(`unknown class ${String(unreachable)}`);
    }
  }
}

function randomBound(random: Random): KeyBound {
  const key = random.pick(keyGrid);
  const inclusive = random.chance(0.5);
  return random.chance(0.4) ? { partitionKey: key.partitionKey, inclusive } : { ...key, inclusive };
}

/** A range like a SAS key range: either end may be open. */
function randomLimit(random: Random): KeyRange {
  const lower = random.chance(0.8) ? randomBound(random) : undefined;
  const upper = random.chance(0.8) ? randomBound(random) : undefined;
  return { ...(lower && { lower }), ...(upper && { upper }) };
}

function randomResumePoint(random: Random): KeyBound {
  const key = random.pick(keyGrid);
  return random.chance(0.3) ? { partitionKey: key.partitionKey, inclusive: true } : { ...key, inclusive: true };
}

/** Runs one filter both ways (and clipped at a random resume point); returns its plan's class. */
function checkFilter(filter: string, entities: readonly Entity[], random: Random, context: string): string {
  try {
    const { plan, matches } = compileEntityQuery(filter);
    const expected = entities.filter(matches);
    assert.deepEqual(scan(entities, plan.ranges).filter(matches), expected, context);
    assertDisjointAscending(plan.ranges, context);
    assertClassShape(plan, context);

    const resumeFrom = randomResumePoint(random);
    const afterResume = expected.filter((entity) => inRange(entity, { lower: resumeFrom }));
    const clipped = clipRanges(plan.ranges, resumeFrom);
    const resumeContext = `${context} resumeFrom=${JSON.stringify(resumeFrom)}`;
    assert.deepEqual(scan(entities, clipped).filter(matches), afterResume, resumeContext);
    assertDisjointAscending(clipped, resumeContext);

    const limit = randomLimit(random);
    const limitContext = `${context} limit=${JSON.stringify(limit)}`;
    const narrowed = intersectRanges(plan.ranges, limit);
    assert.deepEqual(
      scan(entities, narrowed).filter(matches),
      expected.filter((entity) => inRange(entity, limit)),
      limitContext,
    );
    assertDisjointAscending(narrowed, limitContext);
    return plan.queryClass;
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    throw new Error(`${context}: ${String(error)}`, { cause: error });
  }
}

test('plan ranges + predicate return exactly what the predicate over all entities returns', () => {
  const seed = runSeed();
  const random = seededRandom(seed);
  const classes = new Map<string, number>();
  let entities = randomEntities(random);
  for (let i = 0; i < scaled(2500); i++) {
    if (i % 100 === 0) entities = randomEntities(random);
    const filter = randomFilter(random, 0, { comparisons: filterComparisonsMax });
    const queryClass = checkFilter(
      filter,
      entities,
      random,
      `seed=${seed} iteration=${i} filter=${JSON.stringify(filter)}`,
    );
    classes.set(queryClass, (classes.get(queryClass) ?? 0) + 1);
  }
  // The generator must exercise every class, or the comparison proves little.
  for (const queryClass of ['point', 'range', 'partition-scan', 'multi-range', 'table-scan']) {
    assert.ok(
      (classes.get(queryClass) ?? 0) > scaled(10),
      `seed=${seed}: only ${classes.get(queryClass) ?? 0} ${queryClass} plans`,
    );
  }
});

test('and-of-or filters past the planner box cap stay exact', () => {
  const seed = runSeed();
  const random = seededRandom(seed);
  let entities = randomEntities(random);
  for (let i = 0; i < scaled(300); i++) {
    if (i % 50 === 0) entities = randomEntities(random);
    const groups = Array.from({ length: 5 }, () => {
      const leaves = Array.from({ length: 3 }, () => {
        const key = random.pick(['PartitionKey', 'RowKey']);
        return `${key} ${random.pick(['ge', 'le', 'ne', 'eq', 'gt', 'lt'])} ${quoted(random.pick(keyLiterals))}`;
      });
      return `(${leaves.join(' or ')})`;
    });
    const filter = groups.join(' and ');
    checkFilter(filter, entities, random, `seed=${seed} iteration=${i} filter=${JSON.stringify(filter)}`);
  }
});
