// Content checksums: MD5 (Content-MD5, x-ms-blob-content-md5) and Azure Storage's CRC64
// (x-ms-content-crc64, content/crc64.ts), computed while content streams through, never over a held copy
// (https://learn.microsoft.com/rest/api/storageservices/put-blob, put-block).
import { StorageError } from '../../errors.js';
import { digester, type Digester } from './digests.js';

/**
 * A header's base64 digest of the given byte length (`'any'`: a stored property, never checked
 * against content); anything else is 400 `code`.
 */
export function parseDigestHeader(
  value: string | undefined,
  bytes: number | 'any',
  code: 'InvalidMd5' | 'InvalidHeaderValue',
): Buffer | undefined {
  if (value === undefined || value === '') return undefined;
  const decoded = Buffer.from(value, 'base64');
  if (decoded.toString('base64') !== value || (bytes !== 'any' && decoded.length !== bytes)) {
    throw new StorageError(code);
  }
  return decoded;
}

/**
 * Bodies declared at least this long are hashed on the digest thread (content/digests.ts): below it, the
 * round trips to the thread cost more than the hashing they move.
 */
export const offThreadBytesMin = 256 * 1024;
/** The pieces a body hashed off this thread is gathered into, each written once. */
const pieceBytes = 256 * 1024;
/** Pieces of one body at the digest thread at once: bounds the memory a body holds there. */
const piecesHashingMax = 4;

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
  /** Computed only when one was sent (ChecksumOptions.crc64). */
  crc64?: Buffer | undefined;
}

/**
 * The source passed through, counting and hashing as it goes: past the size limit it throws
 * 413 RequestBodyTooLarge, and at its end a checksum that differs throws 400 Md5Mismatch or
 * Crc64Mismatch, so the store discards what it wrote (BlobStore.writeContent). A large body comes
 * out in fresh pieces, each once hashed (see offThreadBytesMin); a small one as it came.
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
  /** Pieces at the digest thread, oldest first; each passed on once hashed. */
  const hashing: PieceHashing[] = [];
  try {
    for await (const chunk of offThread ? ownedPieces(source, pieceBytes) : source) {
      seen.sizeBytes += chunk.length;
      if (seen.sizeBytes > options.sizeBytesMax) throw new StorageError('RequestBodyTooLarge');
      const hashed = digests.update(chunk);
      if (!(hashed instanceof Promise)) {
        yield hashed;
        continue;
      }
      hashing.push(pieceHashing(hashed));
      if (hashing.length >= piecesHashingMax) yield await hashing.shift()!.piece;
      // Pieces already back are passed on now, so the store writes them while the rest of the body
      // arrives (a body of up to piecesHashingMax pieces would otherwise reach it only at its end).
      while (hashing[0]?.hashed === true) yield await hashing.shift()!.piece;
    }
    while (hashing.length > 0) yield await hashing.shift()!.piece;
    finished = true;
    const { md5, crc64 } = await digests.finish();
    seen.md5 = md5;
    seen.crc64 = crc64;
    if (options.md5 !== undefined && !options.md5.equals(md5!)) throw new StorageError('Md5Mismatch');
    if (options.crc64 !== undefined && !options.crc64.equals(crc64!)) throw new StorageError('Crc64Mismatch');
  } finally {
    if (!finished) digests.abandon();
  }
}

/** A piece at the digest thread: `hashed` once it is back. */
interface PieceHashing {
  readonly piece: Promise<Buffer>;
  hashed: boolean;
}

function pieceHashing(piece: Promise<Buffer>): PieceHashing {
  const entry: PieceHashing = { piece, hashed: false };
  // Also handles a failure now; it is rethrown when the piece is awaited in turn (not unhandled).
  piece.then(
    () => (entry.hashed = true),
    () => undefined,
  );
  return entry;
}

/**
 * The source's bytes in fresh pieces of `pieceBytes` (the last may be shorter), each owning its
 * whole ArrayBuffer so it can be transferred to the digest thread and back: the one copy they cost.
 */
async function* ownedPieces(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  pieceBytes: number,
): AsyncGenerator<Buffer, void, undefined> {
  let piece = Buffer.allocUnsafeSlow(pieceBytes);
  let filled = 0;
  for await (const chunk of source) {
    let taken = 0;
    while (taken < chunk.length) {
      // copy stops at the piece's end; the rest of the chunk goes to the next piece.
      const copied = chunk.copy(piece, filled, taken);
      taken += copied;
      filled += copied;
      if (filled < pieceBytes) continue;
      yield piece;
      piece = Buffer.allocUnsafeSlow(pieceBytes);
      filled = 0;
    }
  }
  if (filled > 0) yield piece.subarray(0, filled);
}
