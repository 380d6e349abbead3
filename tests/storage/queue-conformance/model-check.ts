// The queue model test: seeded random sequences of operations and instants run on the engine and
// on the model (model.ts), and every answer must agree. Pop receipts are the engine's own: the
// model takes each one the engine answers, and deletes and updates are sent with current, stale
// and made-up receipts alike.
//
// A failure names its seed; CERULEAN_QUEUE_MODEL_SEED=<seed> replays exactly that sequence.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { MessageResult, QueueStore } from '../../../src/storage/queue-store.js';
import { seededRandom, type Random } from '../../query/random.js';
import { QueueModel } from './model.js';
import { message, t0, type QueueStoreFactory, type QueueStoreUnderTest } from './support.js';

export interface QueueModelCheckOptions {
  /** Random sequences per run (default 20). */
  readonly sequences?: number;
  /** Operations per sequence (default 150). */
  readonly operations?: number;
}

const seedVariable = 'CERULEAN_QUEUE_MODEL_SEED';

export function runQueueModelCheck(
  engine: string,
  factory: QueueStoreFactory,
  options: QueueModelCheckOptions = {},
): void {
  const replay = process.env[seedVariable];
  const base = replay !== undefined ? Number(replay) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  const sequences = replay !== undefined ? 1 : (options.sequences ?? 20);
  const operations = options.operations ?? 150;
  describe(`queue model test: ${engine}`, () => {
    let subject: QueueStoreUnderTest | undefined;
    before(async () => {
      subject = await factory();
    });
    after(() => subject?.close());
    test(`${sequences} random sequences of ${operations} operations agree with the model`, async (t) => {
      t.diagnostic(`first seed ${base} (replay one sequence with ${seedVariable}=<seed>)`);
      for (let i = 0; i < sequences; i++) {
        const seed = (base + i) >>> 0;
        try {
          await new Sequence(subject!.store, `model${seed}`, seededRandom(seed)).run(operations);
        } catch (error) {
          throw new Error(`seed ${seed}: ${(error as Error).message}`, { cause: error });
        }
      }
    });
  });
}

const queueNames = ['q1', 'q2'];

class Sequence {
  private readonly model = new QueueModel();
  /** Every pop receipt the engine answered, by message id: the stale ones a delete may send. */
  private readonly receipts = new Map<string, string[]>();
  private nowMs = t0;

  constructor(
    private readonly store: QueueStore,
    private readonly account: string,
    private readonly random: Random,
  ) {}

  async run(operations: number): Promise<void> {
    for (const name of queueNames) await this.createQueue(name);
    for (let i = 0; i < operations; i++) {
      const roll = this.random.int(100);
      const name = this.random.pick(queueNames);
      if (roll < 28) await this.put(name);
      else if (roll < 48) await this.get(name);
      else if (roll < 56) await this.peek(name);
      else if (roll < 60)
        this.compare(
          await this.store.countMessages(this.account, name, this.nowMs),
          this.model.count(name, this.nowMs),
          'count',
        );
      else if (roll < 74) await this.delete(name);
      else if (roll < 84) await this.update(name);
      else if (roll < 86)
        this.compare(await this.store.clearMessages(this.account, name), this.model.clear(name), 'clear');
      else if (roll < 88) await this.recreate(name);
      else if (roll < 91) await this.purge();
      else this.nowMs += this.random.int(3000);
    }
  }

  private compare<T>(actual: MessageResult<T>, expected: MessageResult<T>, what: string): void {
    assert.deepEqual(actual, expected, `${what} at +${this.nowMs - t0} ms`);
  }

  private async createQueue(name: string): Promise<void> {
    await this.store.createQueue(this.account, name, new Map());
    this.model.createQueue(name);
  }

  private async recreate(name: string): Promise<void> {
    assert.equal(await this.store.deleteQueue(this.account, name), this.model.deleteQueue(name));
    if (this.random.chance(0.6)) await this.createQueue(name);
  }

  private async put(name: string): Promise<void> {
    const visibleMs = this.nowMs + (this.random.chance(0.6) ? 0 : this.random.int(5000));
    const expiresMs = this.random.chance(0.5) ? Number.POSITIVE_INFINITY : visibleMs + 1 + this.random.int(20_000);
    const put = message(`text ${this.random.int(1000)}`, { insertedMs: this.nowMs, visibleMs, expiresMs });
    const actual = await this.store.putMessage(this.account, name, put);
    const receipt = actual.ok ? actual.value.popReceipt : '';
    this.compare(actual, this.model.put(name, put, receipt), 'put');
    if (actual.ok) this.receipts.set(put.id, [receipt]);
  }

  private async get(name: string): Promise<void> {
    const count = 1 + this.random.int(4);
    const visibleMs = this.nowMs + this.random.int(4) * this.random.int(5000);
    const actual = await this.store.getMessages(this.account, name, {
      count,
      nowMs: this.nowMs,
      visibleMs,
    });
    const expected = this.model.visible(name, this.nowMs);
    if (!expected.ok || !actual.ok) return this.compare(actual, expected, 'get');
    const want = expected.value.slice(0, count).map((each) => each.id);
    assert.deepEqual(
      actual.value.map((each) => each.id),
      want,
      `get at +${this.nowMs - t0} ms`,
    );
    for (const got of actual.value) {
      assert.deepEqual(got, this.model.claim(name, got.id, visibleMs, got.popReceipt));
      this.receipts.get(got.id)!.push(got.popReceipt);
    }
  }

  private async peek(name: string): Promise<void> {
    const count = 1 + this.random.int(5);
    const expected = this.model.visible(name, this.nowMs);
    const sliced = expected.ok ? { ok: true as const, value: expected.value.slice(0, count) } : expected;
    this.compare(await this.store.peekMessages(this.account, name, { count, nowMs: this.nowMs }), sliced, 'peek');
  }

  /** A message id (now and then an unknown one) and a receipt: current, stale or made up. */
  private operand(name: string): { id: string; popReceipt: string } {
    const held = this.model.ids(name);
    const id =
      held.length === 0 || this.random.chance(0.1) ? `unknown-${this.random.int(1000)}` : this.random.pick(held);
    const seen = this.receipts.get(id) ?? [];
    const roll = this.random.int(10);
    const popReceipt =
      roll < 6 ? (seen.at(-1) ?? 'none') : roll < 9 ? (seen[this.random.int(seen.length)] ?? 'none') : 'made-up';
    return { id, popReceipt };
  }

  private async delete(name: string): Promise<void> {
    const { id, popReceipt } = this.operand(name);
    const expected = this.model.check(name, id, popReceipt, this.nowMs);
    const actual = await this.store.deleteMessage(this.account, name, {
      id,
      popReceipt,
      nowMs: this.nowMs,
    });
    this.compare(actual, expected.ok ? { ok: true, value: undefined } : expected, 'delete');
    if (expected.ok) this.model.delete(name, id);
  }

  private async update(name: string): Promise<void> {
    const { id, popReceipt } = this.operand(name);
    const visibleMs = this.nowMs + this.random.int(3) * this.random.int(5000);
    const text = this.random.chance(0.5) ? undefined : `updated ${this.random.int(1000)}`;
    const expected = this.model.check(name, id, popReceipt, this.nowMs);
    const actual = await this.store.updateMessage(this.account, name, {
      id,
      popReceipt,
      nowMs: this.nowMs,
      visibleMs,
      text,
    });
    if (!expected.ok || !actual.ok) return this.compare(actual, expected, 'update');
    assert.deepEqual(actual.value, this.model.update(name, id, visibleMs, text, actual.value.popReceipt));
    this.receipts.get(id)!.push(actual.value.popReceipt);
  }

  /** A purge removes only expired messages (invisible to every other answer), at most its limit. */
  private async purge(): Promise<void> {
    const limit = 1 + this.random.int(5);
    const removed = await this.store.purgeExpired(this.nowMs, limit);
    assert.ok(removed >= 0 && removed <= limit, `purge removed ${removed}, limit ${limit}`);
  }
}
