// Queues: create (and the existing queue's metadata), get, list, metadata, access policies, delete.
import assert from 'node:assert/strict';
import type { QueueCase } from '../suite.js';
import { failure, message, ok, t0 } from '../support.js';

const meta = (record: Record<string, string>): Map<string, string> => new Map(Object.entries(record));

export const queueCases: readonly QueueCase[] = [
  {
    name: 'create answers created, then the existing queue with its stored metadata',
    async run({ store, account }) {
      const acct = account();
      assert.deepEqual(await store.createQueue(acct, 'orders', meta({ Color: 'blue', size: 'L' })), { created: true });
      const again = await store.createQueue(acct, 'orders', meta({ other: 'x' }));
      assert.equal(again.created, false);
      assert.ok(!again.created);
      assert.equal(again.existing.name, 'orders');
      assert.equal(again.existing.account, acct);
      assert.deepEqual(
        [...again.existing.metadata],
        [
          ['Color', 'blue'],
          ['size', 'L'],
        ],
      );
    },
  },
  {
    name: 'getQueue answers the queue and its metadata, undefined for a missing one',
    async run({ store, account }) {
      const acct = account();
      assert.equal(await store.getQueue(acct, 'missing'), undefined);
      await store.createQueue(acct, 'jobs', meta({ a: '1', b: 'two words' }));
      const info = await store.getQueue(acct, 'jobs');
      assert.deepEqual(info && { ...info, metadata: [...info.metadata] }, {
        account: acct,
        name: 'jobs',
        metadata: [
          ['a', '1'],
          ['b', 'two words'],
        ],
      });
      assert.equal(await store.getQueue(account(), 'jobs'), undefined, 'queues belong to their account');
    },
  },
  {
    name: 'listQueues: name order, prefix, from-name marker and limit, one account only',
    async run({ store, account }) {
      const acct = account();
      const names = ['beta', 'alpha-2', 'alpha', 'alpha-10', 'gamma', 'al'];
      for (const name of names) await store.createQueue(acct, name, meta({ n: name }));
      await store.createQueue(account(), 'alpha-other-account', new Map());
      const list = async (prefix: string, from: string | undefined, limit: number) =>
        (await store.listQueues(acct, prefix, from, limit)).map((info) => info.name);
      assert.deepEqual(await list('', undefined, 100), ['al', 'alpha', 'alpha-10', 'alpha-2', 'beta', 'gamma']);
      assert.deepEqual(await list('alpha', undefined, 100), ['alpha', 'alpha-10', 'alpha-2']);
      assert.deepEqual(await list('alpha', undefined, 2), ['alpha', 'alpha-10']);
      assert.deepEqual(await list('alpha', 'alpha-2', 2), ['alpha-2'], 'from a marker, inclusive');
      assert.deepEqual(await list('', 'b', 100), ['beta', 'gamma']);
      assert.deepEqual(await list('', 'alpha-10', 2), ['alpha-10', 'alpha-2']);
      assert.deepEqual(await list('delta', undefined, 100), []);
      assert.deepEqual(await list('', 'zzz', 100), []);
      const [first] = await store.listQueues(acct, 'gam', undefined, 1);
      assert.deepEqual(first && [...first.metadata], [['n', 'gamma']], 'with their metadata');
    },
  },
  {
    name: 'setQueueMetadata replaces the metadata; false without the queue',
    async run({ store, account }) {
      const acct = account();
      await store.createQueue(acct, 'q', meta({ old: '1' }));
      assert.equal(await store.setQueueMetadata(acct, 'q', meta({ fresh: '2', other: '3' })), true);
      assert.deepEqual(
        [...(await store.getQueue(acct, 'q'))!.metadata],
        [
          ['fresh', '2'],
          ['other', '3'],
        ],
      );
      assert.equal(await store.setQueueMetadata(acct, 'q', new Map()), true);
      assert.deepEqual([...(await store.getQueue(acct, 'q'))!.metadata], []);
      assert.equal(await store.setQueueMetadata(acct, 'nope', meta({ a: 'b' })), false);
    },
  },
  {
    name: 'access policies: none until set, set, cleared; queueNotFound without the queue',
    async run({ store, queue }) {
      const { account, name } = await queue();
      assert.equal(ok(await store.getQueueAcl(account, name)), undefined);
      ok(await store.setQueueAcl(account, name, '<SignedIdentifiers/>'));
      assert.equal(ok(await store.getQueueAcl(account, name)), '<SignedIdentifiers/>');
      ok(await store.setQueueAcl(account, name, undefined));
      assert.equal(ok(await store.getQueueAcl(account, name)), undefined);
      assert.equal(failure(await store.getQueueAcl(account, 'nope')), 'queueNotFound');
      assert.equal(failure(await store.setQueueAcl(account, 'nope', 'x')), 'queueNotFound');
    },
  },
  {
    name: 'deleteQueue removes the queue, its messages and its policies; a queue made again starts empty',
    async run({ store, queue }) {
      const { account, name } = await queue();
      ok(await store.putMessage(account, name, message('one')));
      ok(await store.setQueueAcl(account, name, 'policies'));
      assert.equal(await store.deleteQueue(account, name), true);
      assert.equal(await store.getQueue(account, name), undefined);
      assert.equal(await store.deleteQueue(account, name), false);
      assert.equal(failure(await store.countMessages(account, name, t0)), 'queueNotFound');
      assert.deepEqual(await store.createQueue(account, name, new Map()), { created: true });
      assert.equal(ok(await store.countMessages(account, name, t0)), 0);
      assert.deepEqual(ok(await store.peekMessages(account, name, { count: 32, nowMs: t0 })), []);
      assert.equal(ok(await store.getQueueAcl(account, name)), undefined);
    },
  },
];
