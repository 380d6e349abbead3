// ETags and times as the Blob service writes them: a quoted `"0x8D…"` hex of a .NET tick count,
// RFC 1123 dates, and snapshot timestamps with seven fractional digits
// (https://learn.microsoft.com/rest/api/storageservices/specifying-conditional-headers-for-blob-service-operations,
// creating-a-snapshot-of-a-blob).
import { randomInt } from 'node:crypto';

/** .NET ticks (100 ns) at the Unix epoch. */
const epochTicks = 621_355_968_000_000_000n;
const ticksPerMs = 10_000n;

/**
 * The ETag of a version written at `nowMs`: the tick count of that millisecond plus a random tick
 * within it, so two writes in one millisecond differ; never equal to `previous`.
 */
export function nextEtag(nowMs: number, previous?: string): string {
  let ticks = epochTicks + BigInt(Math.trunc(nowMs)) * ticksPerMs + BigInt(randomInt(10_000));
  let etag = etagOfTicks(ticks);
  while (etag === previous) etag = etagOfTicks(++ticks);
  return etag;
}

function etagOfTicks(ticks: bigint): string {
  return `"0x${ticks.toString(16).toUpperCase()}"`;
}

/** The ETag as List Blobs' XML writes it: without the quotes. */
export function unquotedEtag(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}

/** RFC 1123 in GMT (Last-Modified, x-ms-creation-time, List Blobs' dates). */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/**
 * A snapshot's timestamp: ISO 8601 with seven fractional digits, the last four random (unique per blob in practice).
 */
export function snapshotStamp(nowMs: number): string {
  const iso = new Date(nowMs).toISOString(); // yyyy-MM-ddTHH:mm:ss.fffZ
  return `${iso.slice(0, 23)}${String(randomInt(10_000)).padStart(4, '0')}Z`;
}

const snapshotPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,7})?Z$/;

/** Whether `text` is shaped like a snapshot timestamp (the `snapshot` query parameter). */
export function isSnapshotStamp(text: string): boolean {
  return snapshotPattern.test(text) && !Number.isNaN(Date.parse(text.replace(/(\.\d{3})\d*Z$/, '$1Z')));
}
