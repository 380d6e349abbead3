// The Queue service's writes in the SQLite engine: jobs of the one SqliteWriter (writer.ts), so
// they share its group commits (one transaction and one fsync for every job queued together) and
// are durable before they answer. Every claim is a job, and the writer runs one job at a time:
// two gets never claim the same message.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import type {
  MessageClaim,
  MessageFailure,
  MessageResult,
  MessageTarget,
  MessageUpdate,
  NewMessage,
  QueueStore,
  StoredMessage,
} from '../queue-store.js';
import {
  assertClaim,
  assertInstant,
  newPopReceipt,
  storedExpiry,
  storedMessage,
  type MessageRow,
} from '../queue-rows.js';
import { messageColumns } from './queue-schema.js';
import { boundLimit } from './schema.js';

/** The store's writes the writer does as they are (queue-store.ts passes them on). */
export const queueStoreWrites = [
  'deleteQueue',
  'putMessage',
  'getMessages',
  'deleteMessage',
  'updateMessage',
  'clearMessages',
  'purgeExpired',
] as const satisfies readonly (keyof QueueStore)[];

/** The queue jobs, as the store (queue-store.ts) calls them on the writer, here or across threads. */
export interface QueueWriterApi extends Pick<QueueStore, (typeof queueStoreWrites)[number]> {
  /** `metadata` in its stored form (queue-rows.ts); an existing queue answers its own. */
  createQueue(
    account: string,
    name: string,
    metadata: string,
  ): Promise<{ created: true } | { created: false; metadata: string }>;
  setQueueMetadata(account: string, name: string, metadata: string): Promise<boolean>;
  setQueueAcl(account: string, name: string, acl: string | undefined): Promise<boolean>;
}

/** The method names, for the writer thread's message handlers (writer-worker.ts, writer-client.ts). */
export const queueWriterMethods = [
  ...queueStoreWrites,
  'createQueue',
  'setQueueMetadata',
  'setQueueAcl',
] as const satisfies readonly (keyof QueueWriterApi)[];

/** The writer thread's handler name of a queue job (apart from the table jobs' names). */
export function queueCallName(method: string): string {
  return `queue.${method}`;
}

/**
 * Runs one job in the writer's next group commit. A queue job decides before it writes, so it
 * never needs undoing and runs without a savepoint; one that throws fails its whole group (writer.ts).
 */
export type RunJob = <T>(job: () => T) => Promise<T>;

type Statement = Database.Statement<unknown[], unknown>;
type Row = MessageRow & { readonly seq: number };

/** Visible messages a claim reads per statement beyond those it asks for (expired ones it removes). */
const claimReadSlack = 16;
/**
 * Expired messages one claim removes at most: the writer runs one job at a time, so a get that
 * meets a long run of them leaves the rest to the periodic sweep (sweep.ts) and steps over
 * them, rather than holding every other write behind it.
 */
const claimRemovesMax = 1000;
const claimReadMax = 1024;

const failed = (failure: MessageFailure) => ({ ok: false, failure }) as const;

export class SqliteQueueWriter implements QueueWriterApi {
  private readonly sql: Record<
    | 'queueId'
    | 'queueMetadata'
    | 'nextQueueId'
    | 'insertQueue'
    | 'deleteQueueRow'
    | 'deleteQueueMessages'
    | 'updateMetadata'
    | 'updateAcl'
    | 'messageById'
    | 'insertMessage'
    | 'visibleAfter'
    | 'claim'
    | 'update'
    | 'deleteBySeq'
    | 'purge',
    Statement
  >;

  constructor(
    db: Database.Database,
    private readonly run: RunJob,
  ) {
    const prepare = (sql: string): Statement => db.prepare(sql);
    this.sql = {
      queueId: prepare('SELECT id FROM queues WHERE account = ? AND name = ?').pluck(),
      queueMetadata: prepare('SELECT metadata FROM queues WHERE account = ? AND name = ?').pluck(),
      nextQueueId: prepare('SELECT coalesce(max(id), 0) + 1 FROM queues').pluck(),
      insertQueue: prepare('INSERT INTO queues (account, name, id, metadata) VALUES (?, ?, ?, ?)'),
      deleteQueueRow: prepare('DELETE FROM queues WHERE id = ?'),
      deleteQueueMessages: prepare('DELETE FROM messages WHERE queue_id = ?'),
      updateMetadata: prepare('UPDATE queues SET metadata = ? WHERE account = ? AND name = ?'),
      updateAcl: prepare('UPDATE queues SET acl = ? WHERE account = ? AND name = ?'),
      messageById: prepare(`SELECT seq, ${messageColumns} FROM messages WHERE queue_id = ? AND id = ?`),
      insertMessage: prepare(
        'INSERT INTO messages (queue_id, id, text, inserted_ms, expires_ms, visible_ms, dequeue_count, pop_receipt) ' +
          'VALUES (?, ?, ?, ?, ?, ?, 0, ?)',
      ),
      // Keyset walk of the visibility index from (visible_ms, seq) on: a claimed message that is
      // visible again at once (visibleMs <= nowMs) is not read twice.
      visibleAfter: prepare(
        `SELECT seq, ${messageColumns} FROM messages ` +
          `WHERE queue_id = ? AND visible_ms <= ? AND (visible_ms, seq) > (?, ?) ORDER BY visible_ms, seq ${boundLimit()}`,
      ),
      claim: prepare(
        'UPDATE messages SET visible_ms = ?, dequeue_count = dequeue_count + 1, pop_receipt = ? WHERE seq = ?',
      ),
      update: prepare('UPDATE messages SET visible_ms = ?, pop_receipt = ?, text = ? WHERE seq = ?'),
      deleteBySeq: prepare('DELETE FROM messages WHERE seq = ?'),
      purge: prepare(
        'DELETE FROM messages WHERE seq IN ' +
          `(SELECT seq FROM messages WHERE expires_ms IS NOT NULL AND expires_ms <= ? ${boundLimit()})`,
      ),
    };
  }

  createQueue(
    account: string,
    name: string,
    metadata: string,
  ): Promise<{ created: true } | { created: false; metadata: string }> {
    return this.run<{ created: true } | { created: false; metadata: string }>(() => {
      const existing = this.sql.queueMetadata.get(account, name) as string | undefined;
      if (existing !== undefined) return { created: false, metadata: existing };
      this.sql.insertQueue.run(account, name, this.sql.nextQueueId.get(), metadata);
      return { created: true };
    });
  }

  deleteQueue(account: string, name: string): Promise<boolean> {
    return this.run(() => {
      const id = this.queueId(account, name);
      if (id === undefined) return false;
      this.sql.deleteQueueMessages.run(id);
      this.sql.deleteQueueRow.run(id);
      return true;
    });
  }

  setQueueMetadata(account: string, name: string, metadata: string): Promise<boolean> {
    return this.run(() => this.sql.updateMetadata.run(metadata, account, name).changes === 1);
  }

  setQueueAcl(account: string, name: string, acl: string | undefined): Promise<boolean> {
    return this.run(() => this.sql.updateAcl.run(acl ?? null, account, name).changes === 1);
  }

  putMessage(account: string, name: string, message: NewMessage): Promise<MessageResult<StoredMessage>> {
    assertInstant(message.insertedMs, 'insertedMs');
    assertInstant(message.visibleMs, 'visibleMs');
    const expires = storedExpiry(message.expiresMs);
    return this.run<MessageResult<StoredMessage>>(() => {
      const queueId = this.queueId(account, name);
      if (queueId === undefined) return failed('queueNotFound');
      // The service makes ids GUIDs: a repeat is a bug of the caller, refused before it writes.
      assert(
        this.sql.messageById.get(queueId, message.id) === undefined,
        `message id ${message.id} is already in the queue`,
      );
      const popReceipt = newPopReceipt();
      const { id, text, insertedMs, visibleMs } = message;
      this.sql.insertMessage.run(queueId, id, text, insertedMs, expires, visibleMs, popReceipt);
      return { ok: true, value: { ...message, dequeueCount: 0, popReceipt } };
    });
  }

  getMessages(account: string, name: string, claim: MessageClaim): Promise<MessageResult<StoredMessage[]>> {
    assertClaim(claim);
    const { count, nowMs, visibleMs } = claim;
    return this.run<MessageResult<StoredMessage[]>>(() => {
      const queueId = this.queueId(account, name);
      if (queueId === undefined) return failed('queueNotFound');
      return { ok: true, value: this.claim(queueId, count, nowMs, visibleMs) };
    });
  }

  /**
   * Claims the first `count` visible, unexpired messages in (visible_ms, seq) order. Expired
   * messages it passes are removed on the way (up to claimRemovesMax), so no later get reads them.
   */
  private claim(queueId: number, count: number, nowMs: number, visibleMs: number): StoredMessage[] {
    const claimed: StoredMessage[] = [];
    let after: [number, number] = [Number.MIN_SAFE_INTEGER, 0];
    let removed = 0;
    // Read further at each step over expired messages, up to claimReadMax a statement.
    for (let slack = claimReadSlack; ; slack = Math.min(slack * 2, claimReadMax)) {
      const limit = count - claimed.length + slack;
      const rows = this.sql.visibleAfter.all(queueId, nowMs, ...after, limit) as Row[];
      for (const row of rows) {
        if (row.expires_ms !== null && Number(row.expires_ms) <= nowMs) {
          if (removed++ < claimRemovesMax) this.sql.deleteBySeq.run(row.seq);
        } else if (claimed.length < count) {
          const popReceipt = newPopReceipt();
          this.sql.claim.run(visibleMs, popReceipt, row.seq);
          const message = storedMessage(row);
          claimed.push({ ...message, visibleMs, dequeueCount: message.dequeueCount + 1, popReceipt });
        }
      }
      const last = rows.at(-1);
      if (claimed.length === count || last === undefined || rows.length < limit) return claimed;
      after = [Number(last.visible_ms), last.seq];
    }
  }

  deleteMessage(account: string, name: string, { id, popReceipt, nowMs }: MessageTarget): Promise<MessageResult<void>> {
    assertInstant(nowMs, 'nowMs');
    return this.run<MessageResult<void>>(() => {
      const found = this.currentMessage(account, name, id, popReceipt, nowMs);
      if (!found.ok) return failed(found.failure);
      this.sql.deleteBySeq.run(found.value.seq);
      return { ok: true, value: undefined };
    });
  }

  updateMessage(
    account: string,
    name: string,
    { id, popReceipt, nowMs, visibleMs, text }: MessageUpdate,
  ): Promise<MessageResult<StoredMessage>> {
    assertInstant(nowMs, 'nowMs');
    assertInstant(visibleMs, 'visibleMs');
    return this.run<MessageResult<StoredMessage>>(() => {
      const found = this.currentMessage(account, name, id, popReceipt, nowMs);
      if (!found.ok) return failed(found.failure);
      const row = found.value;
      const next = { ...storedMessage(row), visibleMs, popReceipt: newPopReceipt(), text: text ?? row.text };
      this.sql.update.run(visibleMs, next.popReceipt, next.text, row.seq);
      return { ok: true, value: next };
    });
  }

  clearMessages(account: string, name: string): Promise<MessageResult<void>> {
    return this.run<MessageResult<void>>(() => {
      const queueId = this.queueId(account, name);
      if (queueId === undefined) return failed('queueNotFound');
      this.sql.deleteQueueMessages.run(queueId);
      return { ok: true, value: undefined };
    });
  }

  purgeExpired(nowMs: number, limit: number): Promise<number> {
    assertInstant(nowMs, 'nowMs');
    assert(Number.isSafeInteger(limit) && limit >= 1, 'a purge removes at least one message');
    return this.run(() => this.sql.purge.run(nowMs, limit).changes);
  }

  /** The message if it is there, unexpired at `nowMs`, and `popReceipt` is its current one. */
  private currentMessage(
    account: string,
    name: string,
    id: string,
    popReceipt: string,
    nowMs: number,
  ): MessageResult<Row> {
    const queueId = this.queueId(account, name);
    if (queueId === undefined) return { ok: false, failure: 'queueNotFound' };
    const row = this.sql.messageById.get(queueId, id) as Row | undefined;
    if (row === undefined || (row.expires_ms !== null && Number(row.expires_ms) <= nowMs))
      return { ok: false, failure: 'messageNotFound' };
    if (row.pop_receipt !== popReceipt) return { ok: false, failure: 'popReceiptMismatch' };
    return { ok: true, value: row };
  }

  private queueId(account: string, name: string): number | undefined {
    return this.sql.queueId.get(account, name) as number | undefined;
  }
}
