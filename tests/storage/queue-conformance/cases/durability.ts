// Durability across a reopen (engines that keep data): every acknowledged queue, metadata, policy
// and message state is there again, pop receipts and dequeue counts included.
import assert from 'node:assert/strict';
import type { QueueCase } from '../suite.js';
import { message, ok, putAll, t0 } from '../support.js';

export const durabilityCases: readonly QueueCase[] = [
  {
    name: 'after reopening: queues, metadata, policies and every message as acknowledged',
    async run({ store, account, reopen }) {
      const acct = account();
      await store.createQueue(acct, 'kept', new Map([['k', 'v']]));
      ok(await store.setQueueAcl(acct, 'kept', 'policies'));
      const [a, , c] = await putAll(store, acct, 'kept', [
        message('a'),
        message('b', { expiresMs: t0 + 1 }),
        message('c'),
      ]);
      const [claimed] = ok(await store.getMessages(acct, 'kept', { count: 1, nowMs: t0, visibleMs: t0 + 30_000 }));
      assert.equal(claimed!.id, a!.id);
      ok(await store.deleteMessage(acct, 'kept', { id: c!.id, popReceipt: c!.popReceipt, nowMs: t0 }));
      const peekedBefore = ok(await store.peekMessages(acct, 'kept', { count: 32, nowMs: t0 + 30_000 }));
      const reopened = await reopen();
      assert.deepEqual([...(await reopened.getQueue(acct, 'kept'))!.metadata], [['k', 'v']]);
      assert.equal(ok(await reopened.getQueueAcl(acct, 'kept')), 'policies');
      assert.deepEqual(ok(await reopened.peekMessages(acct, 'kept', { count: 32, nowMs: t0 + 30_000 })), peekedBefore);
      ok(
        await reopened.deleteMessage(acct, 'kept', { id: claimed!.id, popReceipt: claimed!.popReceipt, nowMs: t0 + 1 }),
        'its receipt is still current',
      );
      assert.equal(ok(await reopened.countMessages(acct, 'kept', t0)), 1);
    },
  },
];
