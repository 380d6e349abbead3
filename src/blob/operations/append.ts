// Append Block and Append Block From URL
// (https://learn.microsoft.com/rest/api/storageservices/append-block, append-block-from-url).
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
import { checksumReplyHeaders, receiveContent, type Received } from './content.js';
import { copySourceFailure } from './copy-source-access.js';
import { copyRange, sourceBlob, sourceRange } from './from-url.js';
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

function appendChecks(call: BlobCall): AppendConditions {
  return {
    conditions: parseConditions(call.headers),
    appendPosition: numberHeader(call, 'x-ms-blob-condition-appendpos'),
    maxSizeBytes: numberHeader(call, 'x-ms-blob-condition-maxsize'),
  };
}

/** One block's limit: the request's x-ms-version, else its SAS's sv, else the older limit (chosen). */
function blockBytesMaxOf(call: BlobCall): number {
  return appendBlockBytesMax(header(call, 'x-ms-version') ?? call.query.get('sv') ?? '');
}

/**
 * 201 Created with x-ms-blob-append-offset (where the block landed) and
 * x-ms-blob-committed-block-count. The checks run on the declared length before the body is read,
 * and again on the blob as it is when the block is added (another append may have come first).
 */
export async function appendBlock(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const checks = appendChecks(call);
  const declared = Number(header(call, 'content-length') ?? 0);
  if (declared === 0) throw invalidHeaderValue('Content-Length', '0'); // an appended block is never empty
  const sizeBytesMax = blockBytesMaxOf(call);
  return appendReceived(call, resource, checks, Math.min(declared, sizeBytesMax), () =>
    receiveContent(call, sizeBytesMax, true),
  );
}

/**
 * Append Block From URL (append-block-from-url): the block is the source's bytes in
 * x-ms-source-range (all of it when absent), under the limit of Append Block; otherwise as Append Block.
 */
export async function appendBlockFromUrl(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const checks = appendChecks(call);
  const sizeBytesMax = blockBytesMaxOf(call);
  const source = await sourceBlob(call);
  const range = sourceRange(call, source.found.record.sizeBytes);
  const sizeBytes = range.endExclusive - range.start;
  // An empty source has nothing to append: answered as a range past its end (chosen; unverified).
  if (sizeBytes === 0)
    throw copySourceFailure(416, 'InvalidRange', 'The copy source is empty: there is nothing to append.');
  if (sizeBytes > sizeBytesMax) throw new StorageError('RequestBodyTooLarge');
  return appendReceived(call, resource, checks, sizeBytes, () => copyRange(call, source, range, sizeBytesMax));
}

/** Checks the blob for `sizeBytes` more, receives the block, and appends it if the blob still allows. */
async function appendReceived(
  call: BlobCall,
  resource: BlobOf,
  checks: AppendConditions,
  sizeBytes: number,
  receive: () => Promise<Received>,
): Promise<Reply> {
  const first = await findBlob(call, keyOf(resource));
  if (first === undefined) return notFound(call, resource.container);
  checkAppend(call, checks, first, sizeBytes);
  const received = await receive();
  let offset = 0;
  const record = await updateBlob(
    call,
    resource,
    (current) => {
      const found = checkAppend(call, checks, current, received.content.sizeBytes);
      offset = found.record.sizeBytes;
      const state = { ...found.state, committedBlockCount: found.state.committedBlockCount + 1 };
      const next = nextRecord(call, resource, state, offset + received.content.sizeBytes);
      return { record: next, content: { kind: 'append', block: { blockId: '', content: received.content } } };
    },
    { found: first },
  );
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
