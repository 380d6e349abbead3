// The page blob part of the Blob store contract (blob-store.ts): a page blob version is a size and
// a page table of extents, each a run of written bytes naming a part of content written by
// writeContent. Bytes no extent covers read as zeros, so storage is proportional to what was
// written, not to the blob's size. A snapshot or a copy of a page blob copies the extent rows and
// shares their content. Content an extent names is referenced as a block's is: reclaimContent
// leaves it while any extent names it.
import type { BlobKey, ContentRef } from './blob-store.js';

/** Bytes [startByte, endByteExclusive) of a blob. */
export interface PageRange {
  readonly startByte: number;
  readonly endByteExclusive: number;
}

/** Written pages: bytes of a page blob version, from `contentId`'s byte `contentOffsetBytes` on. */
export interface PageExtent extends PageRange {
  readonly contentId: string;
  readonly contentOffsetBytes: number;
}

/**
 * How a page blob's pages change with its record: ContentChange 'pages' of BlobStore.putBlob, on
 * the base blob. The service checks alignment and bounds; the store asserts ranges are within the
 * record's size.
 */
export type PageChange =
  /**
   * A new page blob of record.sizeBytes zero bytes, replacing the current version of any type (or
   * none); the name's staged blocks are dropped, as Put Blob drops them.
   */
  | { readonly kind: 'create' }
  /** `content`'s bytes become the blob's from `startByte`; the size stays. */
  | { readonly kind: 'write'; readonly startByte: number; readonly content: ContentRef }
  /** The range reads as zeros again; the size stays. */
  | { readonly kind: 'clear'; readonly range: PageRange }
  /** The size becomes record.sizeBytes; pages past it are dropped (a larger size adds zeros). */
  | { readonly kind: 'resize' }
  /**
   * Copy Blob: replaces the current version (or none) with the pages of `source`, a page blob
   * version of any account of the store whose ETag must still be `sourceEtag` (else 'etagMismatch');
   * record.sizeBytes is its size. The extents are copied, their content shared.
   */
  | {
      readonly kind: 'copy';
      /** The source's account: a copy may come from another account of the same store. */
      readonly sourceAccount: string;
      readonly source: BlobKey;
      readonly sourceEtag: string;
    };

/** The reads of page blobs every engine serves (BlobStore extends it). */
export interface PageStore {
  /**
   * The written extents of the version whose ETag is `etag` that end after `fromByte` and start
   * before `toByteExclusive`, in order of their start, at most `limit` ('changed' when that version
   * is no longer current). Extents never overlap; adjacent ones may or may not be joined. A caller
   * pages on from the last extent's end: each call's work and memory are bounded by `limit`.
   * (readContent reads a page blob's bytes, zeros where no extent is.)
   */
  pageExtents(
    account: string,
    key: BlobKey,
    etag: string,
    fromByte: number,
    toByteExclusive: number,
    limit: number,
  ): Promise<PageExtent[] | 'changed'>;
}
