// Blob insights, read from the blob watch (blob-watch.ts) in the terms of the Blob storage
// performance checklist (https://learn.microsoft.com/azure/storage/blobs/storage-performance-checklist):
// content staged in many small blocks, the same large blob downloaded whole again and again, and
// requests refused again and again for a lease
// (https://learn.microsoft.com/azure/storage/blobs/concurrency-manage).
import { largeReadBytes, smallBlockBytes, type ContainerWatch } from './blob-watch.js';

/** Small Put Block calls a container must see before its block sizes say anything. */
export const smallBlocksMin = 50;
/** Share of a container's Put Block calls that are small for it to be a pattern. */
const smallBlocksShare = 0.5;
/** Whole unconditional reads of one large blob that make a repeated download. */
export const repeatedReadsMin = 10;
/** Requests refused for a lease in one container that make contention rather than a one-off race. */
export const leaseRefusalsMin = 20;

export interface BlobFinding {
  readonly kind: 'small-blocks' | 'repeated-whole-read' | 'lease-conflicts';
  readonly account: string;
  readonly container: string;
  /** The blob of a repeated-whole-read finding. */
  readonly blob?: string;
  readonly summary: string;
  readonly evidence: Readonly<Record<string, string | number>>;
  readonly pattern: string;
  readonly wastedEntities: 0;
}

export function blobFindings(containers: readonly ContainerWatch[]): BlobFinding[] {
  return containers.flatMap((watch) => [...smallBlocks(watch), ...repeatedReads(watch), ...leaseConflicts(watch)]);
}

function smallBlocks(watch: ContainerWatch): BlobFinding[] {
  const { putBlocks, smallPutBlocks } = watch;
  if (smallPutBlocks < smallBlocksMin || smallPutBlocks / putBlocks < smallBlocksShare) return [];
  const averageBlockBytes = Math.round(watch.putBlockBytes / putBlocks);
  return [
    {
      kind: 'small-blocks',
      account: watch.account,
      container: watch.container,
      summary:
        `${smallPutBlocks} of ${putBlocks} Put Block calls in container ${watch.container} staged less than ` +
        `${smallBlockBytes / 1024} KiB (average ${averageBlockBytes} bytes).`,
      evidence: { putBlocks, smallPutBlocks, averageBlockBytes },
      pattern:
        'Every block is a request, billed and counted against the 500 requests/s target of its blob. Upload a ' +
        'small blob with one Put Blob; stage blocks larger than 256 KiB (the high-throughput path of block ' +
        'blobs), e.g. a larger block size in the SDK upload options, and several of them in parallel.',
      wastedEntities: 0,
    },
  ];
}

function repeatedReads(watch: ContainerWatch): BlobFinding[] {
  return watch.wholeReads
    .top(3)
    .filter((entry) => entry.count - entry.error >= repeatedReadsMin)
    .map((entry) => ({
      kind: 'repeated-whole-read' as const,
      account: watch.account,
      container: watch.container,
      blob: entry.key,
      summary:
        `Blob ${watch.container}/${entry.key} (${entry.value.bytes} bytes) was downloaded whole ` +
        `${entry.count - entry.error} times without a condition or a range.`,
      evidence: { reads: entry.count - entry.error, bytes: entry.value.bytes, largeReadBytes },
      pattern:
        'Cache what you read again: keep the blob and its ETag, then ask with If-None-Match (a 304 has no ' +
        'body), or read only the ranges you need (x-ms-range). Content many clients read belongs behind a CDN.',
      wastedEntities: 0,
    }));
}

function leaseConflicts(watch: ContainerWatch): BlobFinding[] {
  const refusals = [...watch.leaseRefusals.values()].reduce((sum, count) => sum + count, 0);
  if (refusals < leaseRefusalsMin) return [];
  return [
    {
      kind: 'lease-conflicts',
      account: watch.account,
      container: watch.container,
      summary: `${refusals} requests to blobs of container ${watch.container} were refused for a lease.`,
      evidence: Object.fromEntries([['refusals', refusals], ...watch.leaseRefusals]),
      pattern:
        'Clients race for leases or write without the lease they hold. Send the lease ID with each write to a ' +
        'leased blob (x-ms-lease-id); renew a lease well before it expires; poll Acquire Lease with backoff ' +
        'rather than in a loop; where exclusive access is not needed, write with an ETag condition (If-Match) ' +
        'instead of a lease.',
      wastedEntities: 0,
    },
  ];
}
