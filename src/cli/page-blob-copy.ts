// A page blob from one container to another: created at the source's size with its content headers,
// metadata and index tags, then only its written page ranges (Get Page Ranges) are read and put (Put
// Page), in pieces of at most 4 MiB, the service's limit for one Put Page. The pages never written stay
// zeros, as at the source. A destination that does not serve page blobs refuses the create; the
// caller then names the blob as skipped (pageBlobRefusal).
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import { tagsOption, type BlobTags } from './blob-tags.js';

/** 4 MiB: the most one Put Page may write. */
const pagePutBytesMax = 4 * 1024 * 1024;

export async function copyPageBlob(
  source: ContainerClient,
  target: ContainerClient,
  item: BlobItem,
  tags: BlobTags | undefined,
): Promise<{ bytes: number }> {
  const from = source.getPageBlobClient(item.name);
  const to = target.getPageBlobClient(item.name);
  const p = item.properties;
  const size = p.contentLength ?? 0;
  await to.create(size, {
    blobHTTPHeaders: {
      blobContentType: p.contentType || undefined,
      blobContentEncoding: p.contentEncoding || undefined,
      blobContentLanguage: p.contentLanguage || undefined,
      blobContentDisposition: p.contentDisposition || undefined,
      blobCacheControl: p.cacheControl || undefined,
      blobContentMD5: p.contentMD5 && p.contentMD5.byteLength > 0 ? p.contentMD5 : undefined,
    },
    metadata: typeof item.metadata === 'object' ? item.metadata : {},
    tags: tagsOption(tags),
  });
  const etag = p.etag;
  const ranges = (await from.getPageRanges(0, size, { conditions: { ifMatch: etag } })).pageRange ?? [];
  let bytes = 0;
  for (const range of ranges) {
    // Get Page Ranges answers <Start> and an inclusive <End> (0-511 is one page); the SDK's count is
    // End - Start, one less than the range's length.
    const end = range.count === undefined ? size : range.offset + range.count + 1;
    for (let offset = range.offset; offset < end; offset += pagePutBytesMax) {
      const count = Math.min(pagePutBytesMax, end - offset);
      const piece = await from.downloadToBuffer(offset, count, { conditions: { ifMatch: etag } });
      await to.uploadPages(piece, offset, count);
      bytes += count;
    }
  }
  return { bytes };
}

/** Why the destination refused a page blob (it serves none), or undefined for any other failure. */
export function pageBlobRefusal(error: unknown): string | undefined {
  const { statusCode, code } = error as { statusCode?: number; code?: string };
  if (statusCode === 501 || code === 'NotImplemented' || code === 'FeatureNotSupported')
    return `page blob not copied: the destination does not serve page blobs (${statusCode} ${code ?? ''})`.trimEnd();
  return undefined;
}
