// Query planner (docs/architecture.md#queries): derives from a filter tree the key ranges that can hold matching
// entities. The ranges are a superset of the matches (the full predicate still runs on every row
// read); tests/query/differential.test.ts checks that against a plain scan.
//
// A filter's key region is a union of boxes PartitionKey-interval × RowKey-interval. Only
// comparisons of PartitionKey/RowKey with a string literal, and the constants true/false, narrow
// it; every other condition is the whole key space, and past a size cap a region coarsens to
// the one box covering it. `not` is pushed inward by De Morgan, which is exact here: keys always
// exist and strings are totally ordered, so `not (PartitionKey lt 'a')` is `PartitionKey ge 'a'`.
// A box becomes one contiguous KeyRange of the (PartitionKey, RowKey) order; the ranges are then
// sorted and merged.
import { printLiteral } from './ast.js';
import type { ComparisonOperator, FilterNode } from './ast.js';
import { type KeyBound, type KeyRange } from '../../domain/keys.js';

/**
 * point: one key; partition-scan: one whole partition; range: any other single range with a
 * bound; table-scan: no bound at all; multi-range: any other number of ranges, including zero,
 * which is the class of a contradiction (`PartitionKey eq 'a' and PartitionKey eq 'b'`).
 */
export type QueryClass = 'point' | 'range' | 'partition-scan' | 'multi-range' | 'table-scan';

export interface QueryPlan {
  readonly queryClass: QueryClass;
  /** Disjoint ranges in ascending key order; empty when the filter can match nothing. */
  readonly ranges: readonly KeyRange[];
}

interface StringBound {
  readonly value: string;
  readonly inclusive: boolean;
}

/** Strings between `low` and `high`; an undefined end is open. */
interface Interval {
  readonly low: StringBound | undefined;
  readonly high: StringBound | undefined;
}

const unbounded: Interval = { low: undefined, high: undefined };

interface Box {
  readonly partitionKey: Interval;
  readonly rowKey: Interval;
}

type Region = readonly Box[];

const everything: Region = [{ partitionKey: unbounded, rowKey: unbounded }];
const nothing: Region = [];

/**
 * Boxes kept per region. Past it, regions are coarsened to their hull (the one box covering all
 * of them), a superset, so the plan stays sound while its size stays bounded: 15 comparisons
 * could otherwise multiply into thousands of boxes.
 */
const regionBoxesMax = 64;

export function planQuery(filter: FilterNode): QueryPlan {
  const ranges = mergeRanges(regionOf(filter, false).map(boxToRange));
  return { queryClass: classify(ranges), ranges };
}

/** The plan without a filter: the whole table. */
export const tableScan: QueryPlan = { queryClass: 'table-scan', ranges: [{}] };

/** The key region where `filter` (or its negation) may hold. */
function regionOf(filter: FilterNode, negated: boolean): Region {
  switch (filter.kind) {
    case 'constant':
      return filter.value !== negated ? everything : nothing;
    case 'not':
      return regionOf(filter.operand, !negated);
    case 'and':
    case 'or': {
      const regions = filter.operands.map((operand) => regionOf(operand, negated));
      return (filter.kind === 'and') !== negated ? regions.reduce(intersect) : regions.reduce(union);
    }
    case 'comparison': {
      const key = filter.property === 'PartitionKey' || filter.property === 'RowKey' ? filter.property : undefined;
      if (key === undefined) return everything;
      // A key compared with a non-string never matches, so its negation always does.
      if (filter.literal.type !== 'Edm.String') return negated ? everything : nothing;
      const operator = negated ? negations[filter.operator] : filter.operator;
      const intervals = intervalsOf(operator, filter.literal.value).filter((interval) => !isEmpty(interval));
      return key === 'PartitionKey'
        ? intervals.map((interval) => ({ partitionKey: interval, rowKey: unbounded }))
        : intervals.map((interval) => ({ partitionKey: unbounded, rowKey: interval }));
    }
    default: {
      const unreachable: never = filter;
      throw new Error(`unknown filter node ${String(unreachable)}`);
    }
  }
}

const negations: Readonly<Record<ComparisonOperator, ComparisonOperator>> = {
  eq: 'ne',
  ne: 'eq',
  gt: 'le',
  ge: 'lt',
  lt: 'ge',
  le: 'gt',
};

function intervalsOf(operator: ComparisonOperator, value: string): Interval[] {
  const at = { value, inclusive: true };
  const beside = { value, inclusive: false };
  switch (operator) {
    case 'eq':
      return [{ low: at, high: at }];
    case 'ne':
      return [
        { low: undefined, high: beside },
        { low: beside, high: undefined },
      ];
    case 'gt':
      return [{ low: beside, high: undefined }];
    case 'ge':
      return [{ low: at, high: undefined }];
    case 'lt':
      return [{ low: undefined, high: beside }];
    case 'le':
      return [{ low: undefined, high: at }];
    default: {
      const unreachable: never = operator;
      throw new Error(`unknown operator ${String(unreachable)}`);
    }
  }
}

function union(a: Region, b: Region): Region {
  return a.length + b.length > regionBoxesMax ? hull([...a, ...b]) : [...a, ...b];
}

function intersect(a: Region, b: Region): Region {
  if (a.length * b.length > regionBoxesMax) {
    return a.length >= b.length ? intersect(hull(a), b) : intersect(a, hull(b));
  }
  const boxes: Box[] = [];
  for (const left of a) {
    for (const right of b) {
      const box = {
        partitionKey: intersectIntervals(left.partitionKey, right.partitionKey),
        rowKey: intersectIntervals(left.rowKey, right.rowKey),
      };
      if (!isEmpty(box.partitionKey) && !isEmpty(box.rowKey)) boxes.push(box);
    }
  }
  return boxes;
}

/** The smallest single box covering every box of the region. */
function hull(region: Region): Region {
  if (region.length === 0) return region;
  const cover = region.reduce((a, b) => ({
    partitionKey: coverIntervals(a.partitionKey, b.partitionKey),
    rowKey: coverIntervals(a.rowKey, b.rowKey),
  }));
  return [cover];
}

function coverIntervals(a: Interval, b: Interval): Interval {
  return { low: looser(a.low, b.low, 'low'), high: looser(a.high, b.high, 'high') };
}

function intersectIntervals(a: Interval, b: Interval): Interval {
  return { low: tighter(a.low, b.low, 'low'), high: tighter(a.high, b.high, 'high') };
}

/** The stricter of two bounds: the larger low or the smaller high; on a tie the exclusive one. */
function tighter(a: StringBound | undefined, b: StringBound | undefined, end: 'low' | 'high'): StringBound | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a.value === b.value) return a.inclusive ? b : a;
  return a.value < b.value === (end === 'low') ? b : a;
}

/** The weaker of two bounds; an open end (undefined) is the weakest. */
function looser(a: StringBound | undefined, b: StringBound | undefined, end: 'low' | 'high'): StringBound | undefined {
  if (a === undefined || b === undefined) return undefined;
  return tighter(a, b, end) === a ? b : a;
}

function isEmpty({ low, high }: Interval): boolean {
  if (high === undefined) return false;
  if (high.value === '' && !high.inclusive) return true; // nothing sorts below the empty string
  if (low === undefined) return false;
  return low.value > high.value || (low.value === high.value && !(low.inclusive && high.inclusive));
}

/**
 * The keys of a box lie between its first and last corner. When the PartitionKey end is
 * inclusive the RowKey end narrows it further (for a single partition that is the whole story).
 */
function boxToRange({ partitionKey, rowKey }: Box): KeyRange {
  return keyRange(cornerBound(partitionKey.low, rowKey.low), cornerBound(partitionKey.high, rowKey.high));
}

function cornerBound(partitionKey: StringBound | undefined, rowKey: StringBound | undefined): KeyBound | undefined {
  if (partitionKey === undefined) return undefined;
  if (!partitionKey.inclusive || rowKey === undefined) {
    return { partitionKey: partitionKey.value, inclusive: partitionKey.inclusive };
  }
  return { partitionKey: partitionKey.value, rowKey: rowKey.value, inclusive: rowKey.inclusive };
}

/** A KeyRange with only the bounds that exist (an absent property is an open end). */
function keyRange(lower: KeyBound | undefined, upper: KeyBound | undefined): KeyRange {
  if (lower === undefined) return upper === undefined ? {} : { upper };
  return upper === undefined ? { lower } : { lower, upper };
}

// ---------------------------------------------------------------------------------------------
// Ranges as intervals between cuts. A cut sits between two adjacent keys of the total
// (PartitionKey, RowKey) order: before or after one key, or before or after a whole partition.

interface Cut {
  readonly partitionKey: string;
  /** Undefined: the cut is at the start (side -1) or end (side 1) of the partition. */
  readonly rowKey: string | undefined;
  readonly side: -1 | 1;
}

function lowerCut(bound: KeyBound): Cut {
  return { partitionKey: bound.partitionKey, rowKey: bound.rowKey, side: bound.inclusive ? -1 : 1 };
}

function upperCut(bound: KeyBound): Cut {
  return { partitionKey: bound.partitionKey, rowKey: bound.rowKey, side: bound.inclusive ? 1 : -1 };
}

function compareCuts(a: Cut, b: Cut): number {
  if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
  if (a.rowKey === undefined || b.rowKey === undefined) {
    if (a.rowKey === b.rowKey) return a.side - b.side;
    return a.rowKey === undefined ? a.side : -b.side;
  }
  if (a.rowKey !== b.rowKey) return a.rowKey < b.rowKey ? -1 : 1;
  return a.side - b.side;
}

/** Orders lower bounds; an absent one is the start of the table. */
function compareLowers(a: KeyBound | undefined, b: KeyBound | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1;
  return compareCuts(lowerCut(a), lowerCut(b));
}

/** Orders upper bounds; an absent one is the end of the table. */
function compareUppers(a: KeyBound | undefined, b: KeyBound | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  return compareCuts(upperCut(a), upperCut(b));
}

/** Whether a range starting at `lower` overlaps or touches one ending at `upper` (no key between them). */
function lowerReaches(lower: KeyBound | undefined, upper: KeyBound | undefined): boolean {
  return lower === undefined || upper === undefined || compareCuts(lowerCut(lower), upperCut(upper)) <= 0;
}

function isEmptyRange({ lower, upper }: KeyRange): boolean {
  return lower !== undefined && upper !== undefined && compareCuts(lowerCut(lower), upperCut(upper)) >= 0;
}

/** Sorts ranges by their start and joins those that overlap or touch. */
function mergeRanges(ranges: readonly KeyRange[]): KeyRange[] {
  const sorted = [...ranges].sort((a, b) => compareLowers(a.lower, b.lower));
  const merged: KeyRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && lowerReaches(range.lower, last.upper)) {
      const upper = compareUppers(last.upper, range.upper) >= 0 ? last.upper : range.upper;
      merged[merged.length - 1] = keyRange(last.lower, upper);
    } else {
      merged.push(range);
    }
  }
  return merged;
}

function classify(ranges: readonly KeyRange[]): QueryClass {
  if (ranges.length !== 1) return 'multi-range';
  const { lower, upper } = ranges[0]!;
  if (lower === undefined && upper === undefined) return 'table-scan';
  if (lower?.inclusive && upper?.inclusive && lower.partitionKey === upper.partitionKey) {
    if (lower.rowKey === undefined && upper.rowKey === undefined) return 'partition-scan';
    if (lower.rowKey !== undefined && lower.rowKey === upper.rowKey) return 'point';
  }
  return 'range';
}

/** Each range cut down to `limit` (e.g. a SAS key range); ranges left empty are dropped, order is kept. */
export function intersectRanges(ranges: readonly KeyRange[], limit: KeyRange): KeyRange[] {
  const narrowed: KeyRange[] = [];
  for (const range of ranges) {
    const lower = compareLowers(range.lower, limit.lower) >= 0 ? range.lower : limit.lower;
    const upper = compareUppers(range.upper, limit.upper) <= 0 ? range.upper : limit.upper;
    const candidate = keyRange(lower, upper);
    if (!isEmptyRange(candidate)) narrowed.push(candidate);
  }
  return narrowed;
}

/** Intersects ranges with a resume point (first key not yet returned, inclusive); drops empty ranges. */
export function clipRanges(ranges: readonly KeyRange[], resumeFrom: KeyBound): KeyRange[] {
  return intersectRanges(ranges, { lower: resumeFrom });
}

// ---------------------------------------------------------------------------------------------
// Printed form: `range ['p','a' .. 'p','b')`, open ends as -inf / +inf.

export function printPlan(plan: QueryPlan): string {
  const ranges = plan.ranges.length === 0 ? '(no ranges)' : plan.ranges.map(printRange).join(' ');
  return `${plan.queryClass} ${ranges}`;
}

function printRange({ lower, upper }: KeyRange): string {
  const start = lower === undefined ? '(-inf' : `${lower.inclusive ? '[' : '('}${printKey(lower)}`;
  const end = upper === undefined ? '+inf)' : `${printKey(upper)}${upper.inclusive ? ']' : ')'}`;
  return `${start} .. ${end}`;
}

function printKey({ partitionKey, rowKey }: KeyBound): string {
  const keys = rowKey === undefined ? [partitionKey] : [partitionKey, rowKey];
  return keys.map((key) => printLiteral({ type: 'Edm.String', value: key })).join(',');
}
