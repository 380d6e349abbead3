// Get Blob (streamed, whole or a range) and Get Blob Properties
// (https://learn.microsoft.com/rest/api/storageservices/get-blob, get-blob-properties).
import { createHash } from 'node:crypto';
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import {
  describeHeaders,
  header,
  keyOf,
  leaseIdOf,
  nowMs,
  requireBlob,
  requireBlobAndContent,
  snapshotOf,
  type BlobCall,
  type BlobOf,
  type Found,
  versioned,
} from './access.js';
import { requireVersion, versionIdOf } from './versions.js';
import { visibleEtag } from '../wire/etag.js';
import { httpDate } from '../wire/reply-headers.js';
import { rangeMd5BytesMax } from '../limits.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { Crc64 } from '../content/crc64.js';
import { evaluate, parseConditions } from '../wire/conditions.js';
import { checkLeaseForRead } from '../state/leases.js';
import { refuseOffline } from '../state/tier.js';
import { tierHeaders } from '../wire/tier.js';
import { contentRange, requestedRange, resolveRange, type ResolvedRange } from '../wire/ranges.js';

/**
 * Bytes of a blob Get Blob reads with its record, from stores that can (requireBlobAndContent):
 * small blobs are a round trip, not two.
 */
const readWithRecordBytesMax = 64 * 1024;

type Readable = Found & { readonly bytes?: Buffer | undefined };

/**
 * The version to answer, its conditions checked: 304 (as a reply) or 412 ConditionNotMet; with its
 * whole content if it has at most `contentBytesMax` bytes and the store reads them together.
 */
export async function readable(call: BlobCall, resource: BlobOf, contentBytesMax = 0): Promise<Readable | Reply> {
  const snapshot = snapshotOf(call);
  const key = keyOf(resource, snapshot);
  const conditions = parseConditions(call.headers); // a header that does not parse is refused before any read
  const versionId = versionIdOf(call);
  const found =
    versionId !== undefined
      ? await requireVersion(call, resource, versionId)
      : contentBytesMax > 0
        ? await requireBlobAndContent(call, key, contentBytesMax)
        : await requireBlob(call, key);
  const verdict = evaluate(conditions, versioned(found));
  if (verdict === 'failed') throw new StorageError('ConditionNotMet');
  if (verdict === 'notModified') {
    return {
      status: 304,
      headers: { ETag: visibleEtag(found.record.etag), 'Last-Modified': httpDate(found.record.lastModifiedMs) },
    };
  }
  if (found.record.snapshot === '') checkLeaseForRead(found.state.lease, nowMs(call), leaseIdOf(call));
  return found;
}

export function isReply(value: Readable | Reply): value is Reply {
  return 'status' in value;
}

/** HEAD: every header of the blob version and its whole length, no body. */
export async function getBlobProperties(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const found = await readable(call, resource);
  if (isReply(found)) return found;
  const headers = describeHeaders(found, nowMs(call));
  if (found.state.headers.contentMd5 !== undefined) headers['Content-MD5'] = found.state.headers.contentMd5;
  if (found.state.blobType === 'BlockBlob') Object.assign(headers, tierHeaders(found.state.tier, nowMs(call)));
  headers['Content-Length'] = String(found.record.sizeBytes);
  return { status: 200, headers: headers };
}

/**
 * 200 with the whole blob, or 206 with the range (Content-Range); a range starting at or past the
 * end is 416 InvalidRange with `Content-Range: bytes * /size`. The bytes are those of the version
 * whose headers are sent: if it is replaced between the read of its record and of its content,
 * the read starts over.
 */
export async function getBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const range = requestedRange(call.headers);
  const rangeChecksum = rangeChecksumOf(call, range !== undefined);
  return retryWhileRaced('The blob changed under every attempt to read it; retry the request.', async () => {
    const found = await readable(call, resource, readWithRecordBytesMax);
    if (isReply(found)) return found;
    refuseOffline(found.state.tier, nowMs(call)); // an archived blob's content is offline
    const size = found.record.sizeBytes;
    const resolved = range === undefined ? { start: 0, endExclusive: size } : resolveRange(range, size);
    if (resolved === 'unsatisfiable') {
      const error = new StorageError('InvalidRange');
      error.replyHeaders = { 'Content-Range': `bytes */${size}` };
      throw error;
    }
    if (rangeChecksum !== undefined && resolved.endExclusive - resolved.start > rangeMd5BytesMax) {
      throw new StorageError('OutOfRangeInput'); // a range checksum covers at most 4 MiB
    }
    const { record, bytes } = found;
    // Bytes read with the record are that version's: no second read, nothing that can change.
    const { start, endExclusive } = resolved;
    const stream =
      bytes === undefined
        ? await call.services.blobs.readContent(call.account, record, record.etag, start, endExclusive)
        : bytesOf(bytes.subarray(start, endExclusive));
    if (stream === 'changed') return raced;
    return answer(call, found, range === undefined ? undefined : resolved, stream, rangeChecksum);
  });
}

/** A range's checksum a read asks for: x-ms-range-get-content-md5 or -crc64 (get-blob). */
interface RangeChecksum {
  readonly header: string;
  /** The response header it is answered in, and how it is computed. */
  readonly answeredAs: 'Content-MD5' | 'x-ms-content-crc64';
}

/** The range checksum asked for, if any: both at once is 400, and either needs a range. */
function rangeChecksumOf(call: BlobCall, ranged: boolean): RangeChecksum | undefined {
  const asked = (name: string): boolean => header(call, name)?.toLowerCase() === 'true';
  const md5 = asked('x-ms-range-get-content-md5');
  const crc64 = asked('x-ms-range-get-content-crc64');
  if (md5 && crc64) throw new StorageError('BothCrc64AndMd5RangeHeaderPresent');
  if (!md5 && !crc64) return undefined;
  const checksum: RangeChecksum = md5
    ? { header: 'x-ms-range-get-content-md5', answeredAs: 'Content-MD5' }
    : { header: 'x-ms-range-get-content-crc64', answeredAs: 'x-ms-content-crc64' };
  if (!ranged) throw invalidHeaderValue(checksum.header, header(call, checksum.header)!);
  return checksum;
}

async function* bytesOf(bytes: Buffer): AsyncGenerator<Buffer> {
  if (bytes.length > 0) yield bytes;
}

async function answer(
  call: BlobCall,
  found: Found,
  range: ResolvedRange | undefined,
  stream: AsyncIterable<Buffer>,
  rangeChecksum: RangeChecksum | undefined,
): Promise<Reply> {
  const headers = describeHeaders(found, nowMs(call));
  const { contentMd5 } = found.state.headers;
  const length = range === undefined ? found.record.sizeBytes : range.endExclusive - range.start;
  headers['Content-Length'] = String(length);
  if (range !== undefined) {
    headers['Content-Range'] = contentRange(range, found.record.sizeBytes);
    if (contentMd5 !== undefined) headers['x-ms-blob-content-md5'] = contentMd5;
  } else if (contentMd5 !== undefined) {
    headers['Content-MD5'] = contentMd5;
  }
  const status = range === undefined ? 200 : 206;
  if (rangeChecksum === undefined) return { status, headers: headers, stream };
  // At most 4 MiB: held to hash it before the headers go out.
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  headers[rangeChecksum.answeredAs] =
    rangeChecksum.answeredAs === 'Content-MD5'
      ? createHash('md5').update(body).digest('base64')
      : new Crc64().update(body).digest().toString('base64');
  delete headers['Content-Length'];
  return { status, headers: headers, body };
}
