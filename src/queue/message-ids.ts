// Message ids: GUIDs, as the service writes them (put-message answers one in <MessageId>), laid
// out as RFC 9562's version 7: the first 48 bits are the milliseconds since the epoch, the rest
// random. Ids of messages put close together are close together in the stores' id indexes, so a
// group commit of many puts rewrites one or two index pages instead of one page per put (random
// version 4 GUIDs spread them over the whole index, and every page a commit touches is written to
// the log and fsynced).
import { randomUUID } from 'node:crypto';

const timeHexDigits = 12;

/** A new message id: a version 7 GUID of `nowMs` (wall-clock milliseconds). */
export function newMessageId(nowMs: number = Date.now()): string {
  const time = Math.trunc(nowMs).toString(16).padStart(timeHexDigits, '0').slice(-timeHexDigits);
  // randomUUID's version 4 layout is 8-4-4-4-12: keep its random bits from the third group on,
  // after its version digit, and put the time and version 7 in front.
  const random = randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15)}`;
}
