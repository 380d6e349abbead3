// The bounded retry every blob and container write shares: read the record, decide, compare-and-swap
// on the ETag read; when another request changed the record in between, read again and decide again.
import assert from 'node:assert/strict';
import { StorageError } from '../../errors.js';
import { casAttemptsMax } from '../limits.js';

/** What an attempt answers when the record changed between its read and its compare-and-swap. */
export const raced: unique symbol = Symbol('raced');

assert(Number.isInteger(casAttemptsMax) && casAttemptsMax >= 1, 'a write needs at least one attempt');

/**
 * Runs `attempt` until it answers anything but `raced`, at most casAttemptsMax times; then 503
 * ServerBusy with `busyMessage`. Retrying is safe: each attempt reads the record afresh and
 * re-evaluates the operation's pre-conditions (conditional headers, lease, limits) against what it
 * read, and its write lands only if the record still has the ETag read, so every request is
 * answered as if it ran alone against one version: conditions and leases stay exact under concurrency.
 */
export async function retryWhileRaced<T>(busyMessage: string, attempt: () => Promise<T | typeof raced>): Promise<T> {
  for (let attemptsMade = 0; attemptsMade < casAttemptsMax; attemptsMade++) {
    const answer = await attempt();
    if (answer !== raced) return answer;
  }
  throw new StorageError('ServerBusy', busyMessage);
}
