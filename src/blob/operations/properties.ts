// Set Blob Properties, Get and Set Blob Metadata, Delete Blob
// (https://learn.microsoft.com/rest/api/storageservices/set-blob-properties, get-blob-metadata,
// set-blob-metadata, delete-blob).
import { invalidHeaderValue, invalidQueryParameter, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { metadataFromHeaders, metadataHeaders } from '../../http/metadata-headers.js';
import {
  findBlob,
  header,
  keyOf,
  leaseIdOf,
  nextRecord,
  nowMs,
  notFound,
  refuseSnapshot,
  requireBlob,
  snapshotOf,
  updateBlob,
  writeFailure,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  type Found,
  versioned,
} from './access.js';
import { checkWrite } from './checks.js';
import { keptVersion, requireVersion, versionIdHeader, versionIdOf } from './versions.js';
import { asksPermanentDelete, deletePermanently, softDeleteKeyPrefix } from './soft-delete.js';
import { contentHeadersOf } from './content.js';
import { changesPageBlob, setPageBlobProperties } from './pages.js';
import { visibleEtag } from '../wire/etag.js';
import { httpDate } from '../wire/reply-headers.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import type { BlobState } from '../state/blob.js';
import { versionKey } from '../../storage/blob-store.js';
import { evaluate, parseConditions, type Conditions } from '../wire/conditions.js';
import { checkLeaseForRead } from '../state/leases.js';
import { refuseOffline } from '../state/tier.js';

/** Changes an existing base blob's state, keeping its content (404 when there is none); `makesVersion` as Write's. */
async function changeState(
  call: BlobCall,
  resource: BlobOf,
  change: (state: BlobState) => BlobState,
  makesVersion = false,
): Promise<Reply> {
  refuseSnapshot(call);
  const conditions = parseConditions(call.headers);
  const record = await updateBlob(call, resource, (current) => {
    if (current === undefined) throw new StorageError('BlobNotFound');
    checkWrite(call, conditions, current);
    // An archived blob's metadata is read-only (access-tiers-overview), its properties too (not among
    // the operations that article lists as supported in the archive tier).
    refuseOffline(current.state.tier, nowMs(call));
    const state = change(current.state);
    const record = nextRecord(call, resource, state, current.record.sizeBytes);
    return { record, content: { kind: 'keep' }, makesVersion };
  }).catch(async (error: unknown) => {
    if (error instanceof StorageError && error.code === 'BlobNotFound') return notFound(call, resource.container);
    throw error;
  });
  return { status: 200, headers: { ...writtenHeaders(record), ...(makesVersion ? versionIdHeader(record) : {}) } };
}

/**
 * Every content header is replaced: one the request leaves out is cleared (set-blob-properties),
 * the content type too (kept as '': none, not the default Put Blob gives).
 */
export async function setBlobProperties(call: BlobCall, resource: BlobOf): Promise<Reply> {
  if (changesPageBlob(call)) return setPageBlobProperties(call, resource);
  const given = contentHeadersOf(call, false, undefined);
  const headers = { ...given, contentType: given.contentType ?? '' };
  return changeState(call, resource, (state) => ({ ...state, headers }));
}

export async function setBlobMetadata(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const metadata = [...metadataFromHeaders(call.rawHeaders)];
  // Set Blob Metadata makes a new version; Set Blob Properties does not (versioning-overview).
  return changeState(call, resource, (state) => ({ ...state, metadata }), true);
}

/** GET or HEAD ?comp=metadata: the metadata headers, ETag and Last-Modified. */
export async function getBlobMetadata(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const snapshot = snapshotOf(call);
  const versionId = versionIdOf(call);
  const found =
    versionId === undefined
      ? await requireBlob(call, keyOf(resource, snapshot))
      : await requireVersion(call, resource, versionId);
  if (evaluate(parseConditions(call.headers), versioned(found)) !== 'ok') throw new StorageError('ConditionNotMet');
  if (found.record.snapshot === '') checkLeaseForRead(found.state.lease, nowMs(call), leaseIdOf(call));
  return {
    status: 200,
    headers: {
      ...metadataHeaders(new Map(found.state.metadata)),
      ETag: visibleEtag(found.record.etag),
      'Last-Modified': httpDate(found.record.lastModifiedMs),
    },
  };
}

/**
 * 202 Accepted. The base blob with snapshots needs x-ms-delete-snapshots (include: all of them,
 * only: the snapshots alone), else 409 SnapshotsPresent; `snapshot=` deletes that one snapshot,
 * `versionid=` that previous version (its content freed). With versioning the base blob is kept
 * as a previous version: x-ms-delete-type-permanent is false then. Chosen (unverified): the
 * current version's own id deletes the base blob, as a request without it.
 */
export async function deleteBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const snapshot = snapshotOf(call);
  const versionId = versionIdOf(call);
  const permanent = asksPermanentDelete(call);
  const option = header(call, 'x-ms-delete-snapshots');
  if (option !== undefined && option !== 'include' && option !== 'only') {
    throw invalidHeaderValue('x-ms-delete-snapshots', option);
  }
  if (snapshot !== '' && option !== undefined) {
    throw invalidQueryParameter('snapshot', snapshot, 'x-ms-delete-snapshots cannot be used to delete a snapshot.');
  }
  if (versionId !== undefined && option !== undefined) {
    throw invalidQueryParameter('versionid', versionId, 'x-ms-delete-snapshots cannot be used to delete a version.');
  }
  if (permanent) return deletePermanently(call, resource, versionId === undefined ? snapshot : versionKey(versionId));
  const conditions = parseConditions(call.headers);
  return retryWhileRaced('The blob changed under every attempt to delete it; retry the request.', async () => {
    const found =
      versionId === undefined
        ? await findBlob(call, keyOf(resource, snapshot))
        : await requireVersion(call, resource, versionId);
    if (found === undefined) return deleteStaged(call, resource, snapshot === '' && option !== 'only', conditions);
    checkWrite(call, conditions, found); // a snapshot has no lease of its own
    const parts = await deletedParts(call, resource, found, option);
    const keep = found.record.snapshot === '' && parts.base && call.services.versioning;
    const keepAs = keep ? keptVersion(found) : undefined;
    // A delete that keeps a version is not a soft delete too (its snapshots go as before: chosen).
    const keptPrefix = keep ? undefined : await softDeleteKeyPrefix(call);
    const { etag } = found.record;
    const blobs = call.services.blobs;
    const outcome = await blobs.deleteBlob(call.account, found.record, parts, etag, keepAs, keptPrefix);
    const gone = !keep && keptPrefix === undefined;
    if (outcome === 'ok') return { status: 202, headers: { 'x-ms-delete-type-permanent': String(gone) } };
    if (outcome === 'blobNotFound') return raced;
    if (outcome !== 'etagMismatch') throw writeFailure(outcome);
    return raced;
  });
}

/**
 * Delete Blob of a name that has no blob: its staged (uncommitted) blocks are deleted, 202, as the
 * service does; 404 when it has none (or when `staged` is false: a snapshot, or only snapshots asked).
 */
async function deleteStaged(
  call: BlobCall,
  resource: BlobOf,
  staged: boolean,
  conditions: Conditions,
): Promise<Reply | typeof raced> {
  if (!staged) return notFound(call, resource.container);
  checkWrite(call, conditions, undefined);
  const parts = { base: true, snapshots: false };
  const outcome = await call.services.blobs.deleteBlob(call.account, keyOf(resource), parts, null);
  if (outcome === 'ok') return { status: 202, headers: { 'x-ms-delete-type-permanent': 'true' } };
  if (outcome === 'etagMismatch') return raced; // a blob was committed meanwhile
  return notFound(call, resource.container);
}

async function deletedParts(
  call: BlobCall,
  resource: BlobOf,
  found: Found,
  option: string | undefined,
): Promise<{ base: boolean; snapshots: boolean }> {
  if (found.record.snapshot !== '') return { base: false, snapshots: false };
  if (option === 'only') return { base: false, snapshots: true };
  if (option === 'include') return { base: true, snapshots: true };
  const [first] = await call.services.blobs.listBlobs(call.account, resource.container, {
    prefix: resource.blob,
    limit: 1,
    snapshots: true,
    uncommitted: false,
  });
  if (first?.kind === 'blob' && first.record.name === resource.blob && first.record.snapshot !== '') {
    throw new StorageError('SnapshotsPresent');
  }
  return { base: true, snapshots: false };
}
