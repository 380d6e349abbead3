// Append Blob Seal (https://learn.microsoft.com/rest/api/storageservices/append-blob-seal): an
// append blob made read-only. Appends to it are 409 BlobIsSealed (append.ts); its properties and
// metadata may still change, it may be overwritten, deleted, snapshotted (the snapshot is sealed
// too) and copied (the copy is sealed unless x-ms-seal-blob says otherwise: copy.ts).
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import {
  header,
  nextRecord,
  notFound,
  refuseSnapshot,
  updateBlob,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  type Found,
} from './access.js';
import { checkWrite } from './checks.js';
import { parseConditions, type Conditions } from '../wire/conditions.js';

/**
 * Whether a copy's destination is sealed: x-ms-seal-blob if sent, else as its source is (append-blob-seal, remarks).
 */
export function sealOnCopy(call: BlobCall, source: Found): boolean | undefined {
  const value = header(call, 'x-ms-seal-blob');
  if (value === undefined) return source.state.sealed;
  const lower = value.toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw invalidHeaderValue('x-ms-seal-blob', value);
  if (lower === 'true' && source.state.blobType !== 'AppendBlob') throw new StorageError('InvalidBlobType');
  return lower === 'true' ? true : undefined;
}

function checkSeal(call: BlobCall, conditions: Conditions, current: Found | undefined, position: number | undefined) {
  if (current === undefined) throw new StorageError('BlobNotFound');
  if (current.state.blobType !== 'AppendBlob') throw new StorageError('InvalidBlobType');
  checkWrite(call, conditions, current);
  if (position !== undefined && current.record.sizeBytes !== position) {
    throw new StorageError('AppendPositionConditionNotMet');
  }
}

/**
 * 200 with x-ms-blob-sealed: true, ETag and Last-Modified. Sealing a sealed blob is 200 and changes
 * nothing. The docs say the seal keeps ETag and Last-Modified, yet the service's reply recorded by
 * the Java SDK's tests (AppendBlobAPITestSealDefaults) carries a new ETag; Cerulean does as the
 * service did: the seal is a write, and If-Match on the old ETag fails after it.
 */
export async function sealBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const conditions = parseConditions(call.headers);
  const positionText = header(call, 'x-ms-blob-condition-appendpos');
  if (positionText !== undefined && !/^\d{1,16}$/.test(positionText)) {
    throw invalidHeaderValue('x-ms-blob-condition-appendpos', positionText);
  }
  const position = positionText === undefined ? undefined : Number(positionText);
  const record = await updateBlob(call, resource, (current) => {
    checkSeal(call, conditions, current, position);
    const found = current!;
    if (found.state.sealed === true) throw new AlreadySealed(found);
    const next = nextRecord(call, resource, { ...found.state, sealed: true }, found.record.sizeBytes);
    return { record: next, content: { kind: 'keep' } };
  }).catch(async (error: unknown) => {
    if (error instanceof AlreadySealed) return error.found.record;
    if (error instanceof StorageError && error.code === 'BlobNotFound') return notFound(call, resource.container);
    throw error;
  });
  const { ETag, 'Last-Modified': lastModified } = writtenHeaders(record);
  return { status: 200, headers: { ETag: ETag!, 'Last-Modified': lastModified!, 'x-ms-blob-sealed': 'true' } };
}

/** Ends updateBlob's attempt without a write: the blob is sealed already. */
class AlreadySealed extends Error {
  constructor(readonly found: Found) {
    super('sealed already');
  }
}
