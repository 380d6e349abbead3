// Page blobs: Put Blob's page blob (newPageBlob), Put Page, Get Page Ranges, and Set Blob
// Properties' resize and sequence number (https://learn.microsoft.com/rest/api/storageservices/
// put-blob, put-page, get-page-ranges, set-blob-properties). The pages are the store's page table
// (storage/page-store.ts): never-written bytes are zeros, and storage follows what was written.
import { invalidHeaderValue, invalidQueryParameter, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import type { BlobKey } from '../../storage/blob-store.js';
import type { PageChange, PageExtent } from '../../storage/page-store.js';
import {
  findBlob,
  header,
  keyOf,
  nextRecord,
  notFound,
  refuseSnapshot,
  snapshotOf,
  updateBlob,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  type Found,
} from './access.js';
import { checkWrite } from './checks.js';
import { checksumReplyHeaders, contentHeadersOf, receiveContent, type Received } from './content.js';
import { copyRange, sourceBlob, sourceRange } from './from-url.js';
import { pageBlobBytesMax, pageBytes, pageWriteBytesMax } from '../limits.js';
import { decodeBlobState, type BlobState } from '../state/blob.js';
import { diffRanges, joinedRanges, type ListedRange } from '../state/page-ranges.js';
import { parseConditions, type Conditions } from '../wire/conditions.js';
import { isSnapshotStamp, visibleEtag } from '../wire/etag.js';
import { pageListXml } from '../wire/page-list-xml.js';
import { requestedRange } from '../wire/ranges.js';
import { httpDate } from '../wire/reply-headers.js';
import { isReply, readable } from './get.js';

/**
 * Sequence numbers Cerulean keeps: 0 to 2^53 - 1 (chosen: the service allows up to 2^63 - 1;
 * larger values are 400 InvalidHeaderValue here).
 */
const sequenceNumberMax = Number.MAX_SAFE_INTEGER;

function sequenceNumberHeader(call: BlobCall, name: string): number | undefined {
  const text = header(call, name);
  if (text === undefined) return undefined;
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value <= sequenceNumberMax)) throw invalidHeaderValue(name, text);
  return value;
}

/** A page blob size header: a multiple of 512 up to 8 TiB (put-blob, set-blob-properties). */
function pageBlobSizeHeader(call: BlobCall, name: string): number | undefined {
  const text = header(call, name);
  if (text === undefined) return undefined;
  const size = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!(size <= pageBlobBytesMax) || size % pageBytes !== 0) throw invalidHeaderValue(name, text);
  return size;
}

/** Put Blob of a page blob: its size (x-ms-blob-content-length, required) and sequence number (default 0). */
export function newPageBlob(call: BlobCall): { sizeBytes: number; sequenceNumber: number } {
  const sizeBytes = pageBlobSizeHeader(call, 'x-ms-blob-content-length');
  if (sizeBytes === undefined) {
    throw new StorageError('MissingRequiredHeader', 'A page blob needs x-ms-blob-content-length.');
  }
  return { sizeBytes, sequenceNumber: sequenceNumberHeader(call, 'x-ms-blob-sequence-number') ?? 0 };
}

/** Put Page's x-ms-if-sequence-number-le, -lt and -eq. */
interface SequenceConditions {
  readonly le: number | undefined;
  readonly lt: number | undefined;
  readonly eq: number | undefined;
}

function sequenceConditionsOf(call: BlobCall): SequenceConditions {
  return {
    le: sequenceNumberHeader(call, 'x-ms-if-sequence-number-le'),
    lt: sequenceNumberHeader(call, 'x-ms-if-sequence-number-lt'),
    eq: sequenceNumberHeader(call, 'x-ms-if-sequence-number-eq'),
  };
}

function checkSequence(conditions: SequenceConditions, state: BlobState): void {
  const n = state.sequenceNumber ?? 0;
  const { le, lt, eq } = conditions;
  if ((le !== undefined && n > le) || (lt !== undefined && n >= lt) || (eq !== undefined && n !== eq)) {
    throw new StorageError('SequenceNumberConditionNotMet');
  }
}

/**
 * Put Page's range: Range or x-ms-range, both ends given, on 512-byte page boundaries; else 416
 * InvalidPageRange (unverified: the service's code for a misaligned range).
 */
function pageRangeOf(call: BlobCall): { start: number; endExclusive: number } {
  const range = requestedRange(call.headers);
  if (range === undefined || range.end === undefined) {
    throw new StorageError('InvalidPageRange', 'Put Page needs Range or x-ms-range with both ends.');
  }
  const endExclusive = range.end + 1;
  if (range.start % pageBytes !== 0 || endExclusive % pageBytes !== 0) {
    throw new StorageError('InvalidPageRange', 'A page range starts and ends on 512-byte page boundaries.');
  }
  return { start: range.start, endExclusive };
}

/** Everything that must hold of the blob for a Put Page of `range`. */
function checkPut(
  call: BlobCall,
  current: Found | undefined,
  conditions: Conditions,
  sequence: SequenceConditions,
  endExclusive: number,
): Found {
  if (current === undefined) throw new StorageError('BlobNotFound');
  if (current.state.blobType !== 'PageBlob') throw new StorageError('InvalidBlobType');
  checkWrite(call, conditions, current);
  checkSequence(sequence, current.state);
  // Chosen (unverified): pages past the blob's end are 416 InvalidPageRange.
  if (endExclusive > current.record.sizeBytes) {
    throw new StorageError('InvalidPageRange', 'The page range is past the end of the blob.');
  }
  return current;
}

/**
 * 201 Created with ETag, Last-Modified and x-ms-blob-sequence-number. `update` writes the body (of
 * exactly the range's length, at most 4 MiB; Content-MD5 or x-ms-content-crc64 verified);
 * `clear` takes no body and makes the range zeros. Checks run before the body is read and again
 * when the pages are written.
 */
export async function putPage(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const action = header(call, 'x-ms-page-write')?.toLowerCase();
  if (action === undefined) throw new StorageError('MissingRequiredHeader', 'Put Page needs x-ms-page-write.');
  if (action !== 'update' && action !== 'clear') throw invalidHeaderValue('x-ms-page-write', action);
  const range = pageRangeOf(call);
  const length = header(call, 'content-length') ?? '0';
  const lengthBytes = range.endExclusive - range.start;
  if (action === 'update' && lengthBytes > pageWriteBytesMax) throw new StorageError('RequestBodyTooLarge');
  // update: the body is the range's pages; clear: no body at all.
  if (Number(length) !== (action === 'update' ? lengthBytes : 0)) throw invalidHeaderValue('Content-Length', length);
  const receive = action === 'update' ? () => receiveContent(call, pageWriteBytesMax, true) : undefined;
  return writePages(call, resource, range, receive);
}

/**
 * Put Page From URL (put-page-from-url): the pages of x-ms-range are the bytes of x-ms-source-range
 * of the source (x-ms-copy-source, a blob of any account of this server, read as Get Blob reads
 * it: zeros where a page blob has no pages), both of the same length, at most 4 MiB; only
 * x-ms-page-write: update. Otherwise as Put Page, with the source's conditions and
 * x-ms-source-content-md5 or -crc64 as Put Block From URL has them.
 */
export async function putPageFromUrl(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const action = header(call, 'x-ms-page-write')?.toLowerCase();
  if (action === undefined) throw new StorageError('MissingRequiredHeader', 'Put Page needs x-ms-page-write.');
  if (action !== 'update') throw invalidHeaderValue('x-ms-page-write', action);
  const range = pageRangeOf(call);
  const lengthBytes = range.endExclusive - range.start;
  if (lengthBytes > pageWriteBytesMax) throw new StorageError('RequestBodyTooLarge');
  if (header(call, 'x-ms-source-range') === undefined) {
    throw new StorageError('MissingRequiredHeader', 'Put Page From URL needs x-ms-source-range.');
  }
  const source = await sourceBlob(call);
  const from = sourceRange(call, source.found.record.sizeBytes);
  // Chosen (unverified): a source range of another length than the pages (a range cut short by
  // the source's end, too) is 400 InvalidHeaderValue on x-ms-source-range.
  if (from.endExclusive - from.start !== lengthBytes) {
    throw invalidHeaderValue('x-ms-source-range', header(call, 'x-ms-source-range')!);
  }
  return writePages(call, resource, range, () => copyRange(call, source, from, pageWriteBytesMax));
}

/**
 * The pages of `range` written with what `receive` brings (undefined: cleared), the blob checked
 * before it runs and again when the pages are written.
 */
async function writePages(
  call: BlobCall,
  resource: BlobOf,
  range: { start: number; endExclusive: number },
  receive: (() => Promise<Received>) | undefined,
): Promise<Reply> {
  const { start, endExclusive } = range;
  const conditions = parseConditions(call.headers);
  const sequence = sequenceConditionsOf(call);
  const first = await findBlob(call, keyOf(resource));
  if (first === undefined) return notFound(call, resource.container);
  checkPut(call, first, conditions, sequence, endExclusive);
  const received = receive === undefined ? undefined : await receive();
  const change: PageChange =
    received === undefined
      ? { kind: 'clear', range: { startByte: start, endByteExclusive: endExclusive } }
      : { kind: 'write', startByte: start, content: received.content };
  const record = await updateBlob(
    call,
    resource,
    (current) => {
      const found = checkPut(call, current, conditions, sequence, endExclusive);
      return {
        record: nextRecord(call, resource, found.state, found.record.sizeBytes),
        content: { kind: 'pages', change },
      };
    },
    { found: first },
  );
  return {
    status: 201,
    headers: {
      ...writtenHeaders(record),
      ...(received && checksumReplyHeaders(received)),
      'x-ms-blob-sequence-number': String(decodeBlobState(record.state).sequenceNumber ?? 0),
    },
  };
}

/** Extents a Get Page Ranges reads at once: each read also looks the version up again. */
const extentsPerRead = 1024;

/**
 * A version's extents overlapping [from, to), a batch at a time; a version that changes
 * meanwhile ends the listing with an error (the client sees a short body).
 */
async function* extentsOf(
  call: BlobCall,
  key: BlobKey,
  etag: string,
  from: number,
  to: number,
): AsyncGenerator<PageExtent[]> {
  let at = from;
  while (at < to) {
    const extents = await call.services.blobs.pageExtents(call.account, key, etag, at, to, extentsPerRead);
    if (extents === 'changed') throw new Error(`page blob ${key.name} changed while its ranges were listed`);
    if (extents.length > 0) yield extents;
    if (extents.length < extentsPerRead) return;
    at = extents.at(-1)!.endByteExclusive;
  }
}

/** At most `limit` of `ranges`; `rest` says, once they are done, where the next page would start. */
async function* firstRanges(
  ranges: AsyncIterable<ListedRange[]>,
  limit: number,
  rest: { next: number | undefined },
): AsyncGenerator<ListedRange[]> {
  let count = 0;
  for await (const batch of ranges) {
    const room = limit - count;
    if (batch.length > room) {
      if (room > 0) yield batch.slice(0, room);
      rest.next = batch[room]!.startByte;
      return;
    }
    count += batch.length;
    yield batch;
  }
}

function maxResultsOf(call: BlobCall): number | undefined {
  const text = call.query.get('maxresults');
  if (text === null) return undefined;
  const value = /^\d{1,9}$/.test(text) ? Number(text) : 0;
  if (value < 1) throw invalidQueryParameter('maxresults', text, 'maxresults is a positive number.');
  return value;
}

/** A NextMarker of ours: the byte the next page starts at. */
function markerOf(call: BlobCall): number {
  const text = call.query.get('marker');
  if (text === null || text === '') return 0;
  if (!/^\d{1,16}$/.test(text)) throw invalidQueryParameter('marker', text, 'The marker is not one this service gave.');
  return Number(text);
}

/**
 * 200 with the PageList of the version (snapshot=) or of its diff since `prevsnapshot`, within
 * the Range if one is given (ranges clipped to it: chosen), x-ms-blob-content-length its size.
 * With maxresults, at most that many ranges and a NextMarker (the byte to go on from) if more
 * remain. The list streams as it is read, chunked: bounded memory for any number of ranges.
 */
export async function getPageRanges(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const snapshot = snapshotOf(call);
  const previous = call.query.get('prevsnapshot');
  if (previous !== null && !isSnapshotStamp(previous)) {
    throw invalidQueryParameter('prevsnapshot', previous, 'The value is not a snapshot timestamp.');
  }
  if (header(call, 'x-ms-previous-snapshot-url') !== undefined) {
    throw new StorageError(
      'UnsupportedHeader',
      'Cerulean does not serve diffs of managed disks (x-ms-previous-snapshot-url).',
    );
  }
  const limit = maxResultsOf(call);
  const marker = markerOf(call);
  const key = keyOf(resource, snapshot);
  // The version with its conditions and lease checked, as Get Blob reads it (or its 304).
  const found = await readable(call, resource);
  if (isReply(found)) return found;
  if (found.state.blobType !== 'PageBlob') throw new StorageError('InvalidBlobType');
  const size = found.record.sizeBytes;
  const range = requestedRange(call.headers);
  const from = Math.max(marker, range?.start ?? 0);
  const to = Math.min(size, range?.end === undefined ? size : range.end + 1);
  const now = extentsOf(call, key, found.record.etag, from, to);
  let ranges: AsyncIterable<ListedRange[]>;
  if (previous === null) {
    ranges = joinedRanges(now, from, to);
  } else {
    const before = await findBlob(call, keyOf(resource, previous));
    if (before === undefined || (snapshot !== '' && previous >= snapshot))
      throw new StorageError('PreviousSnapshotNotFound');
    ranges = diffRanges(now, extentsOf(call, before.record, before.record.etag, from, to), from, to);
  }
  const rest: { next: number | undefined } = { next: undefined };
  const listed = limit === undefined ? ranges : firstRanges(ranges, limit, rest);
  const paged = limit !== undefined || call.query.has('marker');
  const nextMarker = () => (rest.next !== undefined ? String(rest.next) : paged ? '' : undefined);
  return {
    status: 200,
    headers: {
      'Content-Type': 'application/xml',
      'Transfer-Encoding': 'chunked',
      ETag: visibleEtag(found.record.etag),
      'Last-Modified': httpDate(found.record.lastModifiedMs),
      'x-ms-blob-content-length': String(size),
    },
    stream: pageListXml(listed, nextMarker),
  };
}

/** The content headers Set Blob Properties replaces (all together, when any is sent). */
const contentHeaderNames = [
  'x-ms-blob-cache-control',
  'x-ms-blob-content-type',
  'x-ms-blob-content-md5',
  'x-ms-blob-content-encoding',
  'x-ms-blob-content-language',
  'x-ms-blob-content-disposition',
];

/** Whether Set Blob Properties resizes a page blob or changes its sequence number. */
export function changesPageBlob(call: BlobCall): boolean {
  return (
    header(call, 'x-ms-blob-content-length') !== undefined || header(call, 'x-ms-sequence-number-action') !== undefined
  );
}

/** The sequence number after x-ms-sequence-number-action (set-blob-properties). */
function nextSequenceNumber(call: BlobCall, current: number): number {
  const action = header(call, 'x-ms-sequence-number-action');
  const given = sequenceNumberHeader(call, 'x-ms-blob-sequence-number');
  if (action === undefined) return current;
  if (action === 'increment') {
    if (given !== undefined) throw invalidHeaderValue('x-ms-blob-sequence-number', String(given));
    if (current >= sequenceNumberMax) throw new StorageError('SequenceNumberIncrementTooLarge');
    return current + 1;
  }
  if (action !== 'max' && action !== 'update') throw invalidHeaderValue('x-ms-sequence-number-action', action);
  if (given === undefined) {
    throw new StorageError(
      'MissingRequiredHeader',
      `x-ms-sequence-number-action: ${action} needs x-ms-blob-sequence-number.`,
    );
  }
  return action === 'max' ? Math.max(current, given) : given;
}

/**
 * Set Blob Properties of a page blob with x-ms-blob-content-length (resize: pages past a smaller
 * size are dropped) or x-ms-sequence-number-action: those change, and the content headers only if
 * one of them is sent (then all of them are replaced, as for any blob). 200 with ETag,
 * Last-Modified and x-ms-blob-sequence-number. On another blob type: 409 InvalidBlobType.
 */
export async function setPageBlobProperties(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const conditions = parseConditions(call.headers);
  const newSize = pageBlobSizeHeader(call, 'x-ms-blob-content-length');
  const replaceHeaders = contentHeaderNames.some((name) => header(call, name) !== undefined);
  const given = contentHeadersOf(call, false, undefined);
  const record = await updateBlob(call, resource, (current) => {
    if (current === undefined) throw new StorageError('BlobNotFound');
    if (current.state.blobType !== 'PageBlob') throw new StorageError('InvalidBlobType');
    checkWrite(call, conditions, current);
    const state: BlobState = {
      ...current.state,
      headers: replaceHeaders ? { ...given, contentType: given.contentType ?? '' } : current.state.headers,
      sequenceNumber: nextSequenceNumber(call, current.state.sequenceNumber ?? 0),
    };
    const sizeBytes = newSize ?? current.record.sizeBytes;
    const next = nextRecord(call, resource, state, sizeBytes);
    return {
      record: next,
      content: newSize === undefined ? { kind: 'keep' } : { kind: 'pages', change: { kind: 'resize' } },
    };
  }).catch(async (error: unknown) => {
    if (error instanceof StorageError && error.code === 'BlobNotFound') return notFound(call, resource.container);
    throw error;
  });
  return {
    status: 200,
    headers: {
      ...writtenHeaders(record),
      'x-ms-blob-sequence-number': String(decodeBlobState(record.state).sequenceNumber ?? 0),
    },
  };
}
