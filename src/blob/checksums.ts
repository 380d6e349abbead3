// Content checksums: MD5 (Content-MD5, x-ms-blob-content-md5) and Azure Storage's CRC64
// (x-ms-content-crc64, crc64.ts), computed while content streams through, never over a held copy
// (https://learn.microsoft.com/rest/api/storageservices/put-blob, put-block).
import { TableError } from '../errors.js';
import { digester, type Digester } from './digests.js';

/** A header's base64 digest of the given byte length; anything else is 400 `code`. */
export function parseDigestHeader(
  value: string | undefined,
  bytes: number,
  code: 'InvalidMd5' | 'InvalidHeaderValue',
): Buffer | undefined {
  if (value === undefined || value === '') return undefined;
  const decoded = Buffer.from(value, 'base64');
  if (decoded.length !== bytes || decoded.toString('base64') !== value) throw new TableError(code);
  return decoded;
}

/**
 * Bodies declared at least this long are hashed on the digest thread (digests.ts): below it, the
 * round trips to the thread cost more than the hashing they move.
 */
export const offThreadBytesMin = 256 * 1024;
/** The pieces a body hashed off this thread is gathered into: shared memory, each written once. */
const sharedPieceBytes = 256 * 1024;
const piecesPerSlab = 4;

export interface ChecksumOptions {
  /** Content-MD5 as sent (base64), verified at the end. */
  readonly md5?: Buffer | undefined;
  /** x-ms-content-crc64 as sent, verified at the end. */
  readonly crc64?: Buffer | undefined;
  /** Computes MD5 even when none was sent (Put Blob stores it). */
  readonly computeMd5?: boolean;
  /** More bytes than this: 413 RequestBodyTooLarge, reading stops. */
  readonly sizeBytesMax: number;
  /** The Content-Length the request declared, when it did. */
  readonly sizeBytesDeclared?: number | undefined;
}

/** What `checkedContent` saw once its source ended. */
export interface ContentSeen {
  sizeBytes: number;
  md5: Buffer | undefined;
}

/**
 * The source passed through, counting and hashing as it goes: past the size limit it throws
 * 413 RequestBodyTooLarge, and at its end a checksum that differs throws 400 Md5Mismatch or
 * Crc64Mismatch, so the store discards what it wrote (BlobStore.writeContent). A large body comes
 * out in pieces of shared memory that are not reused (see offThreadBytesMin); a small one as it came.
 */
export async function* checkedContent(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  options: ChecksumOptions,
  seen: ContentSeen,
): AsyncGenerator<Buffer, void, undefined> {
  const wanted = { md5: options.md5 !== undefined || options.computeMd5 === true, crc64: options.crc64 !== undefined };
  const offThread = (wanted.md5 || wanted.crc64) && (options.sizeBytesDeclared ?? 0) >= offThreadBytesMin;
  const digests: Digester = digester(wanted, offThread);
  let finished = false;
  try {
    for await (const chunk of offThread ? sharedPieces(source, sharedPieceBytes) : source) {
      seen.sizeBytes += chunk.length;
      if (seen.sizeBytes > options.sizeBytesMax) throw new TableError('RequestBodyTooLarge');
      await digests.update(chunk);
      yield chunk;
    }
    finished = true;
    const { md5, crc64 } = await digests.finish();
    seen.md5 = md5;
    if (options.md5 !== undefined && !options.md5.equals(md5!)) throw new TableError('Md5Mismatch');
    if (options.crc64 !== undefined && !options.crc64.equals(crc64!)) throw new TableError('Crc64Mismatch');
  } finally {
    if (!finished) digests.abandon();
  }
}

/**
 * The source's bytes in fresh SharedArrayBuffer pieces of `pieceBytes` (the last may be shorter):
 * one copy, which the digest thread and the store then share without another. Pieces are cut
 * from slabs of `piecesPerSlab`, as allocating shared memory costs far more per call than per byte.
 */
async function* sharedPieces(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  pieceBytes: number,
): AsyncGenerator<Buffer, void, undefined> {
  let slab = Buffer.from(new SharedArrayBuffer(pieceBytes * piecesPerSlab));
  let pieceStart = 0;
  let filled = 0;
  for await (const chunk of source) {
    let taken = 0;
    while (taken < chunk.length) {
      const copied = chunk.copy(
        slab,
        pieceStart + filled,
        taken,
        taken + Math.min(chunk.length - taken, pieceBytes - filled),
      );
      taken += copied;
      filled += copied;
      if (filled < pieceBytes) continue;
      yield slab.subarray(pieceStart, pieceStart + pieceBytes);
      filled = 0;
      pieceStart += pieceBytes;
      if (pieceStart === slab.length) {
        slab = Buffer.from(new SharedArrayBuffer(pieceBytes * piecesPerSlab));
        pieceStart = 0;
      }
    }
  }
  if (filled > 0) yield slab.subarray(pieceStart, pieceStart + filled);
}
