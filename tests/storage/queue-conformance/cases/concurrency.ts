// Concurrent claims: gets racing from two views of the data (two processes on PostgreSQL, one
// process on SQLite) never return the same message, and together return each one exactly once.
import assert from 'node:assert/strict';
import type { QueueStore, StoredMessage } from '../../../../src/storage/queue-store.js';
import type { QueueCase } from '../suite.js';
import { message, ok, putAll, t0 } from '../support.js';

const messages = 60;
const getsPerRound = 16;
const countPerGet = 4;

async function raceRound(
  stores: readonly QueueStore[],
  account: string,
  name: string,
  nowMs: number,
): Promise<StoredMessage[]> {
  const gets = Array.from({ length: getsPerRound }, (_, i) =>
    stores[i % stores.length]!.getMessages(account, name, {
      count: countPerGet,
      nowMs,
      visibleMs: nowMs + 60_000,
    }),
  );
  return (await Promise.all(gets)).flatMap((answer) => ok(answer));
}

export const concurrencyCases: readonly QueueCase[] = [
  {
    name: 'concurrent gets never return the same message, and every message is claimed once',
    async run({ store, second, queue }) {
      const { account, name } = await queue();
      const stored = await putAll(
        store,
        account,
        name,
        Array.from({ length: messages }, (_, i) => message(`job ${i}`)),
      );
      const claimed: StoredMessage[] = [];
      // Rounds until a round claims nothing: a get may skip rows another holds, so one round may
      // leave some visible messages to the next.
      for (let round = 0; round < 20; round++) {
        const got = await raceRound([store, second], account, name, t0);
        claimed.push(...got);
        if (got.length === 0) break;
      }
      const ids = claimed.map((each) => each.id);
      assert.equal(new Set(ids).size, ids.length, 'no message claimed twice');
      assert.deepEqual([...ids].sort(), stored.map((each) => each.id).sort(), 'every message claimed');
      for (const each of claimed) assert.equal(each.dequeueCount, 1);
    },
  },
  {
    name: 'concurrent deletes and updates of one claimed message: exactly one succeeds',
    async run({ store, second, queue }) {
      const { account, name } = await queue();
      await putAll(store, account, name, [message('contended')]);
      const [got] = ok(await store.getMessages(account, name, { count: 1, nowMs: t0, visibleMs: t0 + 60_000 }));
      const { id, popReceipt } = got!;
      const answers = await Promise.all([
        store.deleteMessage(account, name, { id, popReceipt, nowMs: t0 }),
        second.updateMessage(account, name, {
          id,
          popReceipt,
          nowMs: t0,
          visibleMs: t0 + 1,
          text: 'changed',
        }),
        second.deleteMessage(account, name, { id, popReceipt, nowMs: t0 }),
        store.updateMessage(account, name, {
          id,
          popReceipt,
          nowMs: t0,
          visibleMs: t0 + 1,
          text: undefined,
        }),
      ]);
      assert.equal(answers.filter((answer) => answer.ok).length, 1, JSON.stringify(answers));
      for (const answer of answers) {
        if (!answer.ok) assert.ok(['popReceiptMismatch', 'messageNotFound'].includes(answer.failure), answer.failure);
      }
    },
  },
];
