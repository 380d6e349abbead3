// Blob soft delete (https://learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview), on
// while the account's DeleteRetentionPolicy is enabled: Delete Blob keeps what it deletes (the
// blob, its snapshots, a snapshot, a previous version) for the policy's Days, under soft-deleted
// keys (storage/blob-soft-delete.ts), in the delete's own transaction; Undelete Blob
// (https://learn.microsoft.com/rest/api/storageservices/undelete-blob) puts them back; List Blobs
// with include=deleted shows them; the store's reclaim purges them once expired.
import { invalidQueryParameter, StorageError } from '../../errors.js';
import { evaluate, parseConditions } from '../wire/conditions.js';
import type { Reply } from '../../http/respond.js';
import { parseSoftDeletedKey, softDeletedKeyPrefix, softDeletedPrefix } from '../../storage/blob-soft-delete.js';
import type { BlobRecord } from '../../storage/blob-store.js';
import {
  findBlob,
  keyOf,
  notFound,
  versioned,
  withIndexTags,
  writeFailure,
  type BlobCall,
  type BlobOf,
  type Found,
} from './access.js';
import { snapshotStamp } from '../wire/etag.js';
import { decodeBlobState, encodeBlobState } from '../state/blob.js';
import { noLease } from '../state/leases.js';
import { tierAt } from '../state/tier.js';

const dayMs = 24 * 60 * 60_000;
/** Soft-deleted rows of one name read at once by Undelete Blob. */
const undeletePageRows = 1000;

/**
 * The keptPrefix a Delete Blob gives the store now (undefined: soft delete is off): the expiry is
 * fixed at deletion, so a later change of Days applies to later deletes only (soft-delete-blob-overview).
 */
export async function softDeleteKeyPrefix(call: BlobCall): Promise<string | undefined> {
  const policy = await call.services.properties.deleteRetention(call.account);
  if (!policy.enabled || policy.days === undefined) return undefined;
  const nowMs = call.services.clock.nowMs();
  return softDeletedPrefix(snapshotStamp(nowMs + policy.days * dayMs), snapshotStamp(nowMs));
}

/**
 * Delete Blob's `deletetype` (delete-blob, "Permanent delete"; 2020-02-10 on): true when it asks for
 * a permanent delete. Its only value is `permanent` (chosen: in any case, as Python's generated client
 * spells it `Permanent`); anything else is 400 InvalidQueryParameterValue.
 */
export function asksPermanentDelete(call: BlobCall): boolean {
  const type = call.query.get('deletetype');
  if (type === null) return false;
  if (type.toLowerCase() !== 'permanent') {
    throw invalidQueryParameter('deletetype', type, "The only value is 'permanent'.");
  }
  return true;
}

/**
 * Delete Blob with deletetype=permanent: removes the soft-deleted snapshot (`snapshot=`) or version
 * (`versionid=`) of that key at once, each row in its own transaction, durable before the 202
 * (x-ms-delete-type-permanent: true). Allowed only while the account's DeleteRetentionPolicy is
 * enabled with AllowPermanentDelete (set-blob-service-properties). Chosen (unverified, the docs name
 * no error codes): a policy that does not allow it, or a request naming neither a snapshot nor a
 * version, is 400 InvalidQueryParameterValue; an active (not soft-deleted) snapshot or version is
 * left as it is, 404 BlobNotFound, so that a permanent delete never removes what Undelete did not
 * bring back first.
 */
export async function deletePermanently(call: BlobCall, resource: BlobOf, originalKey: string): Promise<Reply> {
  const policy = await call.services.properties.deleteRetention(call.account);
  if (!policy.enabled || policy.allowPermanentDelete !== true) {
    const why = "Permanent delete is not allowed: the DeleteRetentionPolicy's AllowPermanentDelete is not true.";
    throw invalidQueryParameter('deletetype', call.query.get('deletetype') ?? '', why);
  }
  if (originalKey === '') {
    const why = 'A permanent delete names a soft-deleted snapshot (snapshot) or version (versionid).';
    throw invalidQueryParameter('deletetype', call.query.get('deletetype') ?? '', why);
  }
  const rows = (await softDeletedRows(call, resource)).filter(
    (row) => parseSoftDeletedKey(row.snapshot)!.originalKey === originalKey,
  );
  let deleted = 0;
  const conditions = parseConditions(call.headers);
  for (const row of rows) {
    // Chosen: conditional headers are about the soft-deleted entry (its ETag and Last-Modified).
    if (evaluate(conditions, versioned({ record: row, state: decodeBlobState(row.state) })) !== 'ok') {
      throw new StorageError('ConditionNotMet');
    }
    const parts = { base: false, snapshots: false };
    const outcome = await call.services.blobs.deleteBlob(call.account, row, parts, row.etag);
    if (outcome === 'ok') deleted += 1;
    else if (outcome !== 'blobNotFound' && outcome !== 'etagMismatch') throw writeFailure(outcome);
    // blobNotFound or etagMismatch: undeleted or purged meanwhile, no longer this request's.
  }
  if (deleted === 0) return notFound(call, resource.container);
  return { status: 202, headers: { 'x-ms-delete-type-permanent': 'true' } };
}

/** What List Blobs shows of a soft-deleted row: the key it had, when it was deleted, the days left. */
export interface SoftDeletedView {
  readonly record: BlobRecord;
  readonly deletedMs: number;
  readonly remainingDays: number;
}

/** A soft-deleted row seen as it was (its original key), or undefined for any other row. */
export function softDeletedView(record: BlobRecord, nowMs: number): SoftDeletedView | undefined {
  const key = parseSoftDeletedKey(record.snapshot);
  if (key === undefined) return undefined;
  const expiresMs = Date.parse(key.expiresStamp);
  const remainingDays = Math.max(0, Math.ceil((expiresMs - nowMs) / dayMs));
  return { record: { ...record, snapshot: key.originalKey }, deletedMs: Date.parse(key.deletedStamp), remainingDays };
}

/** The soft-deleted rows of the name, in key order. */
async function softDeletedRows(call: BlobCall, resource: BlobOf): Promise<BlobRecord[]> {
  const rows: BlobRecord[] = [];
  let from = { name: resource.blob, snapshot: softDeletedKeyPrefix };
  for (;;) {
    const page = await call.services.blobs.listBlobs(call.account, resource.container, {
      prefix: resource.blob,
      from,
      limit: undeletePageRows,
      snapshots: false,
      uncommitted: false,
      deleted: true,
    });
    let last: BlobRecord | undefined;
    for (const listed of page) {
      if (listed.kind !== 'blob' || listed.record.name !== resource.blob) return rows;
      if (!listed.record.snapshot.startsWith(softDeletedKeyPrefix)) return rows;
      // `from` is inclusive: the row a page ended on comes again first.
      if (listed.record.snapshot !== from.snapshot || rows.length === 0) rows.push(listed.record);
      last = listed.record;
    }
    if (page.length < undeletePageRows || last === undefined) return rows;
    from = { name: resource.blob, snapshot: last.snapshot };
  }
}

/**
 * Undelete Blob: 200 once every soft-deleted row of the name is back under its key (each restore
 * its own transaction, durable before the answer; one interrupted is finished by asking again).
 * The base blob deleted last comes back as the base blob when there is none; any other soft-deleted
 * base blob (one deleted before, or when a blob was written at the name meanwhile) comes back as a
 * snapshot whose timestamp is its deletion time (chosen: the docs make an overwritten blob's state
 * a snapshot). A name with neither a blob nor anything soft-deleted is 404 BlobNotFound.
 */
export async function undeleteBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const rows = await softDeletedRows(call, resource);
  let baseThere = (await findBlob(call, keyOf(resource))) !== undefined;
  if (rows.length === 0 && !baseThere) return notFound(call, resource.container);
  const deletedStamp = (row: BlobRecord) => parseSoftDeletedKey(row.snapshot)!.deletedStamp;
  const deletedLastFirst = [...rows].sort((a, b) => (deletedStamp(a) < deletedStamp(b) ? 1 : -1));
  const order = [...rows.filter((row) => !isBase(row)), ...deletedLastFirst.filter(isBase)];
  for (const row of order) {
    const key = parseSoftDeletedKey(row.snapshot)!;
    const asBase = key.originalKey === '' && !baseThere && (await restore(call, row, '')) === 'ok';
    if (asBase) baseThere = true;
    else await restore(call, row, key.originalKey === '' ? key.deletedStamp : key.originalKey);
  }
  return { status: 200 };
}

function isBase(row: BlobRecord): boolean {
  return parseSoftDeletedKey(row.snapshot)?.originalKey === '';
}

/** Moves the soft-deleted `row` back under `snapshot` ('' the base blob), without a lease. */
async function restore(call: BlobCall, row: BlobRecord, snapshot: string): Promise<'ok' | 'taken' | 'gone'> {
  const state = encodeBlobState({ ...decodeBlobState(row.state), lease: noLease });
  const parts = { base: false, snapshots: false };
  // Restored as the base blob, it is indexed by its tags again (withIndexTags: none indexed now).
  const restored = withIndexTags({ ...row, snapshot, state }, undefined);
  const outcome = await call.services.blobs.deleteBlob(call.account, row, parts, row.etag, restored);
  if (outcome === 'ok') return 'ok';
  if (outcome === 'etagMismatch') return 'taken'; // a base blob written meanwhile (blob-store.ts deleteBlob)
  if (outcome === 'blobNotFound') return 'gone'; // restored or purged meanwhile
  throw writeFailure(outcome);
}

/**
 * What an overwrite keeps of the blob it replaces while soft delete is on and versioning off
 * (soft-delete-blob-overview, "Blob soft delete protection by operation": Put Blob, Put Block List,
 * Copy Blob and Copy Blob from URL "on an active blob" generate a snapshot of its prior state): the
 * blob as a soft-deleted snapshot of this moment, to putBlob's keepAs, in the write's transaction.
 * Undefined: soft delete off, or a blob in the archive tier (the overview: no overwrite protection
 * there). Chosen where the table is silent: Put Blob From URL, which replaces a blob too, keeps it as
 * well; Set Blob Properties and Metadata, Put Page, Append Block and Set Blob Tier keep nothing, as
 * the table says.
 */
export async function softDeletedOverwrite(call: BlobCall, current: Found): Promise<BlobRecord | undefined> {
  if (tierAt(current.state.tier, call.services.clock.nowMs())?.tier === 'Archive') return undefined;
  const prefix = await softDeleteKeyPrefix(call);
  if (prefix === undefined) return undefined;
  const state = encodeBlobState({ ...current.state, lease: noLease, versionId: undefined });
  const snapshot = `${prefix}${snapshotStamp(call.services.clock.nowMs())}`;
  return { ...current.record, snapshot, state };
}
