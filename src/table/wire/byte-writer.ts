// Building a large response body as UTF-8 bytes in one pass. A query page is a thousand entity
// texts; joined into one string it is copied once to flatten it, walked once more for
// Content-Length and encoded once more by the socket. Written piece by piece into one buffer it is
// encoded once, and each stored text is read where it lies (no flattening of the pieces).
//
// The buffers are reused once their body has been sent: fresh memory costs a page fault per
// 4 KiB on first touch (the kernel zero-fills it), and the C library hands large blocks back to
// the kernel when they are freed, so a new buffer per response paid those faults every time.
import assert from 'node:assert/strict';

/** Bytes written by a ByteWriter; `release` once nothing reads them any more (the body was sent; again is harmless). */
export interface PooledBytes {
  readonly bytes: Buffer;
  readonly release: () => void;
}

/** Released buffers, most recent last; bounded in count and size (at most 16 MiB kept). */
const pool: Buffer[] = [];
const pooledBuffersMax = 8;
const pooledBufferBytesMax = 2 << 20;
const bufferBytesMin = 4096;

/** Appends text as UTF-8 to a growing buffer of its own; `finish` hands the bytes out. */
export class ByteWriter {
  private buffer: Buffer;
  private written = 0;

  /** `expectedBytes`: a guess at the final size (the buffer grows past it when needed). */
  constructor(expectedBytes: number) {
    const reused = pool.pop();
    this.buffer =
      reused !== undefined && reused.length >= expectedBytes
        ? reused
        : Buffer.allocUnsafeSlow(Math.max(expectedBytes, bufferBytesMin));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.written;
  }

  /** Appends `text` (a UTF-16 code unit needs at most 3 bytes: a surrogate pair 4 for 2 units). */
  text(text: string): void {
    this.reserve(text.length * 3);
    this.written += this.buffer.write(text, this.written);
  }

  /** Appends one ASCII character by its code. */
  ascii(code: number): void {
    this.reserve(1);
    this.buffer[this.written++] = code;
  }

  /** Overwrites the byte at `at` (already written) with the ASCII character `code`. */
  setAscii(at: number, code: number): void {
    assert(at >= 0 && at < this.written && code < 0x80, 'byte-writer: setAscii out of range');
    this.buffer[at] = code;
  }

  /** The bytes written; the writer must not be used afterwards. */
  finish(): PooledBytes {
    const buffer = this.buffer;
    this.buffer = Buffer.alloc(0);
    let released = false;
    // Idempotent: it runs in node:http's callback, where a throw would end the process.
    const release = (): void => {
      if (released) return;
      released = true;
      if (buffer.length <= pooledBufferBytesMax && pool.length < pooledBuffersMax) pool.push(buffer);
    };
    return { bytes: buffer.subarray(0, this.written), release };
  }

  private reserve(bytes: number): void {
    if (this.written + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.written + bytes));
    this.buffer.copy(grown, 0, 0, this.written);
    this.buffer = grown;
  }
}
