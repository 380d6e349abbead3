// Content checksums: MD5 (Content-MD5, x-ms-blob-content-md5) and Azure Storage's CRC64
// (x-ms-content-crc64), computed while content streams through, never over a held copy
// (https://learn.microsoft.com/rest/api/storageservices/put-blob, put-block).
import { createHash, type Hash } from 'node:crypto';
import { TableError } from '../errors.js';

/**
 * Azure Storage's CRC64: the reflected polynomial 0x9A6C9329AC4BC9B5, all ones in and out
 * (CRC-64/NVME); its wire form is the 8 bytes little-endian, base64.
 */
const crc64Polynomial = 0x9a6c9329ac4bc9b5n;
const mask64 = (1n << 64n) - 1n;
/** The byte table, split into 32-bit halves so the loop runs on plain numbers (BigInt is ~100× slower). */
const tableLow = new Uint32Array(256);
const tableHigh = new Uint32Array(256);
for (let index = 0; index < 256; index++) {
  let crc = BigInt(index);
  for (let bit = 0; bit < 8; bit++) crc = crc & 1n ? (crc >> 1n) ^ crc64Polynomial : crc >> 1n;
  tableLow[index] = Number(crc & 0xffffffffn);
  tableHigh[index] = Number(crc >> 32n);
}

/** The running CRC64 of bytes fed in order. */
export class Crc64 {
  private low = 0xffffffff;
  private high = 0xffffffff;

  update(bytes: Uint8Array): this {
    let { low, high } = this;
    for (let at = 0; at < bytes.length; at++) {
      const index = (low ^ bytes[at]!) & 0xff;
      low = (((low >>> 8) | (high << 24)) ^ tableLow[index]!) >>> 0;
      high = ((high >>> 8) ^ tableHigh[index]!) >>> 0;
    }
    this.low = low;
    this.high = high;
    return this;
  }

  /** The 8 bytes, little-endian. */
  digest(): Buffer {
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(((BigInt(this.high) << 32n) | BigInt(this.low)) ^ mask64);
    return bytes;
  }
}

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

export interface ChecksumOptions {
  /** Content-MD5 as sent (base64), verified at the end. */
  readonly md5?: Buffer | undefined;
  /** x-ms-content-crc64 as sent, verified at the end. */
  readonly crc64?: Buffer | undefined;
  /** Computes MD5 even when none was sent (Put Blob stores it). */
  readonly computeMd5?: boolean;
  /** More bytes than this: 413 RequestBodyTooLarge, reading stops. */
  readonly sizeBytesMax: number;
}

/** What `checkedContent` saw once its source ended. */
export interface ContentSeen {
  sizeBytes: number;
  md5: Buffer | undefined;
}

/**
 * The source passed through, counting and hashing as it goes: past the size limit it throws
 * 413 RequestBodyTooLarge, and at its end a checksum that differs throws 400 Md5Mismatch or
 * Crc64Mismatch, so the store discards what it wrote (BlobStore.writeContent).
 */
export async function* checkedContent(
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
  options: ChecksumOptions,
  seen: ContentSeen,
): AsyncGenerator<Buffer, void, undefined> {
  const md5: Hash | undefined = options.md5 !== undefined || options.computeMd5 ? createHash('md5') : undefined;
  const crc64 = options.crc64 === undefined ? undefined : new Crc64();
  for await (const chunk of source) {
    seen.sizeBytes += chunk.length;
    if (seen.sizeBytes > options.sizeBytesMax) throw new TableError('RequestBodyTooLarge');
    md5?.update(chunk);
    crc64?.update(chunk);
    yield chunk;
  }
  seen.md5 = md5?.digest();
  if (options.md5 !== undefined && !options.md5.equals(seen.md5!)) throw new TableError('Md5Mismatch');
  if (options.crc64 !== undefined && !options.crc64.equals(crc64!.digest())) throw new TableError('Crc64Mismatch');
}
