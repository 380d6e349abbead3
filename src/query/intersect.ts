// Narrows a query plan's ranges to one more range: the key range of a service SAS (auth.md §7.1),
// so that a query reads, counts and returns only keys the token may see.
import type { KeyBound, KeyRange } from '../storage/store.js';

/**
 * A point between two adjacent keys of the (PartitionKey, RowKey) order: just before (-1) or just
 * after (1) one key, or, without a row key, before or after a whole partition.
 */
interface Cut {
  readonly partitionKey: string;
  readonly rowKey: string | undefined;
  readonly side: -1 | 1;
}

/** Each range of `ranges` cut down to `limit`; ranges left empty are dropped, order is kept. */
export function intersectRanges(ranges: readonly KeyRange[], limit: KeyRange): KeyRange[] {
  const narrowed: KeyRange[] = [];
  for (const range of ranges) {
    const lower = later(range.lower, limit.lower);
    const upper = earlier(range.upper, limit.upper);
    if (lower !== undefined && upper !== undefined && compareCuts(lowerCut(lower), upperCut(upper)) >= 0) continue;
    narrowed.push({ ...(lower && { lower }), ...(upper && { upper }) });
  }
  return narrowed;
}

function later(a: KeyBound | undefined, b: KeyBound | undefined): KeyBound | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return compareCuts(lowerCut(a), lowerCut(b)) >= 0 ? a : b;
}

function earlier(a: KeyBound | undefined, b: KeyBound | undefined): KeyBound | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return compareCuts(upperCut(a), upperCut(b)) <= 0 ? a : b;
}

function lowerCut(bound: KeyBound): Cut {
  return { partitionKey: bound.partitionKey, rowKey: bound.rowKey, side: bound.inclusive ? -1 : 1 };
}

function upperCut(bound: KeyBound): Cut {
  return { partitionKey: bound.partitionKey, rowKey: bound.rowKey, side: bound.inclusive ? 1 : -1 };
}

/** Orders cuts by UTF-16 code units; a partition-wide cut lies outside all of its keys. */
function compareCuts(a: Cut, b: Cut): number {
  if (a.partitionKey !== b.partitionKey) return a.partitionKey < b.partitionKey ? -1 : 1;
  if (a.rowKey === undefined || b.rowKey === undefined) {
    if (a.rowKey === b.rowKey) return a.side - b.side;
    return a.rowKey === undefined ? a.side : -b.side;
  }
  if (a.rowKey !== b.rowKey) return a.rowKey < b.rowKey ? -1 : 1;
  return a.side - b.side;
}
