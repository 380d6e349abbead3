// ETags: the text form of an entity's stored version, its Timestamp in ticks.
import { dateTimeTicksMin, formatDateTimeTicks, parseDateTimeTicks } from './edm.js';

/** The ETag of an entity written at `ticks`. */
export function etagOf(ticks: bigint): string {
  return etagOfTimestampText(formatDateTimeTicks(ticks));
}

/** The ETag for a Timestamp already formatted: its two colons percent-encoded. */
export function etagOfTimestampText(text: string): string {
  // yyyy-MM-ddTHH:mm:ss… — the colons stand at offsets 13 and 16.
  return `W/"datetime'${text.slice(0, 13)}%3A${text.slice(14, 16)}%3A${text.slice(17)}'"`;
}

const etagPattern = /^W\/"datetime'([^']*)'"$/;
/** An entity tag (RFC 9110 §8.8.3): optionally weak, quoted, no quote inside. */
const entityTagPattern = /^(?:W\/)?"[^"]*"$/;

/**
 * Stands for an entity tag this service never issued: one tick before the earliest DateTime, so no
 * stored version (a Timestamp in ticks) equals it and a condition on it fails (412), as the
 * service's string comparison does.
 */
export const foreignVersion = dateTimeTicksMin - 1n;

/**
 * The stored version an If-Match entity tag names; foreignVersion for any other entity tag; or
 * undefined when the text is no entity tag at all (unquoted: 400 InvalidInput).
 *
 * ETags compare as strings: only the exact text `etagOf` writes names a version. Any other entity
 * tag (`W/"wrong"`, the service's untrimmed `W/"datetime'…4980000Z'"`, a lowercase `%3a`, the
 * older `W/"0x8D…"` form) is a condition that fails. The service answers 412 for a weak tag it
 * never issued (Azure/Azurite#1229, checked against the service); a strong `"…"` is treated alike
 * (our choice, unverified).
 */
export function parseEtag(text: string): bigint | undefined {
  if (!entityTagPattern.test(text)) return undefined;
  const match = etagPattern.exec(text);
  const ticks = match === null ? undefined : parseDateTimeTicks(match[1]!.replace(/%3A/g, ':'));
  return ticks !== undefined && etagOf(ticks) === text ? ticks : foreignVersion;
}
