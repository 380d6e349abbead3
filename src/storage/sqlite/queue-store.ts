// The Queue service's store on the SQLite engine, over the same database as the tables. Writes
// are jobs of the one writer (queue-writer.ts): grouped, fsync-durable before they answer, and run
// one at a time, so claims never overlap. Reads (queues, peek, count) run on a connection of their
// own in autocommit, so each sees every write acknowledged before it started; an in-memory
// database has one connection, which they share with the writer.
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import type {
  MessageClaim,
  MessagePeek,
  MessageResult,
  MessageTarget,
  MessageUpdate,
  NewMessage,
  QueueDepth,
  QueueInfo,
  QueueStore,
  StoredMessage,
} from '../queue-store.js';
import { assertInstant, decodeMetadata, encodeMetadata, storedMessage, type MessageRow } from '../queue-rows.js';
import { messageColumns } from './queue-schema.js';
import { boundLimit } from './schema.js';
import type { QueueWriterApi } from './queue-writer.js';

type Statement = Database.Statement<unknown[], unknown>;

type Query = 'queue' | 'queuesFrom' | 'queuesBetween' | 'acl' | 'count' | 'peek' | 'deepest';

/** Above every character a queue name may hold: the end of a name prefix's range. */
const prefixEnd = '\u{10FFFF}';

export class SqliteQueueStore implements QueueStore {
  private readonly sql: Record<Query, Statement>;

  /** `ownsReader`: `reader` is this store's own connection, closed with it. */
  constructor(
    private readonly reader: Database.Database,
    private readonly writer: QueueWriterApi,
    private readonly ownsReader: boolean,
  ) {
    const prepare = (sql: string): Statement => reader.prepare(sql);
    this.sql = {
      queue: prepare('SELECT id, name, metadata FROM queues WHERE account = ? AND name = ?'),
      queuesFrom: prepare(
        `SELECT name, metadata FROM queues WHERE account = ? AND name >= ? ORDER BY name ${boundLimit()}`,
      ),
      queuesBetween: prepare(
        `SELECT name, metadata FROM queues WHERE account = ? AND name >= ? AND name < ? ORDER BY name ${boundLimit()}`,
      ),
      acl: prepare('SELECT acl FROM queues WHERE account = ? AND name = ?').pluck(),
      count: prepare(
        'SELECT count(*) FROM messages WHERE queue_id = ? AND (expires_ms IS NULL OR expires_ms > ?)',
      ).pluck(),
      deepest: prepare(
        'SELECT q.account, q.name, count(*) AS messages, min(m.inserted_ms) AS oldestInsertedMs, ' +
          'coalesce(max(CASE WHEN m.visible_ms <= @now THEN m.dequeue_count END), 0) AS dequeueCountMax ' +
          'FROM messages m JOIN queues q ON q.id = m.queue_id WHERE (m.expires_ms IS NULL OR m.expires_ms > @now) ' +
          `GROUP BY q.account, q.name ORDER BY messages DESC, q.account, q.name ${boundLimit('@limit')}`,
      ),
      // The queue by its key, then its visibility index from the start (invisible messages lie
      // after `nowMs` and are never read): one statement, one read transaction, for the usual peek.
      peek: prepare(
        `SELECT ${messageColumns.replace(/(\w+)/g, 'm.$1')} FROM queues q JOIN messages m ON m.queue_id = q.id ` +
          'WHERE q.account = ? AND q.name = ? AND m.visible_ms <= ? AND (m.expires_ms IS NULL OR m.expires_ms > ?) ' +
          `ORDER BY m.visible_ms, m.seq ${boundLimit()}`,
      ),
    };
  }

  async createQueue(
    account: string,
    name: string,
    metadata: ReadonlyMap<string, string>,
  ): Promise<{ readonly created: true } | { readonly created: false; readonly existing: QueueInfo }> {
    const outcome = await this.writer.createQueue(account, name, encodeMetadata(metadata));
    return outcome.created
      ? outcome
      : { created: false, existing: { account, name, metadata: decodeMetadata(outcome.metadata) } };
  }

  deleteQueue(account: string, name: string): Promise<boolean> {
    return this.writer.deleteQueue(account, name);
  }

  async getQueue(account: string, name: string): Promise<QueueInfo | undefined> {
    const row = this.sql.queue.get(account, name) as { name: string; metadata: string } | undefined;
    return row && { account, name: row.name, metadata: decodeMetadata(row.metadata) };
  }

  async listQueues(account: string, prefix: string, fromName: string | undefined, limit: number): Promise<QueueInfo[]> {
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    const start = fromName !== undefined && fromName > prefix ? fromName : prefix;
    const rows = (
      prefix === ''
        ? this.sql.queuesFrom.all(account, start, limit)
        : this.sql.queuesBetween.all(account, start, prefix + prefixEnd, limit)
    ) as { name: string; metadata: string }[];
    return rows.map((row) => ({ account, name: row.name, metadata: decodeMetadata(row.metadata) }));
  }

  setQueueMetadata(account: string, name: string, metadata: ReadonlyMap<string, string>): Promise<boolean> {
    return this.writer.setQueueMetadata(account, name, encodeMetadata(metadata));
  }

  async getQueueAcl(account: string, name: string): Promise<MessageResult<string | undefined>> {
    const acl = this.sql.acl.get(account, name) as string | null | undefined;
    return acl === undefined ? { ok: false, failure: 'queueNotFound' } : { ok: true, value: acl ?? undefined };
  }

  async setQueueAcl(account: string, name: string, acl: string | undefined): Promise<MessageResult<void>> {
    const set = await this.writer.setQueueAcl(account, name, acl);
    return set ? { ok: true, value: undefined } : { ok: false, failure: 'queueNotFound' };
  }

  async countMessages(account: string, name: string, nowMs: number): Promise<MessageResult<number>> {
    assertInstant(nowMs, 'nowMs');
    const queueId = this.queueId(account, name);
    if (queueId === undefined) return { ok: false, failure: 'queueNotFound' };
    return { ok: true, value: this.sql.count.get(queueId, nowMs) as number };
  }

  async deepestQueues(nowMs: number, limit: number): Promise<QueueDepth[]> {
    assertInstant(nowMs, 'nowMs');
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a limit is a count');
    return this.sql.deepest.all({ now: nowMs, limit }) as QueueDepth[];
  }

  putMessage(account: string, name: string, message: NewMessage): Promise<MessageResult<StoredMessage>> {
    return this.writer.putMessage(account, name, message);
  }

  getMessages(account: string, name: string, claim: MessageClaim): Promise<MessageResult<StoredMessage[]>> {
    return this.writer.getMessages(account, name, claim);
  }

  async peekMessages(
    account: string,
    name: string,
    { count, nowMs }: MessagePeek,
  ): Promise<MessageResult<StoredMessage[]>> {
    assert(Number.isSafeInteger(count) && count >= 1, 'a peek reads at least one message');
    assertInstant(nowMs, 'nowMs');
    const rows = this.sql.peek.all(account, name, nowMs, nowMs, count) as MessageRow[];
    // Nothing to show: an empty queue, or none.
    if (rows.length === 0 && this.queueId(account, name) === undefined) return { ok: false, failure: 'queueNotFound' };
    return { ok: true, value: rows.map(storedMessage) };
  }

  deleteMessage(account: string, name: string, target: MessageTarget): Promise<MessageResult<void>> {
    return this.writer.deleteMessage(account, name, target);
  }

  updateMessage(account: string, name: string, update: MessageUpdate): Promise<MessageResult<StoredMessage>> {
    return this.writer.updateMessage(account, name, update);
  }

  clearMessages(account: string, name: string): Promise<MessageResult<void>> {
    return this.writer.clearMessages(account, name);
  }

  purgeExpired(nowMs: number, limit: number): Promise<number> {
    return this.writer.purgeExpired(nowMs, limit);
  }

  /** Closes this store's own read connection; the writer closes with the table store. */
  close(): void {
    if (this.ownsReader && this.reader.open) this.reader.close();
  }

  private queueId(account: string, name: string): number | undefined {
    return (this.sql.queue.get(account, name) as { id: number } | undefined)?.id;
  }
}
