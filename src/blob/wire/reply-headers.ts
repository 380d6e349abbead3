// What every Blob service reply shares: ETags and Last-Modified dates as the service forms them,
// XML replies, request bodies as text (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api).
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';

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

export const xmlContentType = 'application/xml';

export function xmlReply(status: number, body: string, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': xmlContentType, ...headers }, body };
}

/** The request body as UTF-8 text; bytes that are not UTF-8 are InvalidXmlDocument. */
export function bodyText(body: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new StorageError('InvalidXmlDocument', 'The request body is not valid UTF-8.');
  }
}
