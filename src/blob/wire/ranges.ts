// Byte ranges of Get Blob: `Range` or `x-ms-range` as `bytes=start-end` or `bytes=start-`
// (https://learn.microsoft.com/rest/api/storageservices/specifying-the-range-header-for-blob-service-operations).
import { invalidHeaderValue, StorageError } from '../../errors.js';

/** Bytes [start, end] inclusive, as the header names them; `end` undefined: to the blob's end. */
export interface RequestedRange {
  readonly start: number;
  readonly end: number | undefined;
}

const rangePattern = /^bytes=(\d{1,16})-(\d{0,16})$/;

/**
 * The range a request asks for: x-ms-range wins over Range. A Range header the service does not
 * understand (a suffix `bytes=-n`, several ranges, another unit) is ignored and the whole blob is
 * answered, as HTTP allows; an x-ms-range it cannot read is 400 InvalidHeaderValue (unverified:
 * our choice). An end before the start is 416 InvalidRange.
 */
export function requestedRange(headers: { readonly [name: string]: unknown }): RequestedRange | undefined {
  const msRange = headers['x-ms-range'];
  const range = typeof msRange === 'string' ? msRange : headers['range'];
  if (typeof range !== 'string') return undefined;
  const match = rangePattern.exec(range.trim());
  if (match === null) {
    if (typeof msRange === 'string') throw invalidHeaderValue('x-ms-range', msRange);
    return undefined;
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? undefined : Number(match[2]);
  if (end !== undefined && end < start) throw new StorageError('InvalidRange');
  return { start, end };
}

/** A range resolved against a blob's size: bytes [start, endExclusive). */
export interface ResolvedRange {
  readonly start: number;
  readonly endExclusive: number;
}

/**
 * The bytes of a blob of `sizeBytes` the range covers, its end clamped to the size; a start at or
 * past the end (any range of an empty blob included) is 416 InvalidRange, answered with
 * `Content-Range: bytes * /size` (the caller adds it).
 */
export function resolveRange(range: RequestedRange, sizeBytes: number): ResolvedRange | 'unsatisfiable' {
  if (range.start >= sizeBytes) return 'unsatisfiable';
  const endExclusive = range.end === undefined ? sizeBytes : Math.min(range.end + 1, sizeBytes);
  return { start: range.start, endExclusive };
}

/** The Content-Range header of a 206. */
export function contentRange(range: ResolvedRange, sizeBytes: number): string {
  return `bytes ${range.start}-${range.endExclusive - 1}/${sizeBytes}`;
}
