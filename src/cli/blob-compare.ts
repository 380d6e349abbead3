// When a blob at the destination is the source's, so a resumed copy or a sync can skip it: the same
// type and size, and the same content: by the Content-MD5 both list when both have one (Put Blob
// sets it; a blob committed from blocks has none unless its writer set it), else by reading both.
import { createHash } from 'node:crypto';
import type { BlobClient, BlobItem, ContainerClient } from '@azure/storage-blob';

export async function identicalBlob(
  source: ContainerClient,
  item: BlobItem,
  target: ContainerClient,
  there: BlobItem,
): Promise<boolean> {
  const [a, b] = [item.properties, there.properties];
  if (a.blobType !== b.blobType || a.contentLength !== b.contentLength) return false;
  const [md5a, md5b] = [listedMd5(item), listedMd5(there)];
  if (md5a !== undefined && md5b !== undefined) return md5a === md5b;
  if ((a.contentLength ?? 0) === 0) return true;
  const [sourceMd5, targetMd5] = await Promise.all([
    contentMd5(source.getBlobClient(item.name)),
    contentMd5(target.getBlobClient(there.name)),
  ]);
  return sourceMd5 === targetMd5;
}

/** The Content-MD5 property a listing shows, hex; undefined when the blob has none. */
export function listedMd5(item: BlobItem): string | undefined {
  const md5 = item.properties.contentMD5;
  return md5 && md5.byteLength > 0 ? Buffer.from(md5).toString('hex') : undefined;
}

/** The MD5 (hex) of a blob's content, streamed. */
export async function contentMd5(blob: BlobClient): Promise<string> {
  const response = await blob.download();
  const hash = createHash('md5');
  for await (const chunk of (response.readableStreamBody ?? []) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** Hashes content as it passes through. */
export function md5Counter(): { through(content: AsyncIterable<Buffer>): AsyncIterable<Buffer>; hex(): string } {
  const hash = createHash('md5');
  return {
    async *through(content) {
      for await (const chunk of content) {
        hash.update(chunk);
        yield chunk;
      }
    },
    hex: () => hash.digest('hex'),
  };
}
