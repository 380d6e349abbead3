// The Queue service's operations over its store (storage/queue-store.ts): the rules and limits of
// https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api, checked before the
// store is asked, and the store's answers turned into the service's errors. It knows seconds and
// milliseconds, not HTTP or XML (queue/operations.ts reads requests, queue/queue-xml.ts writes bodies).
import { invalidQueryParameter, StorageError } from '../errors.js';
import type { MessageFailure, MessageResult, QueueInfo, QueueStore, StoredMessage } from '../storage/queue-store.js';
import type { Clock } from '../domain/clock.js';
import { messageTextBytesMax, neverExpiresWireMs } from './limits.js';
import { newMessageId } from './message-ids.js';
import { checkQueueName, sameMetadata } from './names.js';

export interface PutOptions {
  /** 0 to 7 days; the message is invisible this long. */
  readonly visibilityTimeoutSeconds: number;
  /** Seconds, or -1: never expires. Default 7 days. */
  readonly ttlSeconds: number;
}

export interface QueuePage {
  readonly queues: readonly QueueInfo[];
  /** The name the next page starts at; undefined on the last page. */
  readonly nextName: string | undefined;
}

export class QueueService {
  constructor(
    private readonly store: QueueStore,
    readonly clock: Clock,
    private readonly newId: () => string = newMessageId,
  ) {}

  /** 'created' (201), or 'exists' with the same metadata (204); different metadata is 409 QueueAlreadyExists. */
  async createQueue(
    account: string,
    name: string,
    metadata: ReadonlyMap<string, string>,
  ): Promise<'created' | 'exists'> {
    checkQueueName(name);
    const result = await this.store.createQueue(account, name, metadata);
    if (result.created) return 'created';
    if (!sameMetadata(result.existing.metadata, metadata)) throw new StorageError('QueueAlreadyExists');
    return 'exists';
  }

  async deleteQueue(account: string, name: string): Promise<void> {
    checkQueueName(name);
    if (!(await this.store.deleteQueue(account, name))) throw new StorageError('QueueNotFound');
  }

  /** The queue's metadata and its approximate message count (get-queue-metadata). */
  async getQueueMetadata(
    account: string,
    name: string,
  ): Promise<{ metadata: ReadonlyMap<string, string>; count: number }> {
    checkQueueName(name);
    const queue = await this.store.getQueue(account, name);
    if (queue === undefined) throw new StorageError('QueueNotFound');
    const count = answer(await this.store.countMessages(account, name, this.clock.nowMs()));
    return { metadata: queue.metadata, count };
  }

  async setQueueMetadata(account: string, name: string, metadata: ReadonlyMap<string, string>): Promise<void> {
    checkQueueName(name);
    if (!(await this.store.setQueueMetadata(account, name, metadata))) throw new StorageError('QueueNotFound');
  }

  /** The stored access policies as the service encoded them (JSON of SignedIdentifier[]); undefined: none. */
  async getQueueAcl(account: string, name: string): Promise<string | undefined> {
    checkQueueName(name);
    return answer(await this.store.getQueueAcl(account, name));
  }

  async setQueueAcl(account: string, name: string, acl: string | undefined): Promise<void> {
    checkQueueName(name);
    answer(await this.store.setQueueAcl(account, name, acl));
  }

  /** One page of queues with the prefix, from `fromName` on (list-queues1). */
  async listQueues(
    account: string,
    prefix: string,
    fromName: string | undefined,
    pageSize: number,
  ): Promise<QueuePage> {
    const found = await this.store.listQueues(account, prefix, fromName, pageSize + 1);
    const more = found.length > pageSize;
    return { queues: found.slice(0, pageSize), nextName: more ? found[pageSize]!.name : undefined };
  }

  /**
   * Put Message: the text at most 64 KiB in UTF-8 (413 RequestBodyTooLarge, as the service answers),
   * the visibility timeout shorter than the time to live (400 InvalidQueryParameterValue, as Azurite).
   */
  async putMessage(account: string, queue: string, text: string, options: PutOptions): Promise<StoredMessage> {
    checkQueueName(queue);
    checkMessageText(text);
    const { visibilityTimeoutSeconds, ttlSeconds } = options;
    if (ttlSeconds !== -1 && visibilityTimeoutSeconds >= ttlSeconds) {
      const value = String(visibilityTimeoutSeconds);
      throw invalidQueryParameter('visibilitytimeout', value, 'messagettl must be greater than visibilitytimeout');
    }
    const nowMs = this.clock.nowMs();
    const expiresMs = expiryMs(nowMs, ttlSeconds);
    const message = {
      id: this.newId(),
      text,
      insertedMs: nowMs,
      expiresMs,
      visibleMs: nowMs + visibilityTimeoutSeconds * 1000,
    };
    return answer(await this.store.putMessage(account, queue, message));
  }

  async getMessages(
    account: string,
    queue: string,
    count: number,
    visibilityTimeoutSeconds: number,
  ): Promise<StoredMessage[]> {
    checkQueueName(queue);
    const nowMs = this.clock.nowMs();
    return answer(
      await this.store.getMessages(account, queue, {
        count,
        nowMs,
        visibleMs: nowMs + visibilityTimeoutSeconds * 1000,
      }),
    );
  }

  async peekMessages(account: string, queue: string, count: number): Promise<StoredMessage[]> {
    checkQueueName(queue);
    return answer(await this.store.peekMessages(account, queue, { count, nowMs: this.clock.nowMs() }));
  }

  async deleteMessage(account: string, queue: string, id: string, popReceipt: string): Promise<void> {
    checkQueueName(queue);
    answer(await this.store.deleteMessage(account, queue, { id, popReceipt, nowMs: this.clock.nowMs() }));
  }

  /**
   * Update Message: new visibility, optionally new text; the answer carries the new pop receipt. An
   * expired message is 404 MessageNotFound, even before the purge removes it. A new visibility
   * later than the message's expiry is taken, not refused (the message then expires unseen): the
   * update-message page says it "cannot be set to a value later than the expiry time", but the
   * service's REST specification says it can (the `visibilitytimeout` of Update in
   * https://github.com/Azure/azure-rest-api-specs, as the SDKs document it), the service answered
   * 204 to one (https://github.com/Azure/azure-sdk-for-java/issues/105), and Azurite takes it too.
   * Unverified against today's service.
   */
  async updateMessage(
    account: string,
    queue: string,
    target: { readonly id: string; readonly popReceipt: string },
    visibilityTimeoutSeconds: number,
    text: string | undefined,
  ): Promise<StoredMessage> {
    checkQueueName(queue);
    if (text !== undefined) checkMessageText(text);
    const nowMs = this.clock.nowMs();
    const visibleMs = nowMs + visibilityTimeoutSeconds * 1000;
    return answer(
      await this.store.updateMessage(account, queue, {
        id: target.id,
        popReceipt: target.popReceipt,
        nowMs,
        visibleMs,
        text,
      }),
    );
  }

  async clearMessages(account: string, queue: string): Promise<void> {
    checkQueueName(queue);
    answer(await this.store.clearMessages(account, queue));
  }
}

/**
 * When a message put at `nowMs` with `ttlSeconds` expires: never for -1, and never for a time to
 * live that ends after the latest instant the service can write (9999-12-31T23:59:59Z): such a
 * message is stored as one that never expires and shows that instant as its ExpirationTime, as a
 * message put with -1 does (Cerulean's choice: the docs do not say how the service shows it).
 */
export function expiryMs(nowMs: number, ttlSeconds: number): number {
  if (ttlSeconds === -1 || ttlSeconds * 1000 > neverExpiresWireMs - nowMs) return Number.POSITIVE_INFINITY;
  return nowMs + ttlSeconds * 1000;
}

/**
 * The text must fit in 64 KiB as UTF-8 (Azurite counts the same way; put-message). The service's
 * 413 names the limit in bytes in a <MaxLimit> element after the message, as Azurite's does.
 */
function checkMessageText(text: string): void {
  if (Buffer.byteLength(text, 'utf8') > messageTextBytesMax) {
    throw new StorageError(
      'RequestBodyTooLarge',
      'The request body is too large and exceeds the maximum permissible limit.',
      undefined,
      [['MaxLimit', String(messageTextBytesMax)]],
    );
  }
}

const failureCodes = {
  queueNotFound: 'QueueNotFound',
  messageNotFound: 'MessageNotFound',
  popReceiptMismatch: 'PopReceiptMismatch',
} as const satisfies Record<MessageFailure, string>;

function answer<T>(result: MessageResult<T>): T {
  if (result.ok) return result.value;
  throw new StorageError(failureCodes[result.failure]);
}
