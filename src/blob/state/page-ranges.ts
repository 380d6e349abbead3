// Page ranges from page tables (storage/page-store.ts): Get Page Ranges' PageRange runs (extents
// joined where they touch) and, against an earlier snapshot, its diff of PageRange (written since)
// and ClearRange (cleared since) runs. Both walk extents as they stream in, holding one run at a time.
import assert from 'node:assert/strict';
import type { PageExtent, PageRange } from '../../storage/page-store.js';

export interface ListedRange extends PageRange {
  readonly clear: boolean;
}

/** The extents' byte runs clipped to [from, to), those that touch joined. */
export async function* joinedRanges(
  extents: AsyncIterable<PageExtent>,
  from: number,
  to: number,
): AsyncGenerator<ListedRange> {
  let run: { startByte: number; endByteExclusive: number } | undefined;
  for await (const extent of extents) {
    const start = Math.max(from, extent.startByte);
    const end = Math.min(to, extent.endByteExclusive);
    if (start >= end) continue;
    if (run !== undefined && run.endByteExclusive === start) {
      run.endByteExclusive = end;
      continue;
    }
    if (run !== undefined) yield { ...run, clear: false };
    run = { startByte: start, endByteExclusive: end };
  }
  if (run !== undefined) yield { ...run, clear: false };
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
  now: AsyncIterable<PageExtent>,
  before: AsyncIterable<PageExtent>,
  from: number,
  to: number,
): AsyncGenerator<ListedRange> {
  const a = new Cursor(now[Symbol.asyncIterator]());
  const b = new Cursor(before[Symbol.asyncIterator]());
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
        if (run !== undefined) yield run;
        run = { startByte: at, endByteExclusive: next, clear: kind };
      }
    }
    at = next;
  }
  if (run !== undefined) yield run;
}
