// Set Blob Tags and Get Blob Tags, and the x-ms-tags header of the writes that make a blob
// (https://learn.microsoft.com/rest/api/storageservices/set-blob-tags, get-blob-tags, put-blob).
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import {
  header,
  keyOf,
  leaseIdOf,
  nowMs,
  requireBlob,
  snapshotOf,
  versioned,
  withIndexTags,
  writeFailure,
  type BlobCall,
  type BlobOf,
  type Found,
} from './access.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { requireVersion, versionIdOf } from './versions.js';
import { encodeBlobState } from '../state/blob.js';
import { checkLeaseForRead } from '../state/leases.js';
import { parseTagsHeader, parseTagsXml, writeTagsXml, type TagSet } from '../tags/tag-set.js';
import { evaluate, parseConditions } from '../wire/conditions.js';
import { leaseEtag } from '../wire/etag.js';
import { bodyText, xmlReply } from '../wire/reply-headers.js';

/** The tags a write that makes a blob gives it (x-ms-tags); undefined when none, as the state keeps them. */
export function requestTags(call: BlobCall): TagSet | undefined {
  const text = header(call, 'x-ms-tags');
  const tags = text === undefined ? [] : parseTagsHeader(text);
  return tags.length === 0 ? undefined : tags;
}

/**
 * x-ms-copy-source-tag-option: REPLACE (the default: the destination gets x-ms-tags, or none) or
 * COPY (the source's tags, and x-ms-tags must not be sent) (copy-blob-from-url; chosen: Copy Blob,
 * synchronous here, takes it too).
 */
export function copiesSourceTags(call: BlobCall): boolean {
  const option = header(call, 'x-ms-copy-source-tag-option');
  if (option === undefined || option.toUpperCase() === 'REPLACE') return false;
  if (option.toUpperCase() !== 'COPY') throw invalidHeaderValue('x-ms-copy-source-tag-option', option);
  if (header(call, 'x-ms-tags') !== undefined) throw new StorageError('InvalidTag', 'x-ms-tags cannot go with COPY.');
  return true;
}

/**
 * The conditions Get and Set Blob Tags test: x-ms-if-tags (and any other conditional header,
 * chosen: honoured rather than ignored), and a lease id, which must be the lease in force.
 */
function checkTagAccess(call: BlobCall, found: Found): void {
  if (evaluate(parseConditions(call.headers), versioned(found)) !== 'ok') throw new StorageError('ConditionNotMet');
  if (found.record.snapshot === '') checkLeaseForRead(found.state.lease, nowMs(call), leaseIdOf(call));
}

/** The blob, snapshot (`snapshot=`) or version (`versionid=`) whose tags the request names. */
async function tagged(call: BlobCall, resource: BlobOf): Promise<Found> {
  const versionId = versionIdOf(call);
  if (versionId !== undefined) return requireVersion(call, resource, versionId);
  return requireBlob(call, keyOf(resource, snapshotOf(call)));
}

/** 200 with the Tags document of the blob, snapshot or version. */
export async function getBlobTags(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const found = await tagged(call, resource);
  checkTagAccess(call, found);
  return xmlReply(200, writeTagsXml(found.state.tags ?? []));
}

/**
 * 204. Replaces all the tags of the blob (or of a snapshot or version: those are not indexed).
 * Setting tags changes neither the ETag nor Last-Modified (storage-manage-find-blobs); the record
 * still changes by compare-and-swap, so its stored etag gets an invisible mark (wire/etag.ts,
 * leaseEtag) that every other write notices.
 */
export async function setBlobTags(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const parsed = parseTagsXml(bodyText(call.body));
  const tags = parsed.length === 0 ? undefined : parsed;
  return retryWhileRaced('The blob changed under every attempt to set its tags; retry the request.', async () => {
    const found = await tagged(call, resource);
    checkTagAccess(call, found);
    const state = encodeBlobState({ ...found.state, tags });
    const record = withIndexTags({ ...found.record, etag: leaseEtag(found.record.etag), state }, found);
    const outcome = await call.services.blobs.putBlob(call.account, record, { kind: 'keep' }, found.record.etag);
    if (outcome === 'ok') return { status: 204, headers: {} };
    if (outcome !== 'etagMismatch') throw writeFailure(outcome);
    return raced;
  });
}
