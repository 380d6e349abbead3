// The Queue service's limits, with their units and sources. Beside src/limits.ts (the front door
// and the Table service) so that the queue service's rules read in one place.
import assert from 'node:assert/strict';

const secondsPerDay = 24 * 60 * 60;

/** https://learn.microsoft.com/rest/api/storageservices/naming-queues-and-metadata */
export const queueNameLengthMin = 3;
export const queueNameLengthMax = 63;

/** Message text, in UTF-8 bytes as Azurite counts it (put-message: "up to 64 KiB in size"). */
export const messageTextBytesMax = 64 * 1024;
/** Put Message's default time to live: 7 days (put-message). */
export const messageTtlSecondsDefault = 7 * secondsPerDay;
/** Any positive TTL is allowed since version 2017-07-29; -1 means never expires (put-message). */
export const messageTtlSecondsMin = 1;
/** Put and Update Message visibility timeout: 0 s to 7 days (put-message, update-message). */
export const visibilityTimeoutSecondsMax = 7 * secondsPerDay;
/** Get Messages visibility timeout: 1 s to 7 days, default 30 s (get-messages). */
export const dequeueVisibilitySecondsMin = 1;
export const dequeueVisibilitySecondsDefault = 30;
/** Get and Peek Messages return 1 to 32 messages, 1 by default (get-messages, peek-messages). */
export const messagesPerGetMax = 32;
/** List Queues page size: 1 to 5,000, 5,000 when unspecified (list-queues1). */
export const listQueuesPageMax = 5000;
/** Stored access policies per queue (set-queue-acl). */
export const queuePoliciesMax = 5;

/**
 * A message that never expires is shown with this expiration time (9999-12-31T23:59:59Z), and a
 * time to live that would end later counts as never (queue-service.ts expiryMs).
 */
export const neverExpiresWireMs = Date.UTC(9999, 11, 31, 23, 59, 59);

assert(messagesPerGetMax === 32, 'the service returns at most 32 messages per get');
assert(visibilityTimeoutSecondsMax === 604_800, 'visibility timeouts stop at 7 days');
