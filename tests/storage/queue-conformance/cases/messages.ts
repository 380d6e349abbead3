// Messages: put, peek, get (claims with visibility and dequeue counts), delete and update with pop
// receipts, clear, counts, get order, and queueNotFound for every message operation.
import assert from 'node:assert/strict';
import type { MessageResult } from '../../../../src/storage/queue-store.js';
import type { QueueCase } from '../suite.js';
import { failure, ids, message, ok, putAll, t0, texts } from '../support.js';

const second = 1000;

export const messageCases: readonly QueueCase[] = [
  {
    name: 'put answers the message as stored; peek returns it unchanged and changes nothing',
    async run({ store, queue }) {
      const { account, name } = await queue();
      const put = message('hello \u00e9\u{1F600} <xml/> &amp;', {
        insertedMs: t0,
        expiresMs: t0 + 7 * 86_400 * second,
      });
      const stored = ok(await store.putMessage(account, name, put));
      assert.deepEqual({ ...stored, popReceipt: '' }, { ...put, dequeueCount: 0, popReceipt: '' });
      assert.ok(stored.popReceipt.length > 0);
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(ok(await store.peekMessages(account, name, { count: 32, nowMs: t0 })), [stored]);
      }
      assert.equal(ok(await store.countMessages(account, name, t0)), 1);
    },
  },
  {
    name: 'get claims: invisible until visibleMs, dequeue count raised, a new pop receipt',
    async run({ store, queue }) {
      const { account, name } = await queue();
      const [stored] = await putAll(store, account, name, [message('work')]);
      const [got] = ok(await store.getMessages(account, name, { count: 32, nowMs: t0, visibleMs: t0 + 30 * second }));
      assert.deepEqual(
        { ...got!, popReceipt: '' },
        { ...stored!, visibleMs: t0 + 30 * second, dequeueCount: 1, popReceipt: '' },
      );
      assert.notEqual(got!.popReceipt, stored!.popReceipt);
      assert.deepEqual(
        ok(await store.getMessages(account, name, { count: 32, nowMs: t0 + 29_999, visibleMs: t0 + 60 * second })),
        [],
        'invisible',
      );
      assert.deepEqual(ok(await store.peekMessages(account, name, { count: 32, nowMs: t0 + 29_999 })), []);
      assert.equal(ok(await store.countMessages(account, name, t0 + 1)), 1, 'invisible messages count');
    },
  },
  {
    name: 'a message not deleted reappears at its visibleMs with its dequeue count kept',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('retry me')]);
      let now = t0;
      for (let attempt = 1; attempt <= 3; attempt++) {
        const [got] = ok(
          await store.getMessages(account, name, { count: 1, nowMs: now, visibleMs: now + 10 * second }),
        );
        assert.equal(got?.dequeueCount, attempt);
        assert.equal(got?.text, 'retry me');
        now += 10 * second; // exactly its visibleMs: visible again
        const [peeked] = ok(await store.peekMessages(account, name, { count: 1, nowMs: now }));
        assert.equal(peeked?.dequeueCount, attempt, 'peek shows the count and does not raise it');
      }
    },
  },
  {
    name: 'a message put with a later visibleMs stays hidden until then',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('later', { insertedMs: t0, visibleMs: t0 + 5 * second })]);
      assert.deepEqual(
        ok(await store.getMessages(account, name, { count: 1, nowMs: t0 + 4_999, visibleMs: t0 + 60 * second })),
        [],
      );
      assert.deepEqual(ok(await store.peekMessages(account, name, { count: 1, nowMs: t0 + 4_999 })), []);
      assert.deepEqual(
        texts(
          ok(await store.getMessages(account, name, { count: 1, nowMs: t0 + 5 * second, visibleMs: t0 + 60 * second })),
        ),
        ['later'],
      );
    },
  },
  {
    name: 'delete with the current pop receipt removes the message; then messageNotFound',
    async run({ store, queue }) {
      const { account, name } = await queue();
      const [a, b] = await putAll(store, account, name, [message('a'), message('b')]);
      ok(
        await store.deleteMessage(account, name, { id: a!.id, popReceipt: a!.popReceipt, nowMs: t0 }),
        'the put receipt deletes',
      );
      const [got] = ok(await store.getMessages(account, name, { count: 1, nowMs: t0, visibleMs: t0 + second }));
      assert.equal(got!.id, b!.id);
      assert.equal(
        failure(await store.deleteMessage(account, name, { id: b!.id, popReceipt: b!.popReceipt, nowMs: t0 })),
        'popReceiptMismatch',
      );
      ok(
        await store.deleteMessage(account, name, { id: got!.id, popReceipt: got!.popReceipt, nowMs: t0 + 5 * second }),
        'after it reappeared',
      );
      assert.equal(
        failure(await store.deleteMessage(account, name, { id: got!.id, popReceipt: got!.popReceipt, nowMs: t0 })),
        'messageNotFound',
      );
      assert.equal(
        failure(await store.deleteMessage(account, name, { id: 'no-such-id', popReceipt: 'x', nowMs: t0 })),
        'messageNotFound',
      );
      assert.equal(ok(await store.countMessages(account, name, t0)), 0);
    },
  },
  {
    name: 'a pop receipt is invalid after the next get or update of its message',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('m')]);
      const [first] = ok(await store.getMessages(account, name, { count: 1, nowMs: t0, visibleMs: t0 + second }));
      const [again] = ok(
        await store.getMessages(account, name, { count: 1, nowMs: t0 + second, visibleMs: t0 + 2 * second }),
      );
      assert.equal(again!.dequeueCount, 2);
      assert.equal(
        failure(
          await store.deleteMessage(account, name, {
            id: first!.id,
            popReceipt: first!.popReceipt,
            nowMs: t0 + 2 * second,
          }),
        ),
        'popReceiptMismatch',
      );
      const updated = ok(
        await store.updateMessage(account, name, {
          id: again!.id,
          popReceipt: again!.popReceipt,
          nowMs: t0 + second,
          visibleMs: t0 + 3 * second,
          text: undefined,
        }),
      );
      assert.equal(
        failure(
          await store.deleteMessage(account, name, {
            id: again!.id,
            popReceipt: again!.popReceipt,
            nowMs: t0 + second,
          }),
        ),
        'popReceiptMismatch',
      );
      const stale = await store.updateMessage(account, name, {
        id: again!.id,
        popReceipt: again!.popReceipt,
        nowMs: t0 + second,
        visibleMs: t0 + 4 * second,
        text: 'x',
      });
      assert.equal(failure(stale), 'popReceiptMismatch');
      ok(
        await store.deleteMessage(account, name, {
          id: updated.id,
          popReceipt: updated.popReceipt,
          nowMs: t0 + second,
        }),
      );
    },
  },
  {
    name: 'update: new visibility and pop receipt, text replaced or kept, dequeue count unchanged',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('draft')]);
      const [got] = ok(await store.getMessages(account, name, { count: 1, nowMs: t0, visibleMs: t0 + 30 * second }));
      const kept = ok(
        await store.updateMessage(account, name, {
          id: got!.id,
          popReceipt: got!.popReceipt,
          nowMs: t0 + second,
          visibleMs: t0 + 2 * second,
          text: undefined,
        }),
      );
      assert.deepEqual({ ...kept, popReceipt: '' }, { ...got!, visibleMs: t0 + 2 * second, popReceipt: '' });
      assert.notEqual(kept.popReceipt, got!.popReceipt);
      assert.deepEqual(
        ok(await store.peekMessages(account, name, { count: 1, nowMs: t0 + 2 * second })),
        [kept],
        'visible at its new instant',
      );
      const replaced = ok(
        await store.updateMessage(account, name, {
          id: kept.id,
          popReceipt: kept.popReceipt,
          nowMs: t0 + 2 * second,
          visibleMs: t0 + 2 * second,
          text: 'final',
        }),
      );
      assert.equal(replaced.text, 'final');
      assert.equal(replaced.dequeueCount, 1);
      assert.deepEqual(ok(await store.peekMessages(account, name, { count: 1, nowMs: t0 + 2 * second })), [replaced]);
      // An update of a message put and never got: its put receipt is current.
      const [fresh] = await putAll(store, account, name, [message('fresh')]);
      const hidden = ok(
        await store.updateMessage(account, name, {
          id: fresh!.id,
          popReceipt: fresh!.popReceipt,
          nowMs: t0,
          visibleMs: t0 + 9 * second,
          text: undefined,
        }),
      );
      assert.equal(hidden.dequeueCount, 0);
      const unknown = await store.updateMessage(account, name, {
        id: 'no-such-id',
        popReceipt: 'x',
        nowMs: t0,
        visibleMs: t0,
        text: undefined,
      });
      assert.equal(failure(unknown), 'messageNotFound');
    },
  },
  {
    name: 'get order: earliest visible first, then insertion order; count bounds a get',
    async run({ store, queue }) {
      const { account, name } = await queue();
      const visible = [5, 1, 3, 1, 0, 3, 1].map((s) => t0 + s * second);
      await putAll(
        store,
        account,
        name,
        visible.map((visibleMs, i) => message(`m${i}`, { visibleMs })),
      );
      const now = t0 + 10 * second;
      const expected = ['m4', 'm1', 'm3', 'm6', 'm2', 'm5', 'm0'];
      assert.deepEqual(texts(ok(await store.peekMessages(account, name, { count: 32, nowMs: now }))), expected);
      assert.deepEqual(
        texts(ok(await store.peekMessages(account, name, { count: 3, nowMs: now }))),
        expected.slice(0, 3),
      );
      assert.deepEqual(
        texts(ok(await store.getMessages(account, name, { count: 2, nowMs: now, visibleMs: now + second }))),
        expected.slice(0, 2),
      );
      assert.deepEqual(
        texts(ok(await store.getMessages(account, name, { count: 32, nowMs: now, visibleMs: now + second }))),
        expected.slice(2),
      );
      // All visible again at one instant (now + 1 s): then insertion order alone.
      const again = ok(
        await store.getMessages(account, name, { count: 32, nowMs: now + second, visibleMs: now + 2 * second }),
      );
      assert.deepEqual(texts(again), ['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
      assert.equal(new Set(ids(again)).size, 7);
    },
  },
  {
    name: 'a get that asks for more messages than are visible gets those there are; an empty queue none',
    async run({ store, queue }) {
      const { account, name } = await queue();
      assert.deepEqual(
        ok(await store.getMessages(account, name, { count: 32, nowMs: t0, visibleMs: t0 + second })),
        [],
      );
      await putAll(store, account, name, [message('x'), message('y', { visibleMs: t0 + 60 * second })]);
      assert.deepEqual(
        texts(ok(await store.getMessages(account, name, { count: 32, nowMs: t0, visibleMs: t0 + second }))),
        ['x'],
      );
    },
  },
  {
    name: 'clear removes every message, visible or not; counts follow',
    async run({ store, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('a'), message('b'), message('c', { visibleMs: t0 + 60 * second })]);
      ok(await store.getMessages(account, name, { count: 1, nowMs: t0, visibleMs: t0 + 60 * second }));
      assert.equal(ok(await store.countMessages(account, name, t0)), 3);
      ok(await store.clearMessages(account, name));
      assert.equal(ok(await store.countMessages(account, name, t0)), 0);
      assert.deepEqual(ok(await store.peekMessages(account, name, { count: 32, nowMs: t0 + 120 * second })), []);
      await putAll(store, account, name, [message('after')]);
      assert.deepEqual(texts(ok(await store.peekMessages(account, name, { count: 32, nowMs: t0 }))), ['after']);
    },
  },
  {
    name: 'every message operation on a missing queue answers queueNotFound',
    async run({ store, account, queue }) {
      const acct = account();
      const { account: other, name } = await queue();
      const [stored] = await putAll(store, other, name, [message('elsewhere')]);
      const answers: MessageResult<unknown>[] = [
        await store.countMessages(acct, name, t0),
        await store.putMessage(acct, name, message('x')),
        await store.getMessages(acct, name, { count: 1, nowMs: t0, visibleMs: t0 + second }),
        await store.peekMessages(acct, name, { count: 1, nowMs: t0 }),
        await store.deleteMessage(acct, name, { id: stored!.id, popReceipt: stored!.popReceipt, nowMs: t0 }),
        await store.updateMessage(acct, name, {
          id: stored!.id,
          popReceipt: stored!.popReceipt,
          nowMs: t0,
          visibleMs: t0,
          text: 'x',
        }),
        await store.clearMessages(acct, name),
        await store.getQueueAcl(acct, name),
        await store.setQueueAcl(acct, name, 'x'),
      ];
      assert.deepEqual(
        answers.map((answer) => failure(answer)),
        answers.map(() => 'queueNotFound'),
      );
      assert.equal(ok(await store.countMessages(other, name, t0)), 1, 'the other account kept its message');
    },
  },
];
