// Blob content from a request: the content headers it sets, and its body streamed into the store
// under a size limit with its checksums verified on the way (put-blob, put-block, append-block).
import { StorageError } from '../../errors.js';
import type { ContentRef } from '../../storage/blob-store.js';
import { header, type BlobCall } from './access.js';
import type { ContentHeaders } from '../state/blob.js';
import { checkedContent, parseDigestHeader, type ContentSeen } from '../content/checksums.js';

/**
 * The x-ms-blob-content-* headers (and, for Put Blob, the plain Content-Type, Content-Encoding,
 * Content-Language and Cache-Control as fallbacks); `md5` is what the blob keeps as its Content-MD5.
 */
export function contentHeadersOf(call: BlobCall, plainFallback: boolean, md5: string | undefined): ContentHeaders {
  const pick = (name: string, plain: string): string | undefined =>
    header(call, `x-ms-blob-${name}`) ?? (plainFallback ? header(call, plain) : undefined);
  // A stored property of any length (set-blob-properties, put-block-list: it is not validated); the
  // official JS SDK's recorded Set Blob Properties test sets 4 bytes. Put Blob verifies it first.
  const blobMd5 = parseDigestHeader(header(call, 'x-ms-blob-content-md5'), 'any', 'InvalidMd5');
  return {
    contentType: pick('content-type', 'content-type'),
    contentEncoding: pick('content-encoding', 'content-encoding'),
    contentLanguage: pick('content-language', 'content-language'),
    contentDisposition: header(call, 'x-ms-blob-content-disposition'),
    cacheControl: pick('cache-control', 'cache-control'),
    contentMd5: blobMd5?.toString('base64') ?? md5,
  };
}

export interface Received {
  readonly content: ContentRef;
  /** The content's MD5 when it was sent or asked for. */
  readonly md5: Buffer | undefined;
  /** The content's CRC64 when one was sent (verified). */
  readonly crc64: Buffer | undefined;
}

/**
 * Streams the request body into new content: a declared Content-Length over `sizeBytesMax` is 413
 * RequestBodyTooLarge before a byte is read, a body that grows past it stops there with the same;
 * Content-MD5 and x-ms-content-crc64 are verified at the end (400 Md5Mismatch, Crc64Mismatch),
 * and then nothing is kept. A body sent without Content-Length is 411 MissingContentLengthHeader.
 * The CRC64 is computed only when one was sent: the service also answers it unasked in newer
 * versions, but at about half MD5's speed here it would cost every upload (chosen).
 * `blobMd5Verified` (Put Blob): x-ms-blob-content-md5, when sent, is the MD5 verified instead of
 * Content-MD5 (put-blob gives it precedence; the service verifies it even without Content-MD5).
 */
export async function receiveContent(
  call: BlobCall,
  sizeBytesMax: number,
  computeMd5: boolean,
  blobMd5Verified = false,
): Promise<Received> {
  const declared = header(call, 'content-length');
  if (declared === undefined) {
    if (header(call, 'transfer-encoding') !== undefined) throw new StorageError('MissingContentLengthHeader');
  } else if (Number(declared) > sizeBytesMax) {
    throw new StorageError('RequestBodyTooLarge');
  }
  const transactionalMd5 = parseDigestHeader(header(call, 'content-md5'), 16, 'InvalidMd5');
  const crc64 = parseDigestHeader(header(call, 'x-ms-content-crc64'), 8, 'InvalidHeaderValue');
  // One transactional checksum a request (put-blob, put-block, append-block: both is 400).
  if (transactionalMd5 !== undefined && crc64 !== undefined) throw new StorageError('BothCrc64AndMd5HeaderPresent');
  const blobMd5 = blobMd5Verified ? header(call, 'x-ms-blob-content-md5') : undefined;
  const md5 = parseDigestHeader(blobMd5, 16, 'InvalidMd5') ?? transactionalMd5;
  const seen: ContentSeen = { sizeBytes: 0, md5: undefined, crc64: undefined };
  const source = call.bodyStream ?? [call.body];
  const content = await call.services.blobs.writeContent(
    checkedContent(source, { md5, crc64, computeMd5, sizeBytesMax, sizeBytesDeclared: Number(declared ?? 0) }, seen),
  );
  return { content, md5: seen.md5, crc64: seen.crc64 };
}

/** The checksums a write answers for what it received: Content-MD5, and x-ms-content-crc64 when one was sent. */
export function checksumReplyHeaders(received: Received): Record<string, string> {
  const headers: Record<string, string> = {};
  if (received.md5 !== undefined) headers['Content-MD5'] = received.md5.toString('base64');
  if (received.crc64 !== undefined) headers['x-ms-content-crc64'] = received.crc64.toString('base64');
  return headers;
}

/** The request body read whole under `sizeBytesMax` (Put Block List's XML). */
export async function receiveSmallBody(call: BlobCall, sizeBytesMax: number): Promise<Buffer> {
  if (call.bodyStream === undefined) return call.body;
  if (Number(header(call, 'content-length') ?? 0) > sizeBytesMax) throw new StorageError('RequestBodyTooLarge');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of call.bodyStream) {
    size += chunk.length;
    if (size > sizeBytesMax) throw new StorageError('RequestBodyTooLarge');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
