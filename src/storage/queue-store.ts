// The storage contract of the Queue service, beside the Table service's (table-store.ts). Every engine
// implements it over the same database as its tables, and proves it with the queue conformance
// suite (tests/storage/queue-conformance/). It knows queues, messages and instants in milliseconds;
// it knows nothing of HTTP, XML, base64 or the service's limits (the service checks those first).
//
// Time is passed in, never read by the store: the service owns the clock (tests inject one), so
// visibility and expiry are decided against `nowMs` the caller gives. Every instant is a whole
// number of milliseconds (a safe integer; the engines keep 64-bit integers and refuse fractions);
// only `expiresMs` may also be Number.POSITIVE_INFINITY.

/** A queue as stored. Names are lower-case (the service refuses others), so lookups are exact. */
export interface QueueInfo {
  readonly account: string;
  readonly name: string;
  /** User metadata, names as given (the service compares them case-insensitively). */
  readonly metadata: ReadonlyMap<string, string>;
}

/** A message as stored. Instants are milliseconds since the Unix epoch. */
export interface StoredMessage {
  /** Opaque, unique within the queue (the service makes it a GUID). */
  readonly id: string;
  readonly text: string;
  readonly insertedMs: number;
  /** Never returned at or after this instant; Number.POSITIVE_INFINITY: never expires. */
  readonly expiresMs: number;
  /** Invisible to get and peek before this instant. */
  readonly visibleMs: number;
  /** Times a get has returned it. */
  readonly dequeueCount: number;
  /** Valid for delete and update until the next get or update of this message. */
  readonly popReceipt: string;
}

/** A new message; the store gives it its first pop receipt and dequeue count 0. */
export interface NewMessage {
  readonly id: string;
  readonly text: string;
  readonly insertedMs: number;
  readonly expiresMs: number;
  readonly visibleMs: number;
}

/** Why a message operation did not apply. */
/** Get Messages: how many to claim at `nowMs`, and until when they stay invisible. */
export interface MessageClaim {
  readonly count: number;
  readonly nowMs: number;
  readonly visibleMs: number;
}

/** Peek Messages: how many to read, as of `nowMs`. */
export interface MessagePeek {
  readonly count: number;
  readonly nowMs: number;
}

/** One message by its current pop receipt, as of `nowMs` (Delete Message). */
export interface MessageTarget {
  readonly id: string;
  readonly popReceipt: string;
  readonly nowMs: number;
}

/** Update Message: the target, invisible until `visibleMs`, its text replaced when `text` is given. */
export interface MessageUpdate extends MessageTarget {
  readonly visibleMs: number;
  readonly text: string | undefined;
}

export type MessageFailure = 'queueNotFound' | 'messageNotFound' | 'popReceiptMismatch';

export type MessageResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: MessageFailure };

/** How deep a queue is at an instant: what the metrics and insights report (QueueStore.deepestQueues). */
export interface QueueDepth {
  readonly account: string;
  readonly name: string;
  /** Messages not expired, visible or not (as countMessages counts them); at least 1. */
  readonly messages: number;
  /** When the earliest inserted of those messages was inserted. */
  readonly oldestInsertedMs: number;
  /** The highest dequeue count among the visible ones; 0 when none is visible. */
  readonly dequeueCountMax: number;
}

export interface QueueStore {
  /**
   * Creates the queue with this metadata unless it exists; when it exists, answers its stored
   * metadata so the service can tell an identical create (204) from a conflicting one (409).
   */
  createQueue(
    account: string,
    name: string,
    metadata: ReadonlyMap<string, string>,
  ): Promise<{ readonly created: true } | { readonly created: false; readonly existing: QueueInfo }>;
  /** Deletes the queue, its messages and its settings; false if there was none. */
  deleteQueue(account: string, name: string): Promise<boolean>;
  getQueue(account: string, name: string): Promise<QueueInfo | undefined>;
  /** Queues ordered by name, from the first whose name is >= `fromName`, with the prefix. */
  listQueues(account: string, prefix: string, fromName: string | undefined, limit: number): Promise<QueueInfo[]>;
  /** Replaces the queue's metadata; false if there is no queue. */
  setQueueMetadata(account: string, name: string, metadata: ReadonlyMap<string, string>): Promise<boolean>;
  /** The queue's stored access policies as the service encoded them; undefined: none set. */
  getQueueAcl(account: string, name: string): Promise<MessageResult<string | undefined>>;
  setQueueAcl(account: string, name: string, acl: string | undefined): Promise<MessageResult<void>>;

  /** Messages not expired at `nowMs`, visible or not (the approximate count the service reports). */
  countMessages(account: string, name: string, nowMs: number): Promise<MessageResult<number>>;

  /**
   * Read-only, one query: the `limit` queues of every account with the most messages unexpired at
   * `nowMs`, deepest first (ties in account and name order). Queues without such messages are left out.
   */
  deepestQueues(nowMs: number, limit: number): Promise<QueueDepth[]>;

  /**
   * Durable before it resolves. An id already in the queue is a bug of the caller (the service
   * makes them GUIDs): the store throws.
   */
  putMessage(account: string, name: string, message: NewMessage): Promise<MessageResult<StoredMessage>>;
  /**
   * Claims up to `count` messages visible and unexpired at `nowMs`, atomically: each is made
   * invisible until `visibleMs`, its dequeue count raised by one and given a new pop receipt.
   * Two concurrent calls, in any processes, never claim the same message. Order: earliest visible
   * first, then insertion order. A claim may pass over messages another claim holds at that
   * moment (PostgreSQL: SKIP LOCKED), so it can return fewer than `count` while more are visible.
   */
  getMessages(account: string, name: string, claim: MessageClaim): Promise<MessageResult<StoredMessage[]>>;
  /** Up to `count` messages visible and unexpired at `nowMs`, in get order; changes nothing. */
  peekMessages(account: string, name: string, peek: MessagePeek): Promise<MessageResult<StoredMessage[]>>;
  /**
   * Deletes the message if `popReceipt` is its current one. Durable before it resolves. A message
   * expired at `nowMs` is messageNotFound, whatever the receipt.
   */
  deleteMessage(account: string, name: string, target: MessageTarget): Promise<MessageResult<void>>;
  /**
   * If `popReceipt` is current: makes the message invisible until `visibleMs`, replaces its text
   * when `text` is given, and gives it a new pop receipt (its dequeue count is unchanged).
   */
  updateMessage(account: string, name: string, update: MessageUpdate): Promise<MessageResult<StoredMessage>>;
  /** Deletes every message of the queue. */
  clearMessages(account: string, name: string): Promise<MessageResult<void>>;
  /** Removes up to `limit` messages expired at `nowMs` (any queue); answers how many it removed. */
  purgeExpired(nowMs: number, limit: number): Promise<number>;
}
