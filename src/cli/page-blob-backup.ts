// A page blob in an account backup file (docs/cli.md "Account backup file"), sparse both ways: its
// record carries its size, sequence number and written ranges (Get Page Ranges, under If-Match on
// the listed ETag), and its content is the bytes of those ranges only, in order, each read with a
// ranged Get Blob under the same If-Match. Restore creates the blob at its size and puts each range
// back with Put Page, at most 4 MiB at a time; pages never written stay unwritten.
import type { BlobItem, ContainerClient } from '@azure/storage-blob';

/** 4 MiB: the most one Put Page may write. */
const pagePutBytesMax = 4 * 1024 * 1024;

/** What a backup keeps of a page blob besides its bytes. */
export interface PageBlobShape {
  readonly blobSizeBytes: number;
  readonly sequenceNumber: number;
  /** Written ranges [start, endExclusive), in order, not touching. */
  readonly ranges: readonly (readonly [number, number])[];
}

/** The page blob's shape as of its listed ETag (412 if it changed since, for the caller to list again). */
export async function pageBlobShape(container: ContainerClient, item: BlobItem): Promise<PageBlobShape> {
  const client = container.getPageBlobClient(item.name);
  const ranges: [number, number][] = [];
  const options = { conditions: { ifMatch: item.properties.etag } };
  // listPageRanges gives each range's first and last byte.
  for await (const range of client.listPageRanges(0, undefined, options)) ranges.push([range.start, range.end + 1]);
  return {
    blobSizeBytes: item.properties.contentLength ?? 0,
    sequenceNumber: item.properties.blobSequenceNumber ?? 0,
    ranges,
  };
}

/** The bytes of the written ranges, in order, each read under If-Match on `etag`. */
export async function* pageBlobContent(
  container: ContainerClient,
  name: string,
  etag: string | undefined,
  ranges: PageBlobShape['ranges'],
): AsyncIterable<Buffer> {
  const client = container.getBlobClient(name);
  for (const [start, end] of ranges) {
    const response = await client.download(start, end - start, { conditions: { ifMatch: etag } });
    const body = response.readableStreamBody as AsyncIterable<Buffer> | undefined;
    if (body !== undefined) yield* body;
  }
}

/** Reads exact byte counts from a stream of chunks. */
class ExactReader {
  private held: Buffer = Buffer.alloc(0);

  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  /** The next `bytes` bytes; fewer only where the stream ends. */
  async take(bytes: number): Promise<Buffer> {
    const parts = [this.held];
    let length = this.held.length;
    while (length < bytes) {
      const next = await this.chunks.next();
      if (next.done === true) break;
      parts.push(next.value);
      length += next.value.length;
    }
    const all = parts.length === 1 ? this.held : Buffer.concat(parts, length);
    this.held = all.subarray(Math.min(bytes, all.length));
    return all.subarray(0, Math.min(bytes, all.length));
  }
}

/**
 * Puts `content` (the ranges' bytes, in order) into the page blob `client` names, created before;
 * stops short where the content ends (the caller compares the byte count with the record's).
 */
export async function writePageRanges(
  container: ContainerClient,
  name: string,
  ranges: PageBlobShape['ranges'],
  content: AsyncIterable<Buffer>,
): Promise<void> {
  const client = container.getPageBlobClient(name);
  const reader = new ExactReader(content[Symbol.asyncIterator]());
  for (const [start, end] of ranges) {
    for (let offset = start; offset < end; offset += pagePutBytesMax) {
      const wanted = Math.min(pagePutBytesMax, end - offset);
      const piece = await reader.take(wanted);
      if (piece.length < wanted) return; // the content ended early: the caller's count refuses it
      await client.uploadPages(piece, offset, piece.length);
    }
  }
  // Whatever is left over is read, so that the caller counts (and refuses) it.
  while ((await reader.take(pagePutBytesMax)).length > 0);
}
