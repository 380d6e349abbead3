// Small blobs read and replaced under ETag conditions, for the patterns that keep a value in Blob
// storage (large entities, index lists). The caller passes a ContainerClient of @azure/storage-blob
// (an optional peer dependency: only these options need it; it is imported for types only).
import type { ContainerClient } from '@azure/storage-blob';
import {
  ConcurrencyConflictError,
  backoffMs,
  defaultRetryPolicy,
  statusOf,
  withRetry,
  type RetryPolicy,
} from './retry.js';
import { setTimeout as delay } from 'node:timers/promises';

export interface BlobVersion {
  readonly etag: string;
  readonly content: Buffer;
}

/** The blob's content and ETag (one version), or undefined when there is no such blob. */
export async function readBlob(
  container: ContainerClient,
  name: string,
  retry: RetryPolicy = defaultRetryPolicy,
): Promise<BlobVersion | undefined> {
  return withRetry(async () => {
    try {
      const blob = container.getBlobClient(name);
      const response = await blob.download(0);
      const chunks: Buffer[] = [];
      for await (const chunk of response.readableStreamBody ?? []) chunks.push(chunk as Buffer);
      return { etag: response.etag!, content: Buffer.concat(chunks) };
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }, retry);
}

/** The next content, `null` to delete the blob, or undefined to leave it as it is. */
export type BlobChange = Buffer | null | undefined;

/**
 * Optimistic read-modify-write of one blob: reads it (absent: undefined), lets `change` compute its
 * next content (it may read other state: that read comes after the blob's), and writes it under If-Match on the ETag
 * read (If-None-Match: * when it was
 * absent), so a concurrent writer's change is never overwritten: the loser re-reads and re-applies
 * its change. `change` may run more than once: keep it free of side effects. At most `maxAttempts`
 * rounds, then ConcurrencyConflictError.
 */
export async function updateBlob(
  container: ContainerClient,
  name: string,
  change: (current: Buffer | undefined) => BlobChange | Promise<BlobChange>,
  options: { retry?: RetryPolicy; maxAttempts?: number } = {},
): Promise<void> {
  const retry = options.retry ?? defaultRetryPolicy;
  const maxAttempts = options.maxAttempts ?? 32;
  const blob = container.getBlockBlobClient(name);
  for (let round = 1; round <= maxAttempts; round++) {
    const current = await readBlob(container, name, retry);
    const next = await change(current?.content);
    if (next === undefined) return;
    try {
      await withRetry(async () => {
        if (next === null) {
          if (current) await blob.delete({ conditions: { ifMatch: current.etag } });
        } else {
          const conditions = current ? { ifMatch: current.etag } : { ifNoneMatch: '*' };
          await blob.upload(next, next.byteLength, { conditions });
        }
      }, retry);
      return;
    } catch (error) {
      // 412: changed since the read; 409: created meanwhile; 404: deleted meanwhile. All lost races.
      const status = statusOf(error);
      if (status !== 412 && status !== 409 && status !== 404) throw error;
      await delay(backoffMs(retry, Math.min(round, 6)));
    }
  }
  throw new ConcurrencyConflictError(`blob ${name}: lost the race ${maxAttempts} times in a row; giving up`);
}
