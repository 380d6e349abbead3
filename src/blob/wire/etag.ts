// Snapshot timestamps as the Blob service writes them, seven fractional digits, and ETags as
// List Blobs writes them (https://learn.microsoft.com/rest/api/storageservices/creating-a-snapshot-of-a-blob,
// list-blobs). New ETags and dates are wire/reply-headers.ts's.
import { randomInt } from 'node:crypto';
import { leaseEtag, visibleEtag } from '../../wire/version-etag.js';

// Lease actions and the stored etag's `~n` mark: wire/version-etag.ts (the Data Lake API reads them too).
export { leaseEtag, visibleEtag };

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
