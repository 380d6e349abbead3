// The Queue service's store on the PostgreSQL engine (tables: queue-schema.ts), over the table
// store's pool: any number of Cerulean processes over one database. Every operation is one
// statement, its own transaction, durable before it answers (synchronous_commit is on).
//
// A get claims with FOR UPDATE SKIP LOCKED: a message another get (in any process) is claiming is
// skipped, never waited for nor returned twice; and a row that changed after the statement
// began is checked again before it is claimed. Delete and update name the pop receipt in their
// WHERE clause, so a claim or update that changed it first makes them miss; a miss is explained
// (queue, message, receipt) by a second read.
import assert from 'node:assert/strict';
import type pg from 'pg';
import type {
  MessageClaim,
  MessageFailure,
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
import {
  assertClaim,
  assertInstant,
  decodeMetadata,
  encodeMetadata,
  newPopReceipt,
  storedExpiry,
  storedMessage,
  type MessageRow,
} from '../queue-rows.js';
import { azureError, isMissingTable } from './failures.js';
import { schemaName as s } from './schema.js';

const columns = (alias: string): string =>
  ['id', 'text', 'inserted_ms', 'expires_ms', 'visible_ms', 'dequeue_count', 'pop_receipt']
    .map((c) => `${alias}.${c}`)
    .join(', ');

const unexpired = (alias: string, nowParam: string): string =>
  `(${alias}.expires_ms IS NULL OR ${alias}.expires_ms > ${nowParam})`;

const queueIdSql = `SELECT id FROM ${s}.queues WHERE account = $1 AND name = $2`;

/** Attempts of a create that met a queue deleted between its insert and its read. */
const createAttemptsMax = 5;

/** Statement names by text, the same in every store of the process (a name always means one text). */
const statementNames = new Map<string, string>();

/** bigint columns arrive as text. */
interface DepthRow {
  account: string;
  name: string;
  messages: string;
  oldest: string;
  dequeues: string | number;
}

const depthOf = (row: DepthRow): QueueDepth => ({
  account: row.account,
  name: row.name,
  messages: Number(row.messages),
  oldestInsertedMs: Number(row.oldest),
  dequeueCountMax: Number(row.dequeues),
});

const failed = (failure: MessageFailure) => ({ ok: false, failure }) as const;

export class PostgresQueueStore implements QueueStore {
  constructor(private readonly pool: pg.Pool) {}

  async createQueue(
    account: string,
    name: string,
    metadata: ReadonlyMap<string, string>,
  ): Promise<{ readonly created: true } | { readonly created: false; readonly existing: QueueInfo }> {
    for (let attempt = 1; ; attempt++) {
      const inserted = await this.query(
        `INSERT INTO ${s}.queues (account, name, metadata) VALUES ($1, $2, $3) ON CONFLICT (account, name) DO NOTHING`,
        [account, name, encodeMetadata(metadata)],
      );
      if (inserted.rowCount === 1) return { created: true };
      const existing = await this.getQueue(account, name);
      if (existing !== undefined) return { created: false, existing };
      assert(attempt < createAttemptsMax, 'the queue was deleted under every attempt to create it');
    }
  }

  async deleteQueue(account: string, name: string): Promise<boolean> {
    const { rowCount } = await this.query(`DELETE FROM ${s}.queues WHERE account = $1 AND name = $2`, [account, name]);
    return rowCount === 1;
  }

  async getQueue(account: string, name: string): Promise<QueueInfo | undefined> {
    const { rows } = await this.query<{ metadata: string }>(
      `SELECT metadata FROM ${s}.queues WHERE account = $1 AND name = $2`,
      [account, name],
    );
    return rows[0] && { account, name, metadata: decodeMetadata(rows[0].metadata) };
  }

  async listQueues(account: string, prefix: string, fromName: string | undefined, limit: number): Promise<QueueInfo[]> {
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a list limit is a count');
    const start = fromName !== undefined && fromName > prefix ? fromName : prefix;
    // The prefix's range ends before the prefix followed by the largest character.
    const { rows } = await this.query<{ name: string; metadata: string }>(
      `SELECT name, metadata FROM ${s}.queues WHERE account = $1 AND name >= $2 AND ($3::text IS NULL OR name < $3) ` +
        'ORDER BY name LIMIT $4',
      [account, start, prefix === '' ? null : `${prefix}\u{10FFFF}`, limit],
    );
    return rows.map((row) => ({ account, name: row.name, metadata: decodeMetadata(row.metadata) }));
  }

  async setQueueMetadata(account: string, name: string, metadata: ReadonlyMap<string, string>): Promise<boolean> {
    const { rowCount } = await this.query(`UPDATE ${s}.queues SET metadata = $3 WHERE account = $1 AND name = $2`, [
      account,
      name,
      encodeMetadata(metadata),
    ]);
    return rowCount === 1;
  }

  async getQueueAcl(account: string, name: string): Promise<MessageResult<string | undefined>> {
    const { rows } = await this.query<{ acl: string | null }>(
      `SELECT acl FROM ${s}.queues WHERE account = $1 AND name = $2`,
      [account, name],
    );
    return rows[0] === undefined ? failed('queueNotFound') : { ok: true, value: rows[0].acl ?? undefined };
  }

  async setQueueAcl(account: string, name: string, acl: string | undefined): Promise<MessageResult<void>> {
    const { rowCount } = await this.query(`UPDATE ${s}.queues SET acl = $3 WHERE account = $1 AND name = $2`, [
      account,
      name,
      acl ?? null,
    ]);
    return rowCount === 1 ? { ok: true, value: undefined } : failed('queueNotFound');
  }

  async countMessages(account: string, name: string, nowMs: number): Promise<MessageResult<number>> {
    assertInstant(nowMs, 'nowMs');
    const { rows } = await this.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM ${s}.messages m WHERE m.queue_id = q.id AND ${unexpired('m', '$3')}) AS n ` +
        `FROM ${s}.queues q WHERE q.account = $1 AND q.name = $2`,
      [account, name, nowMs],
    );
    return rows[0] === undefined ? failed('queueNotFound') : { ok: true, value: Number(rows[0].n) };
  }

  async deepestQueues(nowMs: number, limit: number): Promise<QueueDepth[]> {
    assertInstant(nowMs, 'nowMs');
    assert(Number.isSafeInteger(limit) && limit >= 0, 'a limit is a count');
    const { rows } = await this.query<DepthRow>(
      'SELECT q.account, q.name, count(*) AS messages, min(m.inserted_ms) AS oldest, ' +
        'coalesce(max(m.dequeue_count) FILTER (WHERE m.visible_ms <= $1), 0) AS dequeues ' +
        `FROM ${s}.messages m JOIN ${s}.queues q ON q.id = m.queue_id WHERE ${unexpired('m', '$1')} ` +
        'GROUP BY q.account, q.name ORDER BY messages DESC, q.account, q.name LIMIT $2',
      [nowMs, limit],
    );
    return rows.map(depthOf);
  }

  async putMessage(account: string, name: string, message: NewMessage): Promise<MessageResult<StoredMessage>> {
    assertInstant(message.insertedMs, 'insertedMs');
    assertInstant(message.visibleMs, 'visibleMs');
    const popReceipt = newPopReceipt();
    const { id, text, insertedMs, visibleMs } = message;
    try {
      const { rowCount } = await this.rawQuery(
        `INSERT INTO ${s}.messages (queue_id, id, text, inserted_ms, expires_ms, visible_ms, pop_receipt) ` +
          `SELECT q.id, $3, $4, $5, $6, $7, $8 FROM ${s}.queues q WHERE q.account = $1 AND q.name = $2`,
        [account, name, id, text, insertedMs, storedExpiry(message.expiresMs), visibleMs, popReceipt],
      );
      if (rowCount !== 1) return failed('queueNotFound');
    } catch (error) {
      // The queue was deleted between finding it and inserting (its foreign key).
      if (isMissingTable(error)) return failed('queueNotFound');
      throw azureError(error);
    }
    return { ok: true, value: { ...message, dequeueCount: 0, popReceipt } };
  }

  async getMessages(account: string, name: string, claim: MessageClaim): Promise<MessageResult<StoredMessage[]>> {
    assertClaim(claim);
    const { count, nowMs, visibleMs } = claim;
    const { rows } = await this.query<MessageRow & { was_visible_ms: string; seq: string }>(
      `WITH picked AS (
         SELECT m.queue_id, m.id, m.visible_ms AS was_visible_ms FROM ${s}.messages m
         WHERE m.queue_id = (${queueIdSql}) AND m.visible_ms <= $3 AND ${unexpired('m', '$3')}
         ORDER BY m.visible_ms, m.seq LIMIT $4
         FOR UPDATE SKIP LOCKED
       )
       UPDATE ${s}.messages m
       SET visible_ms = $5, dequeue_count = m.dequeue_count + 1, pop_receipt = gen_random_uuid()::text
       FROM picked WHERE m.queue_id = picked.queue_id AND m.id = picked.id
       RETURNING ${columns('m')}, picked.was_visible_ms, m.seq`,
      [account, name, nowMs, count, visibleMs],
    );
    if (rows.length === 0 && !(await this.queueExists(account, name))) return failed('queueNotFound');
    // RETURNING keeps no order: the claim's own is (visible_ms before the claim, seq).
    rows.sort((a, b) => Number(a.was_visible_ms) - Number(b.was_visible_ms) || Number(a.seq) - Number(b.seq));
    return { ok: true, value: rows.map(storedMessage) };
  }

  async peekMessages(
    account: string,
    name: string,
    { count, nowMs }: MessagePeek,
  ): Promise<MessageResult<StoredMessage[]>> {
    assert(Number.isSafeInteger(count) && count >= 1, 'a peek reads at least one message');
    assertInstant(nowMs, 'nowMs');
    // One row with null message columns: the queue without a visible message; no row: no queue.
    const { rows } = await this.query<MessageRow | { id: null }>(
      `SELECT ${columns('m')} FROM ${s}.queues q LEFT JOIN LATERAL (
         SELECT * FROM ${s}.messages m WHERE m.queue_id = q.id AND m.visible_ms <= $3 AND ${unexpired('m', '$3')}
         ORDER BY m.visible_ms, m.seq LIMIT $4
       ) m ON true
       WHERE q.account = $1 AND q.name = $2
       ORDER BY m.visible_ms, m.seq`,
      [account, name, nowMs, count],
    );
    if (rows.length === 0) return failed('queueNotFound');
    return { ok: true, value: rows.filter((row): row is MessageRow => row.id !== null).map(storedMessage) };
  }

  async deleteMessage(
    account: string,
    name: string,
    { id, popReceipt, nowMs }: MessageTarget,
  ): Promise<MessageResult<void>> {
    assertInstant(nowMs, 'nowMs');
    const { rowCount } = await this.query(
      `DELETE FROM ${s}.messages m USING ${s}.queues q
       WHERE q.account = $1 AND q.name = $2 AND m.queue_id = q.id AND m.id = $3 AND m.pop_receipt = $4
         AND ${unexpired('m', '$5')}`,
      [account, name, id, popReceipt, nowMs],
    );
    return rowCount === 1 ? { ok: true, value: undefined } : this.whyMissed(account, name, id, nowMs);
  }

  async updateMessage(
    account: string,
    name: string,
    { id, popReceipt, nowMs, visibleMs, text }: MessageUpdate,
  ): Promise<MessageResult<StoredMessage>> {
    assertInstant(nowMs, 'nowMs');
    assertInstant(visibleMs, 'visibleMs');
    const { rows } = await this.query<MessageRow>(
      `UPDATE ${s}.messages m SET visible_ms = $6, pop_receipt = $7, text = coalesce($8, m.text) FROM ${s}.queues q
       WHERE q.account = $1 AND q.name = $2 AND m.queue_id = q.id AND m.id = $3 AND m.pop_receipt = $4
         AND ${unexpired('m', '$5')}
       RETURNING ${columns('m')}`,
      [account, name, id, popReceipt, nowMs, visibleMs, newPopReceipt(), text ?? null],
    );
    return rows[0] === undefined
      ? this.whyMissed(account, name, id, nowMs)
      : { ok: true, value: storedMessage(rows[0]) };
  }

  async clearMessages(account: string, name: string): Promise<MessageResult<void>> {
    const { rows } = await this.query<{ queues: string }>(
      `WITH q AS (${queueIdSql}), gone AS (DELETE FROM ${s}.messages WHERE queue_id IN (SELECT id FROM q))
       SELECT count(*) AS queues FROM q`,
      [account, name],
    );
    return Number(rows[0]!.queues) === 1 ? { ok: true, value: undefined } : failed('queueNotFound');
  }

  async purgeExpired(nowMs: number, limit: number): Promise<number> {
    assertInstant(nowMs, 'nowMs');
    assert(Number.isSafeInteger(limit) && limit >= 1, 'a purge removes at least one message');
    // SKIP LOCKED: rows a get, delete or update holds are left to the next purge.
    const { rowCount } = await this.query(
      `DELETE FROM ${s}.messages m USING (
         SELECT queue_id, id FROM ${s}.messages WHERE expires_ms IS NOT NULL AND expires_ms <= $1
         ORDER BY expires_ms LIMIT $2 FOR UPDATE SKIP LOCKED
       ) e WHERE m.queue_id = e.queue_id AND m.id = e.id`,
      [nowMs, limit],
    );
    return rowCount ?? 0;
  }

  /** Nothing of its own to close: the pool is the table store's, closed with it. */
  close(): void {}

  /** Why a delete or update of `id` applied to no row, as of now. */
  private async whyMissed(account: string, name: string, id: string, nowMs: number): Promise<MessageResult<never>> {
    const { rows } = await this.query<{ live: boolean | null }>(
      `SELECT (SELECT ${unexpired('m', '$4')} FROM ${s}.messages m WHERE m.queue_id = q.id AND m.id = $3) AS live
       FROM ${s}.queues q WHERE q.account = $1 AND q.name = $2`,
      [account, name, id, nowMs],
    );
    if (rows[0] === undefined) return failed('queueNotFound');
    return failed(rows[0].live === true ? 'popReceiptMismatch' : 'messageNotFound');
  }

  private async queueExists(account: string, name: string): Promise<boolean> {
    return (await this.query(queueIdSql, [account, name])).rowCount === 1;
  }

  private async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<Row>> {
    try {
      return await this.rawQuery<Row>(text, values);
    } catch (error) {
      throw azureError(error);
    }
  }

  /**
   * A named statement, so each connection plans it once (planning costs as much as running most
   * of these); failing with the database's own error.
   */
  private rawQuery<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[]) {
    let name = statementNames.get(text);
    if (name === undefined) {
      name = `queue_${statementNames.size}`;
      statementNames.set(text, name);
    }
    return this.pool.query<Row>({ name, text, values });
  }
}
