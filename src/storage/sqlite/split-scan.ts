// One conditional scan step on two scan threads at once, for when the threads would otherwise
// idle (one scan at a time, e.g. a single client walking a table scan). The step's window of
// rows is cut at a key M predicted from the key density near the start of the range: the first
// thread scans [lower, M), the second [M, upper), each with its share of the window, and the
// answers are joined in key order when the first thread reached M. The prediction only decides
// how well the work is balanced, never what a step returns: when it misses (the first share ends
// before M), the step is the first thread's answer alone, as if it had not been split.
import os from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { compareIndexKeys, compareKeyToBound, type IndexKey, type KeyBound, type KeyRange } from '../../domain/keys.js';
import { stepRowsMax, type RangeReader, type RowStep } from './range-reader.js';
import type { ScanPool } from './scan-pool.js';
import type { ScanSplit } from '../scan-split.js';

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
 * What the density of keys near a step's start is estimated from: `rows` rows lie from `from` to
 * `to`, and the step starts `startRows` rows after `from` (0 for a probe ahead of the step, `rows`
 * for the step before it).
 */
export interface DensitySample {
  readonly from: IndexKey;
  readonly to: IndexKey;
  readonly rows: number;
  readonly startRows: number;
}

/**
 * The split of a step over `range` whose window is `examineMax` rows; undefined when the step is
 * too small to split or no cut lies strictly inside the range and past the sample.
 */
export function planSplit(range: KeyRange, examineMax: number, sample: DensitySample): SplitPlan | undefined {
  if (sample.rows < probeRowsMin) return undefined;
  const firstMax = Math.ceil(examineMax * firstShare);
  const secondMax = examineMax - firstMax;
  if (secondMax < 1) return undefined;
  const cutKey = interpolateKey(sample.from, sample.to, (sample.startRows + firstMax * cutFill) / sample.rows);
  if (cutKey === undefined || compareIndexKeys(cutKey, sample.to) <= 0) return undefined;
  if (!aboveLower(cutKey, range.lower) || !belowUpper(cutKey, range.upper)) return undefined;
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
  if (first.rows.length + second.rows.length > rowsMax)
    return { rows: first.rows, examined: first.examined, next: plan.cut };
  return { rows: [...first.rows, ...second.rows], examined: first.examined + second.examined, next: second.next };
}

/** Whether `key` lies strictly inside the range's lower end, so that both sub-ranges stay inside the range. */
function aboveLower(key: IndexKey, lower: KeyBound | undefined): boolean {
  if (lower === undefined) return true;
  const order = compareKeyToBound(key[0], key[1], lower);
  // A PartitionKey bound takes in its whole partition when inclusive; a full key is no cut.
  return order > 0 || (order === 0 && lower.rowKey === undefined && lower.inclusive);
}

/** Whether every key from `key` on could lie below `upper`; a key at or past it is no cut. */
function belowUpper(key: IndexKey, upper: KeyBound | undefined): boolean {
  if (upper === undefined) return true;
  const order = compareKeyToBound(key[0], key[1], upper);
  return order < 0 || (order === 0 && upper.rowKey === undefined && upper.inclusive);
}

/** Separates PartitionKey from RowKey in a key's text: below every other code unit, so texts sort as tuples. */
const separator = '\u0000';

/**
 * Characters whose runs keys are made of; a position of a key counts in the class of its first key's character there.
 */
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
  while (common < textA.length && common < textB.length && textA.charCodeAt(common) === textB.charCodeAt(common))
    common++;
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
 * Whether a second scan thread would take a core from other work rather than from idleness: the
 * calling (HTTP) thread was busy more than half of the last 100 ms or more, or other processes
 * kept more than half a core busy (the machine's CPU time less this process's).
 */
class CoreLoad {
  private mark = CoreLoad.now(performance.eventLoopUtilization());
  private loaded = false;

  busy(): boolean {
    const threadNow = performance.eventLoopUtilization();
    const thread = performance.eventLoopUtilization(threadNow, this.mark.thread);
    const wallMs = thread.idle + thread.active;
    if (wallMs >= loadWindowMs) {
      const now = CoreLoad.now(threadNow);
      const othersCores = (now.machineMs - this.mark.machineMs - (now.processMs - this.mark.processMs)) / wallMs;
      this.loaded = thread.utilization > 0.5 || othersCores > 0.5;
      this.mark = now;
    }
    return this.loaded;
  }

  private static now(thread: EventLoopUtilization): {
    thread: EventLoopUtilization;
    processMs: number;
    machineMs: number;
  } {
    const { user, system } = process.cpuUsage();
    let machineMs = 0;
    for (const { times } of os.cpus()) machineMs += times.user + times.nice + times.sys + times.irq;
    return { thread, processMs: (user + system) / 1000, machineMs };
  }
}
const loadWindowMs = 100;

/** Steps remembered for the one that continues each (a walk's steps follow one another). */
const rememberedStepsMax = 256;

/**
 * Conditional steps on the scan threads. A step is split in two when at least two threads are
 * idle and, unless told to always split, the cores are not busy with other work (CoreLoad). The
 * cut comes from the step before, when this step continues it (its rows and key span), and
 * otherwise from a probe on `reader`, the calling thread's connection: the keys 0 and up to 256
 * rows into the range.
 */
export class SplitScanner {
  private readonly cores = new CoreLoad();
  /** Where recent steps started and how many rows they examined, by table id and where they ended. */
  private readonly previous = new Map<string, { readonly from: IndexKey; readonly rows: number }>();

  constructor(
    private readonly pool: ScanPool,
    private readonly reader: RangeReader,
    /** auto: split while the cores idle (CoreLoad); always (tests); never. */
    private readonly when: ScanSplit = 'auto',
  ) {}

  async scan(
    ...[id, range, conditions, limit, examineMax, indexed]: Parameters<RangeReader['scan']>
  ): Promise<RowStep> {
    // A step served from an index reads only matches: nothing worth two threads.
    if (indexed !== undefined) return this.pool.scan(id, range, conditions, limit, examineMax, indexed);
    const plan = this.splitNow() ? this.plan(id, range, examineMax) : undefined;
    let step: RowStep;
    if (plan === undefined) {
      step = await this.pool.scan(id, range, conditions, limit, examineMax);
    } else {
      const [a, b] = await Promise.all([
        this.pool.scan(id, plan.first.range, conditions, limit, plan.first.examineMax),
        this.pool.scan(id, plan.second.range, conditions, limit, plan.second.examineMax),
      ]);
      step = joinSplit(plan, a, b, Math.min(limit, stepRowsMax));
    }
    if (range.lower !== undefined && step.next !== undefined && step.examined > 0) {
      if (this.previous.size >= rememberedStepsMax) this.previous.clear();
      this.previous.set(stepKey(id, step.next), { from: keyOfBound(range.lower), rows: step.examined });
    }
    return step;
  }

  private splitNow(): boolean {
    if (this.when === 'never' || this.pool.idleThreads() < 2) return false;
    return this.when === 'always' || !this.cores.busy();
  }

  private plan(id: number, range: KeyRange, examineMax: number): SplitPlan | undefined {
    const before = range.lower && this.previous.get(stepKey(id, range.lower));
    if (before !== undefined && range.lower !== undefined) {
      this.previous.delete(stepKey(id, range.lower));
      return planSplit(range, examineMax, {
        from: before.from,
        to: keyOfBound(range.lower),
        rows: before.rows,
        startRows: before.rows,
      });
    }
    const probeRows = probeOffset(examineMax);
    if (probeRows < probeRowsMin) return undefined;
    const first = this.reader.keyAt(id, range, 0);
    const probe = first && this.reader.keyAt(id, range, probeRows);
    return first && probe && planSplit(range, examineMax, { from: first, to: probe, rows: probeRows, startRows: 0 });
  }
}

function keyOfBound(bound: KeyBound): IndexKey {
  return [bound.partitionKey, bound.rowKey ?? ''];
}

function stepKey(id: number, bound: KeyBound): string {
  return JSON.stringify([id, bound.partitionKey, bound.rowKey ?? null, bound.inclusive]);
}
