// The Queue store conformance suite: one function that takes a factory for an engine's
// QueueStore (src/storage/queue-store.ts) and registers every case of the contract against it,
// like the table store's suite (tests/storage/conformance/suite.ts). An engine that cannot run a
// case passes a skip entry with its written reason; a skip naming no case is an error.
//
// Each group gets a fresh store; each case works in accounts of its own. Time is passed in
// (nowMs), so visibility and expiry are tested without waiting.
import assert from 'node:assert/strict';
import type { QueueStore } from '../../../src/storage/queue-store.js';
import { concurrencyCases } from './cases/concurrency.js';
import { depthCases } from './cases/depths.js';
import { durabilityCases } from './cases/durability.js';
import { expiryCases } from './cases/expiry.js';
import { messageCases } from './cases/messages.js';
import { queueCases } from './cases/queues.js';
import { runConformanceGroups, type ConformanceCase } from '../conformance-groups.js';
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

export type QueueCase = ConformanceCase<QueueCaseContext>;

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
  runConformanceGroups(`QueueStore conformance: ${engine}`, groups, factory, caseContext, options.skip);
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
