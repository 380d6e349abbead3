// Retrying answers that say "try again": 500 and 503 (ServerBusy, throttling), and connections
// that failed or dropped. Exponential backoff with jitter, a bounded number of attempts.
import { setTimeout as delay } from 'node:timers/promises';

export interface RetryPolicy {
  readonly attemptsMax: number;
  readonly delayFirstMs: number;
  readonly delayMaxMs: number;
}

/** Seven attempts over at most ~25 s: enough to ride out a restart or a burst of throttling. */
export const defaultRetryPolicy: RetryPolicy = { attemptsMax: 7, delayFirstMs: 200, delayMaxMs: 8_000 };

const transientNetworkCodes = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'REQUEST_SEND_ERROR']);

export function isRetryable(error: unknown): boolean {
  const { statusCode, code } = error as { statusCode?: number; code?: string };
  if (statusCode === 500 || statusCode === 503) return true;
  return statusCode === undefined && code !== undefined && transientNetworkCodes.has(code);
}

/** Runs `work` until it succeeds, fails for good, or runs out of attempts (the last error is thrown). */
export async function withRetries<T>(work: () => Promise<T>, policy: RetryPolicy = defaultRetryPolicy): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= policy.attemptsMax || !isRetryable(error)) throw error;
      const ceilingMs = Math.min(policy.delayMaxMs, policy.delayFirstMs * 2 ** (attempt - 1));
      await delay(ceilingMs / 2 + Math.random() * (ceilingMs / 2)); // "equal jitter"
    }
  }
}
