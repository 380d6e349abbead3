// What every Data Lake operation shares: headers, the clock, finding a file system and a path,
// conditional headers, the lease check, and the ETag and Last-Modified of a reply.
import { StorageError } from '../../errors.js';
import { firstHeader } from '../../http/headers.js';
import type { ServiceCall } from '../../http/service-definition.js';
import type { BlobRecord, WriteOutcome } from '../../storage/blob-store.js';
import { httpDate, visibleEtag } from '../../wire/version-etag.js';
import type { DatalakeServices } from '../services.js';
import { checkLeaseForWrite, type LeaseTarget } from '../../domain/lease.js';
import { decodePathState, type PathState } from '../state.js';

export type DatalakeCall = ServiceCall<DatalakeServices>;

export function header(call: DatalakeCall, name: string): string | undefined {
  return firstHeader(call.headers[name]);
}

export function nowMs(call: DatalakeCall): number {
  return call.services.clock.nowMs();
}

/** A path as read: its record and decoded state. */
export interface FoundPath {
  readonly record: BlobRecord;
  readonly state: PathState;
}

export async function findPath(call: DatalakeCall, filesystem: string, path: string): Promise<FoundPath | undefined> {
  const record = await call.services.blobs.getBlob(call.account, { container: filesystem, name: path, snapshot: '' });
  return record && { record, state: decodePathState(record.state) };
}

/** The path, or 404 PathNotFound (FilesystemNotFound when its file system is missing). */
export async function requirePath(call: DatalakeCall, filesystem: string, path: string): Promise<FoundPath> {
  const found = await findPath(call, filesystem, path);
  if (found !== undefined) return found;
  await requireFilesystem(call, filesystem);
  throw new StorageError('PathNotFound');
}

export async function requireFilesystem(call: DatalakeCall, filesystem: string): Promise<void> {
  if ((await call.services.blobs.getContainer(call.account, filesystem)) === undefined) {
    throw new StorageError('FilesystemNotFound');
  }
}

/** A failed store write in the Data Lake API's words. */
export function pathWriteFailure(outcome: Exclude<WriteOutcome, 'ok'>): StorageError {
  if (outcome === 'containerNotFound') return new StorageError('FilesystemNotFound');
  if (outcome === 'blobNotFound') return new StorageError('PathNotFound');
  return new StorageError('ConditionNotMet');
}

/** The ETag and Last-Modified of a reply about `record`. */
export function versionHeaders(record: {
  readonly etag: string;
  readonly lastModifiedMs: number;
}): Record<string, string> {
  return { ETag: visibleEtag(record.etag), 'Last-Modified': httpDate(record.lastModifiedMs) };
}

/**
 * If-Match, If-None-Match (`*` included), If-Modified-Since and If-Unmodified-Since against the
 * path's current version (undefined: none), with the prefix `x-ms-source-` for a rename's source
 * (specifying-conditional-headers-for-blob-service-operations: the Data Lake API takes the same).
 * A failed one is 412 ConditionNotMet (SourceConditionNotMet for the source).
 */
export function checkConditions(
  call: DatalakeCall,
  current: { readonly etag: string; readonly lastModifiedMs: number } | undefined,
  prefix = '',
): void {
  const failed = new StorageError(prefix === '' ? 'ConditionNotMet' : 'SourceConditionNotMet');
  const etag = current && visibleEtag(current.etag);
  const tags = (name: string) =>
    header(call, `${prefix}${name}`)
      ?.split(',')
      .map((tag) => tag.trim());
  const date = (name: string) => {
    const ms = Date.parse(header(call, `${prefix}${name}`) ?? '');
    return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
  };
  const named = (list: string[]) => list.some((tag) => tag === '*' || tag === etag || `"${tag}"` === etag);
  const modifiedSeconds = current && Math.floor(current.lastModifiedMs / 1000);
  const ifMatch = tags('if-match');
  if (ifMatch !== undefined && (current === undefined || !named(ifMatch))) throw failed;
  const ifNoneMatch = tags('if-none-match');
  if (ifNoneMatch !== undefined && current !== undefined && named(ifNoneMatch)) throw failed;
  const unmodifiedSince = date('if-unmodified-since');
  if (unmodifiedSince !== undefined && (modifiedSeconds === undefined || modifiedSeconds > unmodifiedSince))
    throw failed;
  const modifiedSince = date('if-modified-since');
  if (modifiedSince !== undefined && current !== undefined && modifiedSeconds! <= modifiedSince) throw failed;
}

/**
 * A write to a leased path names its lease (x-ms-lease-id): 412 LeaseIdMissing without it,
 * LeaseIdMismatchWithBlobOperation with another, LeaseNotPresentWithBlobOperation with one when
 * no lease is in force, as the Blob API answers for the same blob (domain/lease.ts).
 */
export function checkLease(
  call: DatalakeCall,
  state: Pick<PathState, 'lease'> | undefined,
  leaseHeader = 'x-ms-lease-id',
  target: LeaseTarget = 'blob',
): void {
  checkLeaseForWrite(state?.lease, nowMs(call), header(call, leaseHeader), target);
}
