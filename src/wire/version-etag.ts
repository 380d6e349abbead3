// ETags and dates as the Blob service and the Data Lake API form them for containers, blobs and
// paths (one namespace, one ETag sequence: a file written through either API gets its next ETag here).

/** Ticks (100 ns) from 0001-01-01 to 1970-01-01: the service's ETags count .NET ticks. */
const epochTicks = 621_355_968_000_000_000n;
let lastTicks = 0n;

/**
 * A new ETag, quoted as sent: `"0x8D…"`, the hex of the write's time in ticks, as the service's
 * look (unverified: how the service derives them). Within one process each is larger than the
 * last; the sub-millisecond digits are random so that two processes writing in the same
 * millisecond rarely agree (the store's compare-and-swap settles a race either way).
 */
export function newEtag(nowMs: number): string {
  const ticks = BigInt(Math.floor(nowMs)) * 10_000n + epochTicks + BigInt(Math.floor(Math.random() * 10_000));
  lastTicks = ticks > lastTicks ? ticks : lastTicks + 1n;
  return `"0x${lastTicks.toString(16).toUpperCase()}"`;
}

/** RFC 1123 in GMT: Last-Modified, and every date of the Blob service's headers and listings. */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/**
 * Lease actions change neither ETag nor Last-Modified (the service's lease-blob and lease-container
 * answer the resource's current ones; Azurite's lease handlers keep them too), yet a lease action must
 * still replace the record by compare-and-swap, and every other write must notice that it happened:
 * a Set Blob Metadata that read the record before an acquire and wrote after it would otherwise
 * succeed on the unchanged ETag and drop the lease. So a record's stored etag is the ETag clients
 * see, followed by `~n` after the n-th lease action since the last write: each lease action stores a
 * new value (the store's compare-and-swap token changes) while clients see the same ETag. Any other
 * write makes a fresh ETag without the suffix. The suffix never leaves the service: replies,
 * listings and If-Match/If-None-Match all use visibleEtag. Set Blob Tags, which changes neither
 * either (storage-manage-find-blobs), marks its write the same way.
 */
export const leaseMark = '~';

/** The ETag clients see of a stored record's etag (quoted, as sent). */
export function visibleEtag(stored: string): string {
  const mark = stored.indexOf(leaseMark);
  return mark === -1 ? stored : stored.slice(0, mark);
}

/** The stored etag after one more lease action: the same visible ETag, a token the record never had. */
export function leaseEtag(stored: string): string {
  const mark = stored.indexOf(leaseMark);
  const count = mark === -1 ? 0 : Number(stored.slice(mark + 1));
  if (!Number.isSafeInteger(count) || count < 0) throw new Error(`a lease mark is a count: ${stored}`);
  return `${visibleEtag(stored)}${leaseMark}${count + 1}`;
}
