// Eventually consistent transactions on a real queue (design guide, "Eventually consistent
// transactions pattern"): a producer puts a work message on an Azure queue; a worker gets it with a
// visibility timeout, runs the message's table steps and deletes the message only once they all
// succeeded. A worker that dies in between never deletes it, so the message becomes visible again
// when its timeout ends and another worker runs the steps again: every step must therefore be safe
// to repeat (insert-or-replace, delete that accepts 404, writes conditional on an ETag). A message
// that keeps failing moves to `<queue>-poison` after a bounded number of deliveries.
// https://learn.microsoft.com/azure/storage/tables/table-storage-design-patterns#eventually-consistent-transactions-pattern
import type { TableClient } from '@azure/data-tables';
import type { DequeuedMessageItem, QueueClient, QueueServiceClient } from '@azure/storage-queue';
import type { RawEntity } from '../model.js';
import { defaultRetryPolicy, statusOf, withRetry, type RetryPolicy } from '../retry.js';
import { deleteIfPresent, readRaw } from '../table.js';

/** The service refuses a message over 64 KiB (https://learn.microsoft.com/rest/api/storageservices/put-message). */
export const messageBytesMax = 64 * 1024;
/** Queue names are at most 63 characters (https://learn.microsoft.com/rest/api/storageservices/naming-queues-and-metadata). */
const queueNameLengthMax = 63;

/** The poison queue of `queueName`: where messages go that failed too many times. */
export function poisonQueueName(queueName: string): string {
  const name = `${queueName}-poison`;
  if (name.length > queueNameLengthMax)
    throw new RangeError(`queue name ${queueName} leaves no room for its poison queue (at most 56 characters)`);
  return name;
}

/** Puts one work message (JSON) on the queue; the queue must exist. Returns the message id. */
export async function enqueueWork(queue: QueueClient, work: unknown): Promise<string> {
  const text = JSON.stringify(work);
  const bytes = Buffer.byteLength(text);
  if (bytes > messageBytesMax) throw new RangeError(`work message of ${bytes} bytes, the limit is ${messageBytesMax}`);
  const sent = await queue.sendMessage(text);
  return sent.messageId;
}

/** One delivery of a message, as the handler sees it. */
export interface Delivery {
  messageId: string;
  /** 1 on the first delivery; more means an earlier worker did not finish (or failed). */
  dequeueCount: number;
}

export interface QueueWorkerOptions<T> {
  /** Runs the message's steps; each must be safe to repeat. Throwing leaves the message for a later try. */
  handle: (work: T, delivery: Delivery) => Promise<void>;
  /** How long a message stays hidden from other workers while this one works on it. */
  visibilityTimeoutSeconds?: number;
  /** Deliveries after which a failing message is moved to the poison queue. */
  maxDequeueCount?: number;
  /** Messages fetched per Get Messages (1..32). */
  batchSize?: number;
  /** Called for each message handled, failed or poisoned (progress, logging). */
  onOutcome?: (outcome: Outcome, delivery: Delivery, error?: unknown) => void;
}

export type Outcome = 'done' | 'failed' | 'poisoned';

/** Counts of one pass over the visible messages. */
export interface PassResult {
  received: number;
  done: number;
  failed: number;
  poisoned: number;
}

/** Gets work messages, runs their steps, deletes them once done; poisons those that keep failing. */
export class QueueWorker<T> {
  readonly queue: QueueClient;
  readonly poison: QueueClient;
  private readonly visibilityTimeoutSeconds: number;
  private readonly maxDequeueCount: number;
  private readonly batchSize: number;

  constructor(
    service: QueueServiceClient,
    readonly queueName: string,
    private readonly options: QueueWorkerOptions<T>,
  ) {
    this.queue = service.getQueueClient(queueName);
    this.poison = service.getQueueClient(poisonQueueName(queueName));
    this.visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? 30;
    this.maxDequeueCount = options.maxDequeueCount ?? 5;
    this.batchSize = options.batchSize ?? 1;
    if (this.maxDequeueCount < 1) throw new RangeError('maxDequeueCount must be at least 1');
  }

  /** Creates the queue and its poison queue if they do not exist. */
  async ensureQueues(): Promise<void> {
    await this.queue.createIfNotExists();
    await this.poison.createIfNotExists();
  }

  /** Gets one batch of visible messages and handles each. `received` is 0 when the queue looked empty. */
  async runOnce(): Promise<PassResult> {
    const result: PassResult = { received: 0, done: 0, failed: 0, poisoned: 0 };
    const got = await this.queue.receiveMessages({
      numberOfMessages: this.batchSize,
      visibilityTimeout: this.visibilityTimeoutSeconds,
    });
    for (const message of got.receivedMessageItems) {
      result.received++;
      result[await this.handleMessage(message)]++;
    }
    return result;
  }

  /** Handles messages until a Get Messages returns none. Failed messages stay hidden until their timeout. */
  async drain(): Promise<PassResult> {
    const total: PassResult = { received: 0, done: 0, failed: 0, poisoned: 0 };
    for (;;) {
      const pass = await this.runOnce();
      if (pass.received === 0) return total;
      total.received += pass.received;
      total.done += pass.done;
      total.failed += pass.failed;
      total.poisoned += pass.poisoned;
    }
  }

  /** Runs passes until `signal` aborts, waiting `idleMs` whenever the queue looked empty. */
  async run(signal: AbortSignal, idleMs = 1000): Promise<void> {
    while (!signal.aborted) {
      const pass = await this.runOnce();
      if (pass.received === 0 && !signal.aborted) await sleep(idleMs, signal);
    }
  }

  private async handleMessage(message: DequeuedMessageItem): Promise<Outcome> {
    const delivery: Delivery = { messageId: message.messageId, dequeueCount: message.dequeueCount };
    // An earlier worker used up the last delivery without finishing (it died): no further try.
    if (message.dequeueCount > this.maxDequeueCount) return this.poisonMessage(message, delivery);
    try {
      // A body that is not JSON fails every time, so it ends in the poison queue like any failure.
      await this.options.handle(JSON.parse(message.messageText) as T, delivery);
    } catch (error) {
      if (message.dequeueCount >= this.maxDequeueCount) return this.poisonMessage(message, delivery, error);
      this.options.onOutcome?.('failed', delivery, error);
      return 'failed';
    }
    await this.deleteDelivered(message);
    this.options.onOutcome?.('done', delivery);
    return 'done';
  }

  /** Puts the message's text on the poison queue, then deletes it here (a crash in between leaves a copy in both). */
  private async poisonMessage(message: DequeuedMessageItem, delivery: Delivery, error?: unknown): Promise<Outcome> {
    await this.poison.sendMessage(message.messageText);
    await this.deleteDelivered(message);
    this.options.onOutcome?.('poisoned', delivery, error);
    return 'poisoned';
  }

  /**
   * Deletes the message with this delivery's pop receipt. If the visibility timeout ran out and
   * another worker got the message meanwhile, the receipt is stale (400 PopReceiptMismatch, or 404
   * once that worker deleted it): that worker owns it now, and its repeat of the steps does no harm.
   */
  private async deleteDelivered(message: DequeuedMessageItem): Promise<void> {
    try {
      await this.queue.deleteMessage(message.messageId, message.popReceipt);
    } catch (error) {
      if (statusOf(error) !== 404 && !isPopReceiptMismatch(error)) throw error;
    }
  }
}

function isPopReceiptMismatch(error: unknown): boolean {
  const failure = error as { code?: unknown; details?: { errorCode?: unknown } } | null;
  return statusOf(error) === 400 && (failure?.code ?? failure?.details?.errorCode) === 'PopReceiptMismatch';
}

/** A row's keys. */
export interface RowKeys {
  partitionKey: string;
  rowKey: string;
}

/**
 * Repeatable step: copies the source row's properties to `to` in `target` with insert-or-replace.
 * Returns the ETag of the source row it copied, or undefined when the row is gone (a repeat after
 * the delete step: the copy was made then).
 */
export async function copyRowStep(
  source: TableClient,
  from: RowKeys,
  target: TableClient,
  to: RowKeys,
  retry: RetryPolicy = defaultRetryPolicy,
): Promise<string | undefined> {
  const raw = await readRaw(source, from.partitionKey, from.rowKey, retry);
  if (raw === undefined) return undefined;
  const row = { ...propertiesOf(raw), partitionKey: to.partitionKey, rowKey: to.rowKey };
  await withRetry(() => target.upsertEntity(row, 'Replace'), retry);
  return raw.etag;
}

/**
 * Repeatable step: deletes the source row only if it is still the version that was copied (If-Match);
 * a row already gone is done. A row changed since the copy fails with 412, so the message is tried
 * again and copies the newer version first.
 */
export async function deleteRowStep(
  source: TableClient,
  from: RowKeys,
  copiedEtag: string,
  retry: RetryPolicy = defaultRetryPolicy,
): Promise<void> {
  await deleteIfPresent(source, from.partitionKey, from.rowKey, retry, copiedEtag);
}

/** Moves a row to another table (or partition) in the two repeatable steps above. */
export async function moveRowSteps(
  source: TableClient,
  from: RowKeys,
  target: TableClient,
  to: RowKeys,
  retry: RetryPolicy = defaultRetryPolicy,
): Promise<void> {
  const copiedEtag = await copyRowStep(source, from, target, to, retry);
  if (copiedEtag !== undefined) await deleteRowStep(source, from, copiedEtag, retry);
}

/** The typed properties of a raw row, without its keys and the service's metadata. */
function propertiesOf(raw: RawEntity): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'partitionKey' || name === 'rowKey' || name === 'etag' || name === 'timestamp') continue;
    if (name.startsWith('odata.')) continue;
    properties[name] = value;
  }
  return properties;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
