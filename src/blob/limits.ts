// The Blob service's limits for blobs and blocks, with their units and sources
// (https://learn.microsoft.com/rest/api/storageservices/put-blob, put-block, put-block-list,
// append-block, lease-blob, list-blobs, get-blob).
const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * One Put Blob's content: 5000 MiB, the limit put-blob documents for version 2019-12-12 and later;
 * Cerulean applies it to every version (older versions allowed 256 MiB or 64 MiB).
 */
export const putBlobBytesMax = 5000 * MiB;
/** One Put Block's content: 4000 MiB (put-block, version 2019-12-12 and later). */
export const blockBytesMax = 4000 * MiB;
/** A block id decodes to at most 64 bytes (put-block). */
export const blockIdBytesMax = 64;
/** Staged (uncommitted) blocks under one blob name (put-block: 100,000). */
export const stagedBlocksMax = 100_000;
/** Committed blocks of a block blob (put-block-list: 50,000). */
export const committedBlocksMax = 50_000;
/**
 * One Append Block's content: 100 MiB for version 2022-11-02 and later, 4 MiB before
 * (append-block). `version` is the request's x-ms-version (or a SAS's sv); '' counts as older.
 */
export function appendBlockBytesMax(version: string): number {
  return version >= '2022-11-02' ? 100 * MiB : 4 * MiB;
}
/** A page blob's size: up to 8 TiB (put-blob, x-ms-blob-content-length), in 512-byte pages. */
export const pageBlobBytesMax = 8 * 1024 * 1024 * MiB;
export const pageBytes = 512;
/** One Put Page update: up to 4 MiB (put-page). */
export const pageWriteBytesMax = 4 * MiB;
/** Blocks of an append blob (append-block: 50,000). */
export const appendBlocksMax = 50_000;
/** Put Block List's XML body: 50,000 ids of up to 64 bytes, base64, in markup; 8 MiB is ample. */
export const blockListBodyBytesMax = 8 * MiB;
/** x-ms-range-get-content-md5 and -crc64 are allowed for ranges up to 4 MiB (get-blob). */
export const rangeMd5BytesMax = 4 * MiB;
/** List Blobs' page: maxresults above 5000 are answered with 5000 (list-blobs). */
export const listBlobsPageMax = 5000;
/** Find Blobs by Tags' page: maxresults above 5000 are answered with 5000 (find-blobs-by-tags). */
export const findBlobsPageMax = 5000;
/** Compare-and-swap attempts before a write gives up under contention (answered 503 ServerBusy). */
export const casAttemptsMax = 32;
/** Parts of one Blob Batch (blob-batch: "up to 256 subrequests"). */
export const batchPartsMax = 256;
/** A Blob Batch body: 4 MiB, the front door's body cap (bodyBytesMax), as the SDKs' BATCH_MAX_PAYLOAD_IN_BYTES. */
export const batchBodyBytesMax = 4 * MiB;
/**
 * A batch's parts run this many at a time: enough that their writes share the store's group
 * commits (one fsync for many deletes), few enough that one batch cannot fill the in-flight work.
 */
export const batchPartsConcurrency = 32;
