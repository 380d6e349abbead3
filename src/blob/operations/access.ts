// What every blob operation shares: reading the request's headers, finding the blob (or saying
// which of container and blob is missing), the compare-and-swap write that makes a check and its
// write one atomic step (cas-retry.ts), and the headers that describe a blob version.
import { invalidQueryParameter, StorageError } from '../../errors.js';
import { firstHeader } from '../../http/headers.js';
import { metadataHeaders } from '../../http/metadata-headers.js';
import type { ServiceCall } from '../../http/service-definition.js';
import type { BlobKey, BlobRecord, ContentChange, WriteOutcome } from '../../storage/blob-store.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { isSnapshotStamp, visibleEtag } from '../wire/etag.js';
import type { Versioned } from '../wire/conditions.js';
import { sameTags } from '../tags/tag-set.js';
import { httpDate, newEtag } from '../wire/reply-headers.js';
import {
  decodeBlobState,
  defaultType,
  encodeBlobState,
  metadataMap,
  type BlobState,
  type BlobType,
  type ContentHeaders,
} from '../state/blob.js';
import { leaseHeaders, noLease } from '../state/leases.js';
import type { BlobResource } from '../resources.js';
import type { BlobServices } from '../services.js';
import { asNewVersion, versionHeaders } from './versions.js';
import { softDeletedOverwrite } from './soft-delete.js';

export type BlobCall = ServiceCall<BlobServices>;
export type BlobOf = Extract<BlobResource, { readonly kind: 'blob' }>;

/** A blob version as read: its record and its decoded state. */
export interface Found {
  readonly record: BlobRecord;
  readonly state: BlobState;
}

export function header(call: BlobCall, name: string): string | undefined {
  return firstHeader(call.headers[name]);
}

export function nowMs(call: BlobCall): number {
  return Math.trunc(call.services.clock.nowMs());
}

export function leaseIdOf(call: BlobCall): string | undefined {
  return header(call, 'x-ms-lease-id');
}

/** The `snapshot` query parameter: '' for the base blob; not a timestamp: 400 InvalidQueryParameterValue. */
export function snapshotOf(call: BlobCall): string {
  const snapshot = call.query.get('snapshot');
  if (snapshot === null) return '';
  if (!isSnapshotStamp(snapshot)) {
    throw invalidQueryParameter('snapshot', snapshot, 'The value is not a snapshot timestamp.');
  }
  return snapshot;
}

/**
 * Writes never address a snapshot or a version (unverified: the service's code for it; ours is 400
 * InvalidQueryParameterValue).
 */
export function refuseSnapshot(call: BlobCall): void {
  const snapshot = call.query.get('snapshot');
  if (snapshot !== null) {
    throw invalidQueryParameter('snapshot', snapshot, 'This operation cannot be performed on a blob snapshot.');
  }
  const version = call.query.get('versionid');
  if (version !== null) {
    throw invalidQueryParameter('versionid', version, 'This operation cannot be performed on a blob version.');
  }
}

export function keyOf(resource: BlobOf, snapshot = ''): BlobKey {
  return { container: resource.container, name: resource.blob, snapshot };
}

/** 404 ContainerNotFound when the container is missing, else 404 BlobNotFound. */
export async function notFound(call: BlobCall, container: string): Promise<never> {
  const found = await call.services.blobs.getContainer(call.account, container);
  throw new StorageError(found === undefined ? 'ContainerNotFound' : 'BlobNotFound');
}

/** What conditional headers test of a blob version: its ETag, Last-Modified and index tags. */
export function versioned(found: Found): Versioned {
  return { etag: found.record.etag, lastModifiedMs: found.record.lastModifiedMs, tags: found.state.tags };
}

/** The blob version `key` names in `account` (default: the request's; a copy source may be in another). */
export async function findBlob(call: BlobCall, key: BlobKey, account = call.account): Promise<Found | undefined> {
  const record = await call.services.blobs.getBlob(account, key);
  return record === undefined ? undefined : { record, state: decodeBlobState(record.state) };
}

export async function requireBlob(call: BlobCall, key: BlobKey): Promise<Found> {
  return (await findBlob(call, key)) ?? notFound(call, key.container);
}

/**
 * requireBlob, with the version's whole content (`bytes`) when it has at most `contentBytesMax`
 * bytes and the store reads both at once (BlobStore.getBlobAndContent): one read, not two.
 */
export async function requireBlobAndContent(
  call: BlobCall,
  key: BlobKey,
  contentBytesMax: number,
): Promise<Found & { readonly bytes?: Buffer | undefined }> {
  const store = call.services.blobs;
  if (store.getBlobAndContent === undefined) return requireBlob(call, key);
  const found = await store.getBlobAndContent(call.account, key, contentBytesMax);
  if (found === undefined) return notFound(call, key.container);
  return { record: found.record, state: decodeBlobState(found.record.state), bytes: found.bytes };
}

export async function requireContainer(call: BlobCall, container: string): Promise<void> {
  if ((await call.services.blobs.getContainer(call.account, container)) === undefined) {
    throw new StorageError('ContainerNotFound');
  }
}

/** The next version of a base blob: a fresh ETag and Last-Modified, the given state and size. */
export function nextRecord(call: BlobCall, resource: BlobOf, state: BlobState, sizeBytes: number): BlobRecord {
  const modifiedMs = nowMs(call);
  return {
    ...keyOf(resource),
    etag: newEtag(modifiedMs),
    lastModifiedMs: modifiedMs,
    sizeBytes,
    state: encodeBlobState(state),
  };
}

/**
 * The state of a base blob's new content (Put Blob, Put Block List): the request's blob type,
 * content headers and metadata; the creation time and lease of the version it replaces, if any.
 */
export function newContentState(
  call: BlobCall,
  current: Found | undefined,
  blobType: BlobType,
  headers: ContentHeaders,
  metadata: BlobState['metadata'],
): BlobState {
  return {
    blobType,
    createdMs: current?.state.createdMs ?? nowMs(call),
    headers,
    metadata,
    lease: current?.state.lease ?? noLease,
    committedBlockCount: 0,
    // New content at the same path: its Data Lake access control stays (chosen; the docs do not say
    // what a Blob API overwrite does to a path's ACL on a hierarchical account).
    ...(current?.state.datalake !== undefined && { datalake: current.state.datalake }),
  };
}

export interface Write {
  readonly record: BlobRecord;
  readonly content: ContentChange;
  /** The write makes a new version of the blob (with versioning: operations/versions.ts). */
  readonly makesVersion?: boolean;
  /**
   * The write replaces the blob's content (Put Blob, Put Block List, Copy Blob): without versioning,
   * soft delete keeps the blob it replaces as a soft-deleted snapshot (operations/soft-delete.ts).
   */
  readonly overwrites?: boolean;
}

/**
 * Read → decide → compare-and-swap, again while another writer wins: `decide` sees the base blob
 * as it is now (undefined: none) and checks conditions, lease and limits against it each time.
 * `read` is the base blob as the request read it already (before its body, say): the first
 * attempt decides on that instead of reading again, which is as exact, since its write lands only
 * if the blob still has the ETag read; if it changed meanwhile, the next attempt reads afresh.
 */
export async function updateBlob(
  call: BlobCall,
  resource: BlobOf,
  decide: (current: Found | undefined) => Write | Promise<Write>,
  read?: { readonly found: Found | undefined },
): Promise<BlobRecord> {
  let first = read;
  return retryWhileRaced('The blob changed under every attempt to write it; retry the request.', async () => {
    const current = first === undefined ? await findBlob(call, keyOf(resource)) : first.found;
    first = undefined;
    const write = await decide(current);
    const { record: version, keepAs: keptVersion } =
      write.makesVersion === true ? asNewVersion(call, current, write.record) : { ...write, keepAs: undefined };
    const overwritten = write.overwrites === true && current !== undefined && !call.services.versioning;
    const keepAs = overwritten ? await softDeletedOverwrite(call, current) : keptVersion;
    const record = withIndexTags(version, current);
    const ifEtag = current?.record.etag ?? null;
    const outcome = await call.services.blobs.putBlob(call.account, record, write.content, ifEtag, keepAs);
    if (outcome === 'ok') return record;
    if (outcome !== 'etagMismatch') throw writeFailure(outcome);
    return raced;
  });
}

/**
 * The record with indexTags set when the write changes the base blob's tags (the store indexes
 * them with the record, blob-store.ts "Blob index tags"); as it is when they stay the same.
 */
export function withIndexTags(record: BlobRecord, current: Found | undefined): BlobRecord {
  if (record.snapshot !== '') return record;
  const next = decodeBlobState(record.state).tags ?? [];
  const before = current?.state.tags ?? [];
  return sameTags(before, next) ? record : { ...record, indexTags: next };
}

export function writeFailure(outcome: Exclude<WriteOutcome, 'ok'>): StorageError {
  if (outcome === 'containerNotFound') return new StorageError('ContainerNotFound');
  if (outcome === 'blobNotFound') return new StorageError('BlobNotFound');
  return new StorageError('ConditionNotMet');
}

/** ETag and Last-Modified of a write's reply, with x-ms-request-server-encrypted as the service answers. */
export function writtenHeaders(record: BlobRecord): Record<string, string> {
  return {
    ETag: visibleEtag(record.etag),
    'Last-Modified': httpDate(record.lastModifiedMs),
    'x-ms-request-server-encrypted': 'true',
  };
}

/** The headers of Get Blob and Get Blob Properties that describe the version (get-blob-properties). */
export function describeHeaders(found: Found, atMs: number): Record<string, string> {
  const { record, state } = found;
  const headers: Record<string, string> = {
    'Last-Modified': httpDate(record.lastModifiedMs),
    'x-ms-creation-time': httpDate(state.createdMs),
    ...metadataHeaders(metadataMap(state)),
    'x-ms-blob-type': state.blobType,
    ETag: visibleEtag(record.etag),
    ...contentHeaders(state),
    ...leaseHeaders(state.lease, atMs), // a snapshot's state has no lease: available
    ...copyHeaders(state),
    ...versionHeaders(found),
    'x-ms-server-encrypted': 'true',
    'Accept-Ranges': 'bytes',
  };
  if (state.blobType === 'AppendBlob') headers['x-ms-blob-committed-block-count'] = String(state.committedBlockCount);
  if (state.sealed === true) headers['x-ms-blob-sealed'] = 'true'; // append-blob-seal: sent when sealed
  // get-blob-properties: x-ms-tag-count, when the blob has tags.
  if (state.tags !== undefined && state.tags.length > 0) headers['x-ms-tag-count'] = String(state.tags.length);
  if (state.blobType === 'PageBlob') headers['x-ms-blob-sequence-number'] = String(state.sequenceNumber ?? 0);
  return headers;
}

function contentHeaders(state: BlobState): Record<string, string> {
  const { contentType, contentEncoding, contentLanguage, cacheControl, contentDisposition } = state.headers;
  // A content type Set Blob Properties cleared is not sent at all.
  const headers: Record<string, string> = contentType === '' ? {} : { 'Content-Type': contentType ?? defaultType };
  if (contentEncoding !== undefined) headers['Content-Encoding'] = contentEncoding;
  if (contentLanguage !== undefined) headers['Content-Language'] = contentLanguage;
  if (cacheControl !== undefined) headers['Cache-Control'] = cacheControl;
  if (contentDisposition !== undefined) headers['Content-Disposition'] = contentDisposition;
  return headers;
}

function copyHeaders(state: BlobState): Record<string, string> {
  const { copy } = state;
  if (copy === undefined) return {};
  return {
    'x-ms-copy-id': copy.id,
    'x-ms-copy-source': copy.source,
    'x-ms-copy-status': 'success',
    'x-ms-copy-progress': `${copy.sizeBytes}/${copy.sizeBytes}`,
    'x-ms-copy-completion-time': httpDate(copy.completedMs),
  };
}
