// Blob soft delete (https://learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview): a
// soft-deleted blob, snapshot or previous version is kept as a non-base record, as a previous version
// is (blob-store.ts, versionKey), under a key that starts with softDeletedKeyPrefix and says when it
// expires, when it was deleted, and the key it had:
//
//   'x' + expiry stamp (28 characters) + deletion stamp (28 characters) + its key ('' for the base blob)
//
// Stamps are snapshot-shaped timestamps (seven fractional digits), so keys sort by expiry, and a
// store purges the expired ones with one range bound (softDeletedExpiredBound) without reading the
// clock or the account's settings: the retention in force when a blob was deleted is the one that
// applies to it (soft-delete-blob-overview: a changed retention period applies to data deleted after
// the change). 'x' sorts above versionKeyPrefix ('v') and above every snapshot (a digit), so a
// soft-deleted row is neither a snapshot nor a previous version to the store's other queries.
import assert from 'node:assert/strict';

/** What starts a soft-deleted row's key (BlobKey.snapshot); above versionKeyPrefix. */
export const softDeletedKeyPrefix = 'x';

const stampLength = 28;

export interface SoftDeletedKey {
  readonly expiresStamp: string;
  readonly deletedStamp: string;
  /** The key it had: '' (the base blob), a snapshot's timestamp, or a previous version's key. */
  readonly originalKey: string;
}

/** The prefix deleteBlob's keptPrefix is given: every row it deletes is kept under prefix + its key. */
export function softDeletedPrefix(expiresStamp: string, deletedStamp: string): string {
  assert(expiresStamp.length === stampLength && deletedStamp.length === stampLength, 'stamps are snapshot-shaped');
  return `${softDeletedKeyPrefix}${expiresStamp}${deletedStamp}`;
}

/** The parts of a soft-deleted row's key; undefined for any other key. */
export function parseSoftDeletedKey(snapshot: string): SoftDeletedKey | undefined {
  if (!snapshot.startsWith(softDeletedKeyPrefix) || snapshot.length < 1 + 2 * stampLength) return undefined;
  return {
    expiresStamp: snapshot.slice(1, 1 + stampLength),
    deletedStamp: snapshot.slice(1 + stampLength, 1 + 2 * stampLength),
    originalKey: snapshot.slice(1 + 2 * stampLength),
  };
}

/** Keys below this bound are soft-deleted rows that expired before `nowMs` (to the millisecond). */
export function softDeletedExpiredBound(nowMs: number): string {
  return `${softDeletedKeyPrefix}${new Date(nowMs).toISOString().slice(0, 23)}`;
}
