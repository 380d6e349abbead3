// Snapshot timestamps as the Blob service writes them, seven fractional digits, and ETags as
// List Blobs writes them (https://learn.microsoft.com/rest/api/storageservices/creating-a-snapshot-of-a-blob,
// list-blobs). New ETags and dates are wire/reply-headers.ts's.
import { randomInt } from 'node:crypto';

/**
 * Lease actions change neither ETag nor Last-Modified (the service's lease-blob and lease-container
 * answer the resource's current ones; Azurite's lease handlers keep them too), yet a lease action must
 * still replace the record by compare-and-swap, and every other write must notice that it happened:
 * a Set Blob Metadata that read the record before an acquire and wrote after it would otherwise
 * succeed on the unchanged ETag and drop the lease. So a record's stored etag is the ETag clients
 * see, followed by `~n` after the n-th lease action since the last write: each lease action stores a
 * new value (the store's compare-and-swap token changes) while clients see the same ETag. Any other
 * write makes a fresh ETag without the suffix. The suffix never leaves the service: replies,
 * listings and If-Match/If-None-Match all use visibleEtag. Set Blob Tags, which changes neither
 * either (storage-manage-find-blobs), marks its write the same way.
 */
const leaseMark = '~';

/** The ETag clients see of a stored record's etag (quoted, as sent). */
export function visibleEtag(stored: string): string {
  const mark = stored.indexOf(leaseMark);
  return mark === -1 ? stored : stored.slice(0, mark);
}

/** The stored etag after one more lease action: the same visible ETag, a token the record never had. */
export function leaseEtag(stored: string): string {
  const mark = stored.indexOf(leaseMark);
  const count = mark === -1 ? 0 : Number(stored.slice(mark + 1));
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`a lease mark is a count: ${stored}`);
  return `${visibleEtag(stored)}${leaseMark}${count + 1}`;
}

/** The ETag as List Blobs' XML writes it: without the quotes. */
export function unquotedEtag(etag: string): string {
  return visibleEtag(etag).replace(/^"|"$/g, '');
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
