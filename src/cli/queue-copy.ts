// `cerulean copy` of queues: each queue with its metadata, and its messages as a client can see them.
// What a client cannot read is not carried: a message's id, insertion time, dequeue count and pop
// receipt are the destination's own; invisible messages are not seen. The expiry is carried as a
// remaining time to live (the source's expiry time less now, by this machine's clock).
//
// Messages (chosen, docs/cli.md "What a queue copy carries"):
// - 'peek' (the default) reads without changing the source: Peek Messages shows the first 32
//   visible messages at most (the service's limit), so a longer queue is copied in part, and the
//   summary says how many were left.
// - 'all' receives every visible message (hidden for `holdSeconds`), sends a copy, and when the walk
//   is done (or interrupted) makes each visible again (Update Message, visibility 0): every visible
//   message is carried, but at the source each one's dequeue count rises by one and its place in the
//   order changes, and other consumers do not see them meanwhile.
// - 'none': the queues and their metadata only.
// A destination queue that holds messages already (a copy run before) gets none: copying them
// again would double them; the summary says so.
import type { DequeuedMessageItem, PeekedMessageItem, QueueClient, QueueServiceClient } from '@azure/storage-queue';
import type { Interruption } from './interrupt.js';

export const queueMessageModes = ['peek', 'all', 'none'] as const;
export type QueueMessageMode = (typeof queueMessageModes)[number];

/** The most messages one Peek Messages or Get Messages call returns. */
const messagesPerCallMax = 32;
/** How long 'all' hides a source message; a copy still walking then sees it again and stops there. */
const holdSeconds = 600;
/** The service's maximum visibility timeout is 7 days; an expiry past 9999 means "never". */
const neverExpiresYear = 9999;

export interface QueueCopy {
  readonly messages: number;
  readonly bytes: number;
  /** Messages the source holds (its approximate count) that were not copied; 0 if all were. */
  readonly left: number;
  /** The destination held messages already: none were copied. */
  readonly alreadyThere: number;
  readonly interrupted: boolean;
  /** Texts of the first messages copied (as many as a peek shows), for the check. */
  readonly firstTexts: readonly string[];
}

export async function copyQueue(
  source: QueueServiceClient,
  destination: QueueServiceClient,
  name: string,
  mode: QueueMessageMode,
  interruption: Interruption,
): Promise<QueueCopy> {
  const from = source.getQueueClient(name);
  const to = destination.getQueueClient(name);
  const properties = await from.getProperties();
  const metadata = properties.metadata ?? {};
  await to.createIfNotExists({ metadata });
  await to.setMetadata(metadata);
  const empty = { messages: 0, bytes: 0, left: 0, alreadyThere: 0, interrupted: false, firstTexts: [] };
  if (mode === 'none') return { ...empty, left: properties.approximateMessagesCount ?? 0 };
  const there = (await to.peekMessages({ numberOfMessages: 1 })).peekedMessageItems.length;
  if (there > 0) {
    const alreadyThere = (await to.getProperties()).approximateMessagesCount ?? there;
    return { ...empty, alreadyThere };
  }
  const sent = new Sender(to);
  const { left } = await visitMessages(from, mode, interruption, (message) => sent.send(message), properties);
  return { ...sent.totals(), left, alreadyThere: 0, interrupted: interruption.requested };
}

export type VisibleMessage = PeekedMessageItem | DequeuedMessageItem;

/**
 * Calls `visit` for each visible message of the queue that `mode` reads ('peek' or 'all'), in order;
 * answers how many messages the source counts that were not visited (its approximate count).
 */
export async function visitMessages(
  from: QueueClient,
  mode: Exclude<QueueMessageMode, 'none'>,
  interruption: Interruption,
  visit: (message: VisibleMessage) => Promise<void>,
  properties?: { approximateMessagesCount?: number },
): Promise<{ visited: number; left: number }> {
  if (mode === 'all') return walkAll(from, visit, interruption);
  const counted = (properties ?? (await from.getProperties())).approximateMessagesCount ?? 0;
  const peeked = await from.peekMessages({ numberOfMessages: messagesPerCallMax });
  let visited = 0;
  for (const message of peeked.peekedMessageItems) {
    if (interruption.requested) break;
    await visit(message);
    visited++;
  }
  return { visited, left: Math.max(0, counted - visited) };
}

/** Sends copies in order, counting them. */
class Sender {
  messages = 0;
  bytes = 0;
  readonly firstTexts: string[] = [];

  constructor(private readonly to: QueueClient) {}

  async send(message: VisibleMessage): Promise<void> {
    const ttl = remainingSeconds(message.expiresOn);
    if (ttl === 0) return; // expired meanwhile
    await this.to.sendMessage(message.messageText, { messageTimeToLive: ttl });
    this.messages++;
    this.bytes += Buffer.byteLength(message.messageText);
    if (this.firstTexts.length < messagesPerCallMax) this.firstTexts.push(message.messageText);
  }

  totals() {
    return { messages: this.messages, bytes: this.bytes, firstTexts: this.firstTexts };
  }
}

/** Seconds until `expiresOn` (at least 1; 0 once past), or -1 for a message that never expires. */
export function remainingSeconds(expiresOn: Date, nowMs = Date.now()): number {
  if (expiresOn.getUTCFullYear() >= neverExpiresYear) return -1;
  const seconds = Math.ceil((expiresOn.getTime() - nowMs) / 1000);
  return seconds > 0 ? seconds : 0;
}

/**
 * Receives every visible message once (a batch with no message not seen before ends the walk),
 * visits each, then makes every message it holds visible again. Answers how many the source still
 * counts that were not sent (0 unless interrupted or the walk outlasted `holdSeconds`).
 */
async function walkAll(
  from: QueueClient,
  visit: (message: VisibleMessage) => Promise<void>,
  interruption: Interruption,
): Promise<{ visited: number; left: number }> {
  const held = new Map<string, string>(); // id → pop receipt
  let visited = 0;
  try {
    while (!interruption.requested) {
      const batch = await from.receiveMessages({
        numberOfMessages: messagesPerCallMax,
        visibilityTimeout: holdSeconds,
      });
      const fresh = batch.receivedMessageItems.filter((message) => !held.has(message.messageId));
      for (const message of batch.receivedMessageItems) held.set(message.messageId, message.popReceipt);
      if (fresh.length === 0) break;
      for (const message of fresh) {
        await visit(message);
        visited++;
      }
    }
  } finally {
    for (const [id, popReceipt] of held) {
      // A message deleted or taken by another consumer meanwhile: nothing to give back.
      await from.updateMessage(id, popReceipt, undefined, 0).catch(() => undefined);
    }
  }
  const counted = (await from.getProperties()).approximateMessagesCount ?? 0;
  return { visited, left: Math.max(0, counted - visited) };
}

/** The destination's message count and its first texts (a peek), against what was copied. */
export async function checkQueue(destination: QueueServiceClient, name: string, copied: QueueCopy): Promise<string[]> {
  const to = destination.getQueueClient(name);
  const counted = (await to.getProperties()).approximateMessagesCount ?? 0;
  const differences: string[] = [];
  const expected = copied.alreadyThere > 0 ? copied.alreadyThere : copied.messages;
  if (counted !== expected) differences.push(`${expected} messages expected at the destination, ${counted} there`);
  if (copied.alreadyThere > 0) return differences;
  const peeked = await to.peekMessages({ numberOfMessages: messagesPerCallMax });
  const texts = peeked.peekedMessageItems.map((message) => message.messageText);
  const firstDiffering = copied.firstTexts.findIndex((text, i) => texts[i] !== text);
  if (firstDiffering >= 0) differences.push(`message ${firstDiffering + 1} has another text at the destination`);
  return differences;
}
