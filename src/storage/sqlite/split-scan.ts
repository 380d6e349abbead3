// One conditional scan step on two scan threads at once, for when the threads would otherwise
// idle (one scan at a time, e.g. a single client walking a table scan). The step's window of
// rows is cut at a key M predicted from the key density near the start of the range: the first
// thread scans [lower, M), the second [M, upper), each with its share of the window, and the
// answers are joined in key order when the first thread reached M. The prediction only decides
// how well the work is balanced, never what a step returns: when it misses (the first share ends
// before M), the step is the first thread's answer alone, as if it had not been split.
import { performance } from 'node:perf_hooks';
import type { KeyBound, KeyRange } from '../../domain/keys.js';
import { stepRowsMax, type RangeReader, type RowStep } from './range-reader.js';
import type { ScanPool } from './scan-pool.js';

/** A key of the clustered index as a tuple. */
export type IndexKey = readonly [partitionKey: string, rowKey: string];

/** Where a split step cuts its range, and each thread's share of the window. */
export interface SplitPlan {
  readonly first: { readonly range: KeyRange; readonly examineMax: number };
  readonly second: { readonly range: KeyRange; readonly examineMax: number };
  /** The cut, as the lower bound of the second range. */
  readonly cut: KeyBound;
}

/** Rows ahead of the range's first row whose key the density estimate uses; a fraction of the window. */
export function probeOffset(examineMax: number): number {
  return Math.min(256, Math.floor(examineMax / 16));
}

/** The smallest probe worth estimating from (a window of 128 rows). */
export const probeRowsMin = 8;

/**
 * The first thread's share of the window, and the part of it the cut aims to fill: a margin of
 * 20 % keeps a density that grows past the probe from closing the share before the cut, and the
 * second share equals the rows the first is expected to read, so both finish together.
 */
const firstShare = 5 / 9;
const cutFill = 0.8;

/**
 * The split of a step over `range` whose window is `examineMax` rows, given the range's first
 * key and the key `probe` rows after it; undefined when the step is too small to split or no cut
 * lies strictly inside the range.
 */
export function planSplit(range: KeyRange, examineMax: number, first: IndexKey, probe: IndexKey, probeRows: number): SplitPlan | undefined {
  if (probeRows < probeRowsMin) return undefined;
  const firstMax = Math.ceil(examineMax * firstShare);
  const secondMax = examineMax - firstMax;
  if (secondMax < 1) return undefined;
  const cutKey = interpolateKey(first, probe, (firstMax * cutFill) / probeRows);
  if (cutKey === undefined || compareIndexKeys(cutKey, probe) <= 0 || !belowUpper(cutKey, range.upper)) return undefined;
  // A cut without a RowKey is a PartitionKey bound (KeyBound): every row of that partition goes to the second range.
  const [partitionKey, rowKey] = cutKey;
  const cut: KeyBound = rowKey === '' ? { partitionKey, inclusive: true } : { partitionKey, rowKey, inclusive: true };
  return {
    first: { range: { lower: range.lower, upper: { ...cut, inclusive: false } }, examineMax: firstMax },
    second: { range: { lower: cut, upper: range.upper }, examineMax: secondMax },
    cut,
  };
}

/**
 * The two answers as one step. When the first thread stopped before the cut, its answer alone
 * (the second's rows come again in a later step); when both together hold more than `rowsMax`
 * rows, the first's with the cut as where the range continues.
 */
export function joinSplit(plan: SplitPlan, first: RowStep, second: RowStep, rowsMax: number): RowStep {
  if (first.next !== undefined) return first;
  if (first.rows.length + second.rows.length > rowsMax) return { rows: first.rows, examined: first.examined, next: plan.cut };
  return { rows: [...first.rows, ...second.rows], examined: first.examined + second.examined, next: second.next };
}

export function compareIndexKeys(a: IndexKey, b: IndexKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

/** Whether every key from `key` on could lie below `upper`; a key at or past it is no cut. */
function belowUpper(key: IndexKey, upper: KeyBound | undefined): boolean {
  if (upper === undefined) return true;
  if (upper.rowKey === undefined) return upper.inclusive ? key[0] <= upper.partitionKey : key[0] < upper.partitionKey;
  return compareIndexKeys(key, [upper.partitionKey, upper.rowKey]) < 0;
}

/** Separates PartitionKey from RowKey in a key's text: below every other code unit, so texts sort as tuples. */
const separator = '\u0000';

/** Characters whose runs keys are made of; a position of a key counts in the class of its first key's character there. */
const classes: readonly { readonly first: number; readonly radix: number }[] = [
  { first: 0x30, radix: 10 }, // 0-9
  { first: 0x41, radix: 26 }, // A-Z
  { first: 0x61, radix: 26 }, // a-z
];
const anyUnit = { first: 0, radix: 65536 } as const;
/** Positions are read until their radices multiply past this (exact in a double). */
const radixProductMax = 2 ** 48;

/**
 * The key at `t` times the distance from `a` to `b` past `a` (t >= 1). The key texts
 * (`PartitionKey U+0000 RowKey`) after their common prefix are read as mixed-radix numbers, each
 * position in the radix of `a`'s character there (decimal digits count in tens, letters in
 * 26s, anything else in code units), so that counters and dates interpolate across their carries.
 * Undefined when the result falls past the last key with the common prefix, even carrying into
 * its last few units.
 */
export function interpolateKey(a: IndexKey, b: IndexKey, t: number): IndexKey | undefined {
  const textA = `${a[0]}${separator}${a[1]}`;
  const textB = `${b[0]}${separator}${b[1]}`;
  let common = 0;
  while (common < textA.length && common < textB.length && textA.charCodeAt(common) === textB.charCodeAt(common)) common++;
  // Past the last key with the common prefix, the result carries into the prefix: read it from earlier on.
  for (let prefix = common; prefix >= Math.max(0, common - carryUnitsMax); prefix--) {
    const text = interpolateAfter(textA, textB, prefix, t);
    if (text === undefined) continue;
    const at = text.indexOf(separator);
    return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
  }
  return undefined;
}

/** Units of the common prefix a result may carry into. */
const carryUnitsMax = 4;

/** interpolateKey on the texts with their first `prefix` units kept as they are. */
function interpolateAfter(textA: string, textB: string, prefix: number, t: number): string | undefined {
  const digits: { readonly first: number; readonly radix: number }[] = [];
  for (let product = 1, i = prefix; ; i++) {
    const unit = i < textA.length ? textA.charCodeAt(i) : i < textB.length ? textB.charCodeAt(i) : 0;
    const digit = classes.find((c) => unit >= c.first && unit < c.first + c.radix) ?? anyUnit;
    if (product * digit.radix > radixProductMax) break;
    product *= digit.radix;
    digits.push(digit);
  }
  // A character outside its position's class counts as the class's nearest end.
  const valueOf = (text: string): number =>
    digits.reduce((x, { first, radix }, i) => {
      const unit = prefix + i < text.length ? text.charCodeAt(prefix + i) : 0;
      return x * radix + Math.min(Math.max(unit - first, 0), radix - 1);
    }, 0);
  const total = digits.reduce((product, { radix }) => product * radix, 1);
  const x = Math.floor(valueOf(textA) + (valueOf(textB) - valueOf(textA)) * t);
  if (!(x < total)) return undefined;
  let units = '';
  for (let i = digits.length - 1, rest = x; i >= 0; i--) {
    const { first, radix } = digits[i]!;
    units = String.fromCharCode(first + (rest % radix)) + units;
    rest = Math.floor(rest / radix);
  }
  return (textA.slice(0, prefix) + units).replace(/\u0000+$/, '');
}

/**
 * Whether the calling (HTTP) thread was busy more than half of the last 100 ms or more: then a
 * second scan thread would take a core from the requests it serves, not from idleness.
 */
class ThreadLoad {
  private mark = performance.eventLoopUtilization();
  private utilization = 0;

  busy(): boolean {
    const now = performance.eventLoopUtilization();
    const since = performance.eventLoopUtilization(now, this.mark);
    if (since.idle + since.active >= loadWindowMs) {
      this.utilization = since.utilization;
      this.mark = now;
    }
    return this.utilization > 0.5;
  }
}
const loadWindowMs = 100;
const callingThread = new ThreadLoad();

/**
 * One conditional step on the scan threads: split in two when at least two of them are idle, the
 * calling thread is not busy (`callerBusy`, by default its event loop's recent utilization), and the range holds enough rows past its start to estimate a cut
 * from (read on `reader`, the calling thread's connection: two index seeks and a walk of up to
 * 256 keys).
 */
export async function scanOnThreads(
  pool: ScanPool,
  reader: RangeReader,
  [id, range, conditions, limit, examineMax]: Readonly<Parameters<RangeReader['scan']>>,
  callerBusy: () => boolean = () => callingThread.busy(),
): Promise<RowStep> {
  const probeRows = probeOffset(examineMax);
  if (probeRows < probeRowsMin || pool.idleThreads() < 2 || callerBusy()) return pool.scan(id, range, conditions, limit, examineMax);
  const first = reader.keyAt(id, range, 0);
  const probe = first && reader.keyAt(id, range, probeRows);
  const plan = first && probe && planSplit(range, examineMax, first, probe, probeRows);
  if (!plan) return pool.scan(id, range, conditions, limit, examineMax);
  const [a, b] = await Promise.all([
    pool.scan(id, plan.first.range, conditions, limit, plan.first.examineMax),
    pool.scan(id, plan.second.range, conditions, limit, plan.second.examineMax),
  ]);
  return joinSplit(plan, a, b, Math.min(limit, stepRowsMax));
}
