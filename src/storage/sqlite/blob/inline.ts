// Small blob content kept in the database (blob_inline rows, blob-schema.ts) rather than in a file
// (blob-content.ts). A file costs each write two fsyncs of its own (the file's, its directory's)
// before the commit that names it; a row rides the writer's group commit, one fsync of the
// write-ahead log shared by every request queued with it (writer.ts). docs/blob-storage.md says why
// it is only for small content and how it is reclaimed.
import assert from 'node:assert/strict';
import { boundLimit } from '../schema.js';

/**
 * Content up to this size is a row; larger content a file. A row goes through the one writer thread
 * and is written twice (the log, then the database at a checkpoint), and a reader reads it whole on
 * the calling thread. Measured (docs/blob-storage.md), a 64 KiB Put Blob goes 1.6 to 2.3 times as fast
 * with a row as with a file; at 256 KiB a row loses under concurrency.
 */
export const inlineBytesMaxDefault = 64 * 1024;

/** The start of a stream: all of it (`whole`), or the bytes read so far and the rest (`rest`). */
export type StreamHead = { readonly whole: Buffer } | { readonly rest: AsyncIterable<Uint8Array> };

/**
 * Reads `source` until it ends or holds more than `bytesMax` bytes: memory is bounded by `bytesMax`
 * plus one chunk. In the second case `rest` yields the chunks read so far, then the rest of
 * `source`, so no byte is lost. An error of `source` is rethrown.
 */
export async function readHead(source: AsyncIterable<Uint8Array>, bytesMax: number): Promise<StreamHead> {
  assert(Number.isSafeInteger(bytesMax) && bytesMax >= 0, 'a size is a count of bytes');
  const iterator = source[Symbol.asyncIterator]();
  const chunks: Buffer[] = [];
  let sizeBytes = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) return { whole: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, sizeBytes) };
    assert(next.value instanceof Uint8Array, 'content arrives as bytes');
    // Copied: the source may reuse its buffer once it yields the next chunk.
    chunks.push(Buffer.from(next.value));
    sizeBytes += next.value.length;
    if (sizeBytes > bytesMax) return { rest: replay(chunks, iterator) };
  }
}

/** `head`, then what `iterator` yields; closes `iterator` if the reader stops early. */
async function* replay(head: Buffer[], iterator: AsyncIterator<Uint8Array>): AsyncIterable<Uint8Array> {
  let done = false;
  try {
    while (head.length > 0) yield head.shift()!;
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) break;
      yield next.value;
    }
    done = true;
  } finally {
    if (!done) await iterator.return?.();
  }
}

/** The reads of inline content, on a store's read connection. */
export const inlineReaderSql = {
  inlineBytes: 'SELECT bytes FROM blob_inline WHERE content_id = ?',
  inlineAfter: `SELECT content_id, written_ms FROM blob_inline WHERE content_id > ? ORDER BY content_id ${boundLimit()}`,
} as const;
