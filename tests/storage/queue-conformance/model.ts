// The queue model: the QueueStore contract as the plainest code that could hold it, one array of
// messages per queue, for the model test (model-check.ts). Pop receipts are the engine's: the
// model records the receipt the engine answered for each put, get and update.
import type { MessageResult, NewMessage, StoredMessage } from '../../../src/storage/queue-store.js';

interface ModelMessage {
  message: StoredMessage;
  readonly seq: number;
}

const fail = (failure: 'queueNotFound' | 'messageNotFound' | 'popReceiptMismatch') => ({ ok: false, failure }) as const;

export class QueueModel {
  private readonly queues = new Map<string, ModelMessage[]>();
  private seq = 0;

  createQueue(name: string): void {
    if (!this.queues.has(name)) this.queues.set(name, []);
  }

  deleteQueue(name: string): boolean {
    return this.queues.delete(name);
  }

  /** The messages a get or peek at `nowMs` returns, in order. */
  visible(name: string, nowMs: number): MessageResult<StoredMessage[]> {
    const queue = this.queues.get(name);
    if (queue === undefined) return fail('queueNotFound');
    const live = queue.filter(({ message }) => message.visibleMs <= nowMs && nowMs < message.expiresMs);
    live.sort((a, b) => a.message.visibleMs - b.message.visibleMs || a.seq - b.seq);
    return { ok: true, value: live.map(({ message }) => message) };
  }

  count(name: string, nowMs: number): MessageResult<number> {
    const queue = this.queues.get(name);
    return queue === undefined
      ? fail('queueNotFound')
      : { ok: true, value: queue.filter(({ message }) => nowMs < message.expiresMs).length };
  }

  /** Records a put the engine acknowledged with `popReceipt`. */
  put(name: string, message: NewMessage, popReceipt: string): MessageResult<StoredMessage> {
    const queue = this.queues.get(name);
    if (queue === undefined) return fail('queueNotFound');
    const stored = { ...message, dequeueCount: 0, popReceipt };
    queue.push({ message: stored, seq: this.seq++ });
    return { ok: true, value: stored };
  }

  /** Records a claim of `id` with the engine's new receipt. */
  claim(name: string, id: string, visibleMs: number, popReceipt: string): StoredMessage {
    const entry = this.entry(name, id)!;
    entry.message = { ...entry.message, visibleMs, dequeueCount: entry.message.dequeueCount + 1, popReceipt };
    return entry.message;
  }

  /** Whether a delete or update of `id` with `popReceipt` at `nowMs` applies, or why not. */
  check(name: string, id: string, popReceipt: string, nowMs: number): MessageResult<StoredMessage> {
    if (!this.queues.has(name)) return fail('queueNotFound');
    const entry = this.entry(name, id);
    if (entry === undefined || nowMs >= entry.message.expiresMs) return fail('messageNotFound');
    if (entry.message.popReceipt !== popReceipt) return fail('popReceiptMismatch');
    return { ok: true, value: entry.message };
  }

  delete(name: string, id: string): void {
    const queue = this.queues.get(name)!;
    queue.splice(
      queue.findIndex(({ message }) => message.id === id),
      1,
    );
  }

  update(name: string, id: string, visibleMs: number, text: string | undefined, popReceipt: string): StoredMessage {
    const entry = this.entry(name, id)!;
    entry.message = { ...entry.message, visibleMs, text: text ?? entry.message.text, popReceipt };
    return entry.message;
  }

  clear(name: string): MessageResult<void> {
    const queue = this.queues.get(name);
    if (queue === undefined) return fail('queueNotFound');
    queue.length = 0;
    return { ok: true, value: undefined };
  }

  /** Messages expired at `nowMs`, in every queue (an engine's purge removes at most these). */
  expired(nowMs: number): number {
    let expired = 0;
    for (const queue of this.queues.values())
      expired += queue.filter(({ message }) => nowMs >= message.expiresMs).length;
    return expired;
  }

  /** Every id ever put and still held, for picking operands. */
  ids(name: string): string[] {
    return (this.queues.get(name) ?? []).map(({ message }) => message.id);
  }

  private entry(name: string, id: string): ModelMessage | undefined {
    return this.queues.get(name)?.find(({ message }) => message.id === id);
  }
}
