// ETags: the text form of an entity's stored version, its Timestamp in ticks (Azure REST:
// understanding-the-table-service-data-model).
import { formatDateTimeTicks, parseDateTimeTicks } from './edm.js';

/** The ETag of an entity written at `ticks` (Azure REST: understanding-the-table-service-data-model). */
export function etagOf(ticks: bigint): string {
  return etagOfTimestampText(formatDateTimeTicks(ticks));
}

/** The ETag for a Timestamp already formatted: its two colons percent-encoded. */
export function etagOfTimestampText(text: string): string {
  // yyyy-MM-ddTHH:mm:ss… — the colons stand at offsets 13 and 16.
  return `W/"datetime'${text.slice(0, 13)}%3A${text.slice(14, 16)}%3A${text.slice(17)}'"`;
}

const etagPattern = /^W\/"datetime'([^']*)'"$/;

/**
 * The stored version an ETag names, or undefined when the text is not an ETag of the form this
 * service issues (Azure REST: understanding-the-table-service-data-model: such an If-Match is 400 InvalidInput, never a
 * failed
 * condition). Clients send ETags back byte for byte, so only the exact text `etagOf` writes is
 * taken: a same-instant spelling with other digits is a client bug, and is refused as malformed
 * rather than matched (our choice; the spec compares ETags as strings).
 */
export function parseEtag(text: string): bigint | undefined {
  const match = etagPattern.exec(text);
  if (match === null) return undefined;
  const ticks = parseDateTimeTicks(match[1]!.replace(/%3A/gi, ':'));
  return ticks !== undefined && etagOf(ticks) === text ? ticks : undefined;
}
