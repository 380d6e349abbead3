// Expiry: a message is never returned, counted, deleted or updated at or after its expiresMs;
// purgeExpired removes expired messages in bounded batches across queues; never-expiring stays.
import assert from 'node:assert/strict';
import type { QueueCase } from '../suite.js';
import { failure, message, never, ok, putAll, t0, texts } from '../support.js';

const second = 1000;

export const expiryCases: readonly QueueCase[] = [
  {
    name: 'an expired message is never returned nor counted, and cannot be deleted or updated',
    async run({ store, queue }) {
      const { account, name } = await queue();
      const [short] = await putAll(store, account, name, [
        message('short', { expiresMs: t0 + 10 * second }),
        message('forever', { expiresMs: never }),
      ]);
      const before = t0 + 10 * second - 1;
      assert.deepEqual(texts(ok(await store.peekMessages(account, name, { count: 32, nowMs: before }))), [
        'short',
        'forever',
      ]);
      assert.equal(ok(await store.countMessages(account, name, before)), 2);
      const at = t0 + 10 * second;
      assert.deepEqual(texts(ok(await store.peekMessages(account, name, { count: 32, nowMs: at }))), ['forever']);
      assert.equal(ok(await store.countMessages(account, name, at)), 1);
      assert.equal(
        failure(await store.deleteMessage(account, name, { id: short!.id, popReceipt: short!.popReceipt, nowMs: at })),
        'messageNotFound',
      );
      assert.equal(
        failure(
          await store.updateMessage(account, name, {
            id: short!.id,
            popReceipt: short!.popReceipt,
            nowMs: at,
            visibleMs: at,
            text: 'x',
          }),
        ),
        'messageNotFound',
      );
      const got = ok(await store.getMessages(account, name, { count: 32, nowMs: at, visibleMs: at + second }));
      assert.deepEqual(texts(got), ['forever']);
      assert.equal(got[0]!.expiresMs, never);
    },
  },
  {
    name: 'a claimed message that expires while invisible never reappears',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('brief', { expiresMs: t0 + 5 * second })]);
      ok(await store.getMessages(account, name, { count: 1, nowMs: t0, visibleMs: t0 + 10 * second }));
      assert.deepEqual(
        ok(await store.getMessages(account, name, { count: 32, nowMs: t0 + 10 * second, visibleMs: t0 + 20 * second })),
        [],
      );
      assert.deepEqual(ok(await store.peekMessages(account, name, { count: 32, nowMs: t0 + 10 * second })), []);
    },
  },
  {
    name: 'purgeExpired removes expired messages of every queue, at most limit per call',
    async run({ store, queue }) {
      const first = await queue();
      const other = await queue();
      const expiring = (text: string) => message(text, { expiresMs: t0 + second });
      await putAll(store, first.account, first.name, [expiring('a'), expiring('b'), message('keep')]);
      await putAll(store, other.account, other.name, [expiring('c'), message('stay', { expiresMs: t0 + 60 * second })]);
      const now = t0 + 2 * second;
      // Other cases' queues share the store and may hold expired messages too: count only what is ours.
      let removed = 0;
      for (let calls = 0; calls < 1000; calls++) {
        const batch = await store.purgeExpired(now, 2);
        assert.ok(batch >= 0 && batch <= 2, `a purge is bounded by its limit: ${batch}`);
        if (batch === 0) break;
        removed += batch;
      }
      assert.ok(removed >= 3);
      assert.equal(await store.purgeExpired(now, 100), 0, 'nothing expired is left');
      // What has not expired at `now` is kept, whatever its expiry.
      assert.deepEqual(texts(ok(await store.peekMessages(first.account, first.name, { count: 32, nowMs: t0 }))), [
        'keep',
      ]);
      assert.deepEqual(texts(ok(await store.peekMessages(other.account, other.name, { count: 32, nowMs: t0 }))), [
        'stay',
      ]);
      assert.equal(ok(await store.countMessages(first.account, first.name, t0)), 1, 'removed, not only hidden');
    },
  },
  {
    name: 'a get and a peek step over a long run of expired messages to the live one behind them',
    async run({ store, queue }) {
      const { account, name } = await queue();
      const expired = Array.from({ length: 1100 }, (_, i) => message(`old ${i}`, { expiresMs: t0 + second }));
      for (let i = 0; i < expired.length; i += 100) {
        await Promise.all(expired.slice(i, i + 100).map((each) => store.putMessage(account, name, each)));
      }
      await putAll(store, account, name, [message('live', { visibleMs: t0 + second })]);
      const now = t0 + 2 * second;
      assert.deepEqual(texts(ok(await store.peekMessages(account, name, { count: 32, nowMs: now }))), ['live']);
      assert.deepEqual(
        texts(ok(await store.getMessages(account, name, { count: 32, nowMs: now, visibleMs: now + second }))),
        ['live'],
      );
      assert.deepEqual(
        texts(
          ok(await store.getMessages(account, name, { count: 32, nowMs: now + second, visibleMs: now + 2 * second })),
        ),
        ['live'],
      );
      assert.equal(ok(await store.countMessages(account, name, now)), 1);
    },
  },
  {
    name: 'a message that never expires survives any purge',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('eternal')]);
      await store.purgeExpired(Number.MAX_SAFE_INTEGER, 1000);
      assert.deepEqual(
        texts(ok(await store.peekMessages(account, name, { count: 1, nowMs: Number.MAX_SAFE_INTEGER }))),
        ['eternal'],
      );
    },
  },
];
