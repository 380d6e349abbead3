// Append Block (https://learn.microsoft.com/rest/api/storageservices/append-block).
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import {
  findBlob,
  header,
  keyOf,
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
import { checksumReplyHeaders, receiveContent } from './content.js';
import { appendBlockBytesMax, appendBlocksMax } from '../limits.js';
import { decodeBlobState } from '../state/blob.js';
import { parseConditions, type Conditions } from '../wire/conditions.js';

interface AppendConditions {
  readonly conditions: Conditions;
  /** x-ms-blob-condition-appendpos: the blob's size must be this. */
  readonly appendPosition: number | undefined;
  /** x-ms-blob-condition-maxsize: the blob's size after the append must not exceed this. */
  readonly maxSizeBytes: number | undefined;
}

function numberHeader(call: BlobCall, name: string): number | undefined {
  const text = header(call, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,16}$/.test(text)) throw invalidHeaderValue(name, text);
  return Number(text);
}

/** Everything that must hold of the blob for `sizeBytes` more to be appended. */
function checkAppend(call: BlobCall, checks: AppendConditions, current: Found | undefined, sizeBytes: number): Found {
  if (current === undefined) throw new StorageError('BlobNotFound');
  if (current.state.blobType !== 'AppendBlob') throw new StorageError('InvalidBlobType');
  if (current.state.sealed === true) throw new StorageError('BlobIsSealed');
  checkWrite(call, checks.conditions, current);
  const size = current.record.sizeBytes;
  if (checks.maxSizeBytes !== undefined && size + sizeBytes > checks.maxSizeBytes) {
    throw new StorageError('MaxBlobSizeConditionNotMet');
  }
  if (checks.appendPosition !== undefined && size !== checks.appendPosition) {
    throw new StorageError('AppendPositionConditionNotMet');
  }
  if (current.state.committedBlockCount >= appendBlocksMax) throw new StorageError('BlockCountExceedsLimit');
  return current;
}

/**
 * 201 Created with x-ms-blob-append-offset (where the block landed) and
 * x-ms-blob-committed-block-count. The checks run on the declared length before the body is read,
 * and again on the blob as it is when the block is added (another append may have come first).
 */
export async function appendBlock(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const checks: AppendConditions = {
    conditions: parseConditions(call.headers),
    appendPosition: numberHeader(call, 'x-ms-blob-condition-appendpos'),
    maxSizeBytes: numberHeader(call, 'x-ms-blob-condition-maxsize'),
  };
  const declared = Number(header(call, 'content-length') ?? 0);
  if (declared === 0) throw invalidHeaderValue('Content-Length', '0'); // an appended block is never empty
  const first = await findBlob(call, keyOf(resource));
  if (first === undefined) return notFound(call, resource.container);
  // Chosen: a request without x-ms-version (a SAS's) is held to its sv, and without either to the older limit.
  const sizeBytesMax = appendBlockBytesMax(header(call, 'x-ms-version') ?? call.query.get('sv') ?? '');
  checkAppend(call, checks, first, Math.min(declared, sizeBytesMax));
  const received = await receiveContent(call, sizeBytesMax, true);
  let offset = 0;
  const record = await updateBlob(call, resource, (current) => {
    const found = checkAppend(call, checks, current, received.content.sizeBytes);
    offset = found.record.sizeBytes;
    const state = { ...found.state, committedBlockCount: found.state.committedBlockCount + 1 };
    const next = nextRecord(call, resource, state, offset + received.content.sizeBytes);
    return { record: next, content: { kind: 'append', block: { blockId: '', content: received.content } } };
  }, { found: first });
  return {
    status: 201,
    headers: {
      ...writtenHeaders(record),
      ...checksumReplyHeaders(received),
      'x-ms-blob-append-offset': String(offset),
      'x-ms-blob-committed-block-count': String(decodeBlobState(record.state).committedBlockCount),
    },
  };
}
