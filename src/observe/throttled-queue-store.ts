// The queue store as the throttle sees it (`--throttle`): every message operation is admitted
// before it reaches the engine, against the account's bucket and one bucket per queue. The Queue
// service's targets match the Table service's the throttle already holds: 2,000 messages per
// second per queue, 20,000 per account
// (https://learn.microsoft.com/azure/storage/queues/scalability-targets), so a queue takes a
// partition's bucket and its rate. A get or peek costs the messages it asks for.
import type {
  MessageClaim,
  MessagePeek,
  MessageResult,
  MessageTarget,
  MessageUpdate,
  NewMessage,
  QueueInfo,
  QueueStore,
  StoredMessage,
} from '../storage/queue-store.js';
import type { Throttle } from './throttle.js';

/** The throttle's table name for queues: \u0001 is in no table name, so no table shares a bucket. */
const queueScope = '\u0001queue';

export class ThrottledQueueStore implements QueueStore {
  constructor(
    private readonly engine: QueueStore,
    private readonly throttle: Throttle,
  ) {}

  private admit(account: string, queue: string, messages: number): void {
    this.throttle.admit(account, queueScope, queue, messages);
  }

  putMessage(account: string, name: string, message: NewMessage): Promise<MessageResult<StoredMessage>> {
    this.admit(account, name, 1);
    return this.engine.putMessage(account, name, message);
  }

  getMessages(account: string, name: string, claim: MessageClaim) {
    this.admit(account, name, claim.count);
    return this.engine.getMessages(account, name, claim);
  }

  peekMessages(account: string, name: string, peek: MessagePeek) {
    this.admit(account, name, peek.count);
    return this.engine.peekMessages(account, name, peek);
  }

  deleteMessage(account: string, name: string, target: MessageTarget) {
    this.admit(account, name, 1);
    return this.engine.deleteMessage(account, name, target);
  }

  updateMessage(account: string, name: string, update: MessageUpdate) {
    this.admit(account, name, 1);
    return this.engine.updateMessage(account, name, update);
  }

  // Queue-level operations pass straight through.
  createQueue(account: string, name: string, metadata: ReadonlyMap<string, string>) {
    return this.engine.createQueue(account, name, metadata);
  }
  deleteQueue(account: string, name: string) {
    return this.engine.deleteQueue(account, name);
  }
  getQueue(account: string, name: string): Promise<QueueInfo | undefined> {
    return this.engine.getQueue(account, name);
  }
  listQueues(account: string, prefix: string, fromName: string | undefined, limit: number) {
    return this.engine.listQueues(account, prefix, fromName, limit);
  }
  setQueueMetadata(account: string, name: string, metadata: ReadonlyMap<string, string>) {
    return this.engine.setQueueMetadata(account, name, metadata);
  }
  getQueueAcl(account: string, name: string) {
    return this.engine.getQueueAcl(account, name);
  }
  setQueueAcl(account: string, name: string, acl: string | undefined) {
    return this.engine.setQueueAcl(account, name, acl);
  }
  deepestQueues(nowMs: number, limit: number) {
    return this.engine.deepestQueues(nowMs, limit);
  }
  countMessages(account: string, name: string, nowMs: number) {
    return this.engine.countMessages(account, name, nowMs);
  }
  clearMessages(account: string, name: string) {
    return this.engine.clearMessages(account, name);
  }
  purgeExpired(nowMs: number, limit: number) {
    return this.engine.purgeExpired(nowMs, limit);
  }
}
