// Retries of transient failures (500, 503, timeouts, lost connections) with exponential backoff
// and full jitter, and the bounded re-read-and-retry loop of optimistic concurrency.
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Source of jitter in [0, 1); replace it to make delays reproducible. */
  random: () => number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 50,
  maxDelayMs: 2_000,
  random: Math.random,
};

/** HTTP status of an SDK error, if it has one. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/** 408, 500, 502, 503, 504, or no response at all (the connection failed or was cut). */
export function isTransient(error: unknown): boolean {
  const status = statusOf(error);
  if (status === undefined) return (error as { name?: string } | null)?.name === 'RestError';
  return status === 408 || status === 500 || status === 502 || status === 503 || status === 504;
}

export class RetriesExhaustedError extends Error {
  override name = 'RetriesExhaustedError';
  constructor(
    message: string,
    readonly attempts: number,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

/** Delay before attempt `attempt` (1 = the first retry): full jitter over an exponential cap. */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(policy.random() * cap);
}

/**
 * Runs `operation` until it succeeds or fails with a non-transient error, at most
 * `policy.maxAttempts` times. Only pass operations that are safe to repeat: the response of a
 * transient failure may have been lost after the service applied the write.
 */
export async function withRetry<T>(
  operation: (attempt: number) => Promise<T>,
  policy: RetryPolicy = defaultRetryPolicy,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (!isTransient(error)) throw error;
      if (attempt >= policy.maxAttempts) {
        throw new RetriesExhaustedError(
          `gave up after ${attempt} attempts: ${(error as Error).message}`,
          attempt,
          error,
        );
      }
      await delay(backoffMs(policy, attempt));
    }
  }
}

/** A short random id for one logical write (72 bits). */
export function newOperationId(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * Submits a conditional write and reports a row that vanished since it was read (404
 * ResourceNotFound: deleted concurrently) as the lost race it is, a 412, so the optimistic loop
 * re-reads. A missing table stays a 404.
 */
export async function raceOnMissingRow<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (statusOf(error) === 404 && (error as { code?: string }).code !== 'TableNotFound') {
      throw Object.assign(new Error(`a row changed concurrently: ${(error as Error).message}`), { statusCode: 412 });
    }
    throw error;
  }
}

export class ConcurrencyConflictError extends Error {
  override name = 'ConcurrencyConflictError';
}

/**
 * Optimistic concurrency: `attempt` reads the current state, writes conditionally (If-Match) and
 * reports a lost race by throwing a 412. Each race lost re-runs
 * it, at most `maxAttempts` times in all. Transient failures are retried inside with backoff.
 */
export async function optimistic<T>(
  attempt: (operationId: string) => Promise<T>,
  options: { maxAttempts?: number; retry?: RetryPolicy } = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 16;
  const retry = options.retry ?? defaultRetryPolicy;
  // One id for every attempt: a re-read that finds it knows an earlier attempt landed.
  const operationId = newOperationId();
  for (let round = 1; ; round++) {
    try {
      return await withRetry(() => attempt(operationId), retry);
    } catch (error) {
      const status = statusOf(error);
      if (status !== 412) throw error;
      if (round >= maxAttempts) throw new ConcurrencyConflictError(`lost the race ${round} times in a row; giving up`);
      await delay(backoffMs(retry, Math.min(round, 6)));
    }
  }
}
