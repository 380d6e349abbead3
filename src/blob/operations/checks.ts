// The checks every blob write makes against the version it is about to replace: conditional
// headers (conditions.ts) and the lease (state/leases.ts), plus the blob name's rules
// (https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata).
import { invalidHeaderValue, StorageError } from '../../errors.js';
import { header, leaseIdOf, nowMs, versioned, type BlobCall, type Found } from './access.js';
import { evaluate, type Conditions } from '../wire/conditions.js';
import { checkLeaseForWrite } from '../state/leases.js';

/** Blob names: 1 to 1024 characters (naming-and-referencing-containers--blobs--and-metadata). */
export const blobNameLengthMax = 1024;

export function checkBlobName(name: string): void {
  if (name.length === 0 || name.length > blobNameLengthMax) {
    throw new StorageError('InvalidResourceName', 'A blob name must be 1 to 1024 characters long.');
  }
}

/**
 * Conditions and lease of a write over `current` (undefined: no blob yet). A write that `creates`
 * a blob (Put Blob, Put Block List, Copy Blob) with If-None-Match: * on one that exists answers 409
 * BlobAlreadyExists; any other failed condition, and that one on any other write (Delete Blob, Set
 * Blob Properties, Append Block...), is 412 ConditionNotMet: nothing is created there to collide.
 */
export function checkWrite(call: BlobCall, conditions: Conditions, current: Found | undefined, creates = false): void {
  refuseOverwrite(call, current);
  const verdict = evaluate(conditions, current && versioned(current));
  const createOnly = conditions.ifNoneMatch?.includes('*') === true;
  if (creates && verdict === 'notModified' && current !== undefined && createOnly) {
    throw new StorageError('BlobAlreadyExists');
  }
  if (verdict !== 'ok') throw new StorageError('ConditionNotMet');
  const leaseId = leaseIdOf(call);
  if (current !== undefined) checkLeaseForWrite(current.state.lease, nowMs(call), leaseId, 'blob');
  else if (leaseId !== undefined && leaseId !== '') throw new StorageError('LeaseNotPresentWithBlobOperation');
}

/**
 * A request that only a SAS's Create letter authorized may not replace a blob (create-account-sas:
 * "may not overwrite existing blobs"): 403 AuthorizationPermissionMismatch. Callers check inside
 * updateBlob's compare-and-swap, so a blob that appears between this check and the write makes the
 * write fail (the store expects no blob), the attempt is retried and then refused here.
 */
export function refuseOverwrite(call: BlobCall, current: Found | undefined): void {
  if (call.createOnly && current !== undefined) {
    throw new StorageError('AuthorizationPermissionMismatch');
  }
}

/** The x-ms-blob-type of Put Blob: BlockBlob, AppendBlob or PageBlob. */
export function blobTypeOf(call: BlobCall): 'BlockBlob' | 'AppendBlob' | 'PageBlob' {
  const type = header(call, 'x-ms-blob-type');
  if (type === undefined) throw new StorageError('MissingRequiredHeader', 'The header x-ms-blob-type is required.');
  if (type === 'BlockBlob' || type === 'AppendBlob' || type === 'PageBlob') return type;
  throw invalidHeaderValue('x-ms-blob-type', type);
}
