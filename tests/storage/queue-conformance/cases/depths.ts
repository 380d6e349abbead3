// Queue depths (QueueStore.deepestQueues), what the metrics read: unexpired messages per queue,
// deepest first, the oldest insertion, and the highest dequeue count among visible messages.
import assert from 'node:assert/strict';
import type { QueueDepth } from '../../../../src/storage/queue-store.js';
import type { QueueCase } from '../suite.js';
import { message, ok, putAll, t0 } from '../support.js';

const second = 1000;

export const depthCases: readonly QueueCase[] = [
  {
    name: 'deepestQueues: unexpired counts deepest first, oldest insertion, highest visible dequeue count',
    async run({ store, account }) {
      const owner = account();
      const [deep, shallow, expired] = ['deep', 'shallow', 'expired'] as const;
      for (const name of [deep, shallow, expired, 'empty']) {
        assert.ok((await store.createQueue(owner, name, new Map())).created);
      }
      await putAll(
        store,
        owner,
        deep,
        [1, 2, 3, 4, 5].map((s) => message(`d${s}`, { insertedMs: t0 + s * second })),
      );
      await putAll(store, owner, shallow, [message('s1', { insertedMs: t0 - 10 * second }), message('s2')]);
      await putAll(store, owner, expired, [message('gone', { expiresMs: t0 + 5 * second })]);
      // Every deep message read once, then the first read again and hidden: its count 2 is not visible.
      ok(await store.getMessages(owner, deep, { count: 32, nowMs: t0 + 10 * second, visibleMs: t0 + 11 * second }));
      ok(await store.getMessages(owner, deep, { count: 1, nowMs: t0 + 12 * second, visibleMs: t0 + 100 * second }));
      const mine = async (nowMs: number): Promise<QueueDepth[]> =>
        (await store.deepestQueues(nowMs, 1000)).filter((depth) => depth.account === owner);
      assert.deepEqual(await mine(t0 + 12 * second), [
        { account: owner, name: deep, messages: 5, oldestInsertedMs: t0 + second, dequeueCountMax: 1 },
        { account: owner, name: shallow, messages: 2, oldestInsertedMs: t0 - 10 * second, dequeueCountMax: 0 },
      ]);
      const later = await mine(t0 + 200 * second);
      assert.equal(later[0]?.dequeueCountMax, 2, 'visible again');
      const all = await store.deepestQueues(t0 + 12 * second, 1000);
      for (let i = 1; i < all.length; i++) assert.ok(all[i - 1]!.messages >= all[i]!.messages, 'deepest first');
      const top = await store.deepestQueues(t0 + 12 * second, 1);
      assert.equal(top.length, 1);
      assert.equal(top[0]!.messages, all[0]!.messages);
      assert.deepEqual(await store.deepestQueues(t0, 0), []);
    },
  },
];
