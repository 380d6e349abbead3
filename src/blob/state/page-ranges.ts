// Page ranges from page tables (storage/page-store.ts): Get Page Ranges' PageRange runs (extents
// joined where they touch) and, against an earlier snapshot, its diff of PageRange (written since)
// and ClearRange (cleared since) runs. Both walk extents as they stream in, a batch at a time.
import assert from 'node:assert/strict';
import type { PageExtent, PageRange } from '../../storage/page-store.js';

export interface ListedRange extends PageRange {
  readonly clear: boolean;
}

/** Runs a batch of listed ranges holds at most (diffRanges). */
const rangesPerBatch = 256;

/**
 * The extents' byte runs clipped to [from, to), those that touch joined: a batch of runs for each
 * batch of extents (the last run of a batch may go on in the next, so it waits for it).
 */
export async function* joinedRanges(
  batches: AsyncIterable<readonly PageExtent[]>,
  from: number,
  to: number,
): AsyncGenerator<ListedRange[]> {
  let run: { startByte: number; endByteExclusive: number; clear: false } | undefined;
  for await (const extents of batches) {
    const done: ListedRange[] = [];
    for (const extent of extents) {
      const start = Math.max(from, extent.startByte);
      const end = Math.min(to, extent.endByteExclusive);
      if (start >= end) continue;
      if (run !== undefined && run.endByteExclusive === start) {
        run.endByteExclusive = end;
        continue;
      }
      if (run !== undefined) done.push(run);
      run = { startByte: start, endByteExclusive: end, clear: false };
    }
    if (done.length > 0) yield done;
  }
  if (run !== undefined) yield [run];
}

/** The extents of batches, one at a time. */
async function* each(batches: AsyncIterable<readonly PageExtent[]>): AsyncGenerator<PageExtent> {
  for await (const extents of batches) yield* extents;
}

/** Whether two extents hold the same bytes at the same place: the same content at the same shift. */
function sameBytes(a: PageExtent, b: PageExtent): boolean {
  return a.contentId === b.contentId && a.contentOffsetBytes - a.startByte === b.contentOffsetBytes - b.startByte;
}

/** A cursor over extents in order: the one holding or after a byte. */
class Cursor {
  private current: PageExtent | undefined;
  private done = false;

  constructor(private readonly extents: AsyncIterator<PageExtent>) {}

  /** The first extent that ends after `byte` (undefined: none). */
  async at(byte: number): Promise<PageExtent | undefined> {
    while (!this.done && (this.current === undefined || this.current.endByteExclusive <= byte)) {
      const next = await this.extents.next();
      if (next.done === true) {
        this.done = true;
        this.current = undefined;
      } else {
        this.current = next.value;
      }
    }
    return this.current;
  }
}

/**
 * The diff of `now` against `before` (extents of two versions of one page blob) within [from, to):
 * PageRange runs where `now` has bytes `before` had not (written since), ClearRange runs where
 * `before` had bytes and `now` has none (cleared since). Runs of one kind that touch are joined.
 */
export async function* diffRanges(
  now: AsyncIterable<readonly PageExtent[]>,
  before: AsyncIterable<readonly PageExtent[]>,
  from: number,
  to: number,
): AsyncGenerator<ListedRange[]> {
  const a = new Cursor(each(now));
  const b = new Cursor(each(before));
  let done: ListedRange[] = [];
  let run: { startByte: number; endByteExclusive: number; clear: boolean } | undefined;
  let at = from;
  while (at < to) {
    const x = await a.at(at);
    const y = await b.at(at);
    if (x === undefined && y === undefined) break;
    const inX = x !== undefined && x.startByte <= at;
    const inY = y !== undefined && y.startByte <= at;
    // The next byte where either side starts or ends an extent.
    const edges = [to];
    if (x !== undefined) edges.push(inX ? x.endByteExclusive : x.startByte);
    if (y !== undefined) edges.push(inY ? y.endByteExclusive : y.startByte);
    const next = Math.min(...edges);
    assert(next > at, 'a diff moves on');
    const kind = inX ? (inY && sameBytes(x!, y!) ? undefined : false) : inY ? true : undefined;
    if (kind !== undefined) {
      if (run !== undefined && run.clear === kind && run.endByteExclusive === at) run.endByteExclusive = next;
      else {
        if (run !== undefined) done.push(run);
        run = { startByte: at, endByteExclusive: next, clear: kind };
        if (done.length >= rangesPerBatch) {
          yield done;
          done = [];
        }
      }
    }
    at = next;
  }
  if (run !== undefined) done.push(run);
  if (done.length > 0) yield done;
}
