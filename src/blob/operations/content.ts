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
  const blobMd5 = parseDigestHeader(header(call, 'x-ms-blob-content-md5'), 16, 'InvalidMd5');
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
}

/**
 * Streams the request body into new content: a declared Content-Length over `sizeBytesMax` is 413
 * RequestBodyTooLarge before a byte is read, a body that grows past it stops there with the same;
 * Content-MD5 and x-ms-content-crc64 are verified at the end (400 Md5Mismatch, Crc64Mismatch),
 * and then nothing is kept. A body sent without Content-Length is 411 MissingContentLengthHeader.
 */
export async function receiveContent(call: BlobCall, sizeBytesMax: number, computeMd5: boolean): Promise<Received> {
  const declared = header(call, 'content-length');
  if (declared === undefined) {
    if (header(call, 'transfer-encoding') !== undefined) throw new StorageError('MissingContentLengthHeader');
  } else if (Number(declared) > sizeBytesMax) {
    throw new StorageError('RequestBodyTooLarge');
  }
  const md5 = parseDigestHeader(header(call, 'content-md5'), 16, 'InvalidMd5');
  const crc64 = parseDigestHeader(header(call, 'x-ms-content-crc64'), 8, 'InvalidHeaderValue');
  const seen: ContentSeen = { sizeBytes: 0, md5: undefined };
  const source = call.bodyStream ?? [call.body];
  const content = await call.services.blobs.writeContent(
    checkedContent(source, { md5, crc64, computeMd5, sizeBytesMax, sizeBytesDeclared: Number(declared ?? 0) }, seen),
  );
  return { content, md5: seen.md5 };
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
