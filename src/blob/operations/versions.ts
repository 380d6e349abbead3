// Blob versions (https://learn.microsoft.com/azure/storage/blobs/versioning-overview), with
// --blob-versioning: each write that makes new content or metadata gives the base blob a new version
// id, and keeps the version it replaces as a previous version (BlobStore's keepAs, in the write's
// own transaction); a delete keeps it too. Previous versions are read, listed and deleted by
// `versionid`; the current one answers to its own id as well.
import { invalidQueryParameter } from '../../errors.js';
import { versionKey, type BlobRecord } from '../../storage/blob-store.js';
import { findBlob, keyOf, notFound, type BlobCall, type BlobOf, type Found } from './access.js';
import { isSnapshotStamp, snapshotStamp } from '../wire/etag.js';
import { decodeBlobState, encodeBlobState } from '../state/blob.js';
import { noLease } from '../state/leases.js';
import { versionOf } from '../state/version.js';

/** The `versionid` query parameter, if given: a timestamp as the service forms them, else 400. */
export function versionIdOf(call: BlobCall): string | undefined {
  const id = call.query.get('versionid');
  if (id === null) return undefined;
  if (!isSnapshotStamp(id)) throw invalidQueryParameter('versionid', id, 'The value is not a version id.');
  if (call.query.get('snapshot') !== null) {
    // Chosen (unverified): a snapshot and a version at once name nothing.
    throw invalidQueryParameter('versionid', id, 'A request names a snapshot or a version, not both.');
  }
  return id;
}

/** The version `id` of the blob: a previous version, or the base blob when it is its current version. */
export async function findVersion(
  call: BlobCall,
  resource: BlobOf,
  id: string,
  account = call.account,
): Promise<Found | undefined> {
  const previous = await findBlob(call, keyOf(resource, versionKey(id)), account);
  if (previous !== undefined) return previous;
  const base = await findBlob(call, keyOf(resource), account);
  return base?.state.versionId === id ? base : undefined;
}

export async function requireVersion(call: BlobCall, resource: BlobOf, id: string): Promise<Found> {
  return (await findVersion(call, resource, id)) ?? notFound(call, resource.container);
}

/**
 * A new version id after `previous` (a blob's ids only grow: two writes in one millisecond still
 * differ, and list in the order they were made).
 */
function nextVersionId(nowMs: number, previous: string | undefined): string {
  const stamp = snapshotStamp(nowMs);
  if (previous === undefined || stamp > previous) return stamp;
  const digits = previous.slice(20, -1).padEnd(7, '0');
  const next = Number(digits) + 1;
  if (next < 10_000_000) return `${previous.slice(0, 20)}${String(next).padStart(7, '0')}Z`;
  return snapshotStamp(Date.parse(previous.slice(0, 23) + 'Z') + 1);
}

/**
 * The version id a base blob answers to: the one it was written with, else (written before
 * versioning was on) its Last-Modified time, the same each time it is asked.
 */
function versionIdOfBase(found: Found): string {
  return found.state.versionId ?? `${new Date(found.record.lastModifiedMs).toISOString().slice(0, 23)}0000Z`;
}

/**
 * A write that makes a new version: `record` with a new version id in its state, and (versioning on,
 * a current blob there) the record the current blob is kept as. Versioning off: as it is.
 */
export function asNewVersion(
  call: BlobCall,
  current: Found | undefined,
  record: BlobRecord,
): { readonly record: BlobRecord; readonly keepAs: BlobRecord | undefined } {
  if (!call.services.versioning) return { record, keepAs: undefined };
  const previousId = current === undefined ? undefined : versionIdOfBase(current);
  const versionId = nextVersionId(record.lastModifiedMs, previousId);
  const state = encodeBlobState({ ...decodeBlobState(record.state), versionId });
  return { record: { ...record, state }, keepAs: current && keptVersion(current) };
}

/** The record a base blob is kept as when it stops being current: no lease (a version has none). */
export function keptVersion(current: Found): BlobRecord {
  const { record, state } = current;
  const keptState = encodeBlobState({ ...state, lease: noLease, versionId: versionIdOfBase(current) });
  return { ...record, snapshot: versionKey(versionIdOfBase(current)), state: keptState };
}

/** x-ms-version-id of a write that made a version (put-blob, put-block-list, copy-blob, set-blob-metadata). */
export function versionIdHeader(record: BlobRecord): Record<string, string> {
  const { versionId } = decodeBlobState(record.state);
  return versionId === undefined ? {} : { 'x-ms-version-id': versionId };
}

/** Get Blob's and Get Blob Properties' x-ms-version-id, and x-ms-is-current-version for the current one. */
export function versionHeaders(found: Found): Record<string, string> {
  const version = versionOf(found.record, found.state);
  if (version === undefined) return {};
  // Chosen (unverified): x-ms-is-current-version is sent only for the current version.
  return version.current
    ? { 'x-ms-version-id': version.id, 'x-ms-is-current-version': 'true' }
    : { 'x-ms-version-id': version.id };
}
