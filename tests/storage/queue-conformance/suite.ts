// The Queue store conformance suite: one function that takes a factory for an engine's
// QueueStore (src/storage/queue-store.ts) and registers every case of the contract against it,
// like the table store's suite (tests/storage/conformance/suite.ts). An engine that cannot run a
// case passes a skip entry with its written reason; a skip naming no case is an error.
//
// Each group gets a fresh store; each case works in accounts of its own. Time is passed in
// (nowMs), so visibility and expiry are tested without waiting.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { QueueStore } from '../../../src/storage/queue-store.js';
import { concurrencyCases } from './cases/concurrency.js';
import { depthCases } from './cases/depths.js';
import { durabilityCases } from './cases/durability.js';
import { expiryCases } from './cases/expiry.js';
import { messageCases } from './cases/messages.js';
import { queueCases } from './cases/queues.js';
import type { QueueStoreFactory, QueueStoreUnderTest } from './support.js';

export interface QueueCaseContext {
  readonly store: QueueStore;
  /** The same data through another process's view (QueueStoreUnderTest.second). */
  readonly second: QueueStore;
  /** A fresh account name. */
  account(): string;
  /** Creates a queue without metadata in a fresh account; its account and name. */
  queue(): Promise<{ readonly account: string; readonly name: string }>;
  /** Closes the store and opens the same data again; throws if the engine cannot. */
  reopen(): Promise<QueueStore>;
}

export interface QueueCase {
  /** Unique across the suite: the key of a skip entry. */
  readonly name: string;
  run(context: QueueCaseContext): Promise<void>;
}

const groups: readonly { readonly name: string; readonly cases: readonly QueueCase[] }[] = [
  { name: 'queues', cases: queueCases },
  { name: 'messages', cases: messageCases },
  { name: 'expiry', cases: expiryCases },
  { name: 'depths', cases: depthCases },
  { name: 'concurrent claims', cases: concurrencyCases },
  { name: 'durability across reopen', cases: durabilityCases },
];

export interface QueueConformanceOptions {
  /** Case name → the written reason this engine does not run it. */
  readonly skip?: Readonly<Record<string, string>>;
}

export function runQueueConformance(
  engine: string,
  factory: QueueStoreFactory,
  options: QueueConformanceOptions = {},
): void {
  const skip = new Map(Object.entries(options.skip ?? {}));
  const names = new Set(groups.flatMap((group) => group.cases.map((each) => each.name)));
  assert.equal(names.size, groups.flatMap((group) => group.cases).length, 'case names are unique');
  for (const [name, reason] of skip) {
    assert.ok(names.has(name), `${engine}: the skip list names no case "${name}"`);
    assert.ok(reason.trim().length > 0, `${engine}: the skip of "${name}" needs a written reason`);
  }
  describe(`QueueStore conformance: ${engine}`, () => {
    for (const group of groups) {
      describe(group.name, () => {
        let subject: QueueStoreUnderTest | undefined;
        let context: QueueCaseContext | undefined;
        before(async () => {
          subject = await factory();
          context = caseContext(subject);
        });
        after(() => subject?.close());
        for (const each of group.cases) {
          const reason = skip.get(each.name);
          test(each.name, reason === undefined ? {} : { skip: reason }, () => each.run(context!));
        }
      });
    }
  });
}

let accounts = 0;

function caseContext(subject: QueueStoreUnderTest): QueueCaseContext {
  let store = subject.store;
  const context: QueueCaseContext = {
    get store() {
      return store;
    },
    get second() {
      return subject.second === subject.store ? store : subject.second;
    },
    account: () => `acct${accounts++}`,
    async queue() {
      const account = context.account();
      const created = await store.createQueue(account, 'q', new Map());
      assert.ok(created.created);
      return { account, name: 'q' };
    },
    async reopen() {
      assert.ok(subject.reopen !== undefined, 'this engine keeps nothing across a reopen');
      store = await subject.reopen();
      return store;
    },
  };
  return context;
}
