// Queue insights, read from the queue depths the store reports (QueueStore.deepestQueues): a
// poison queue with a backlog, and messages read many times without being deleted. The names
// follow the convention of Azure Functions and WebJobs, which move a message that failed five
// times to `<queue>-poison`
// (https://learn.microsoft.com/azure/azure-functions/functions-bindings-storage-queue-trigger).
import type { QueueDepth } from '../storage/queue-store.js';

/** A visible message read this many times without being deleted keeps failing (the Functions default). */
export const repeatedDequeueMin = 5;
export const poisonSuffix = '-poison';

export interface QueueFinding {
  readonly kind: 'poison-backlog' | 'repeated-dequeue';
  readonly account: string;
  readonly queue: string;
  readonly summary: string;
  readonly evidence: Readonly<Record<string, string | number>>;
  readonly pattern: string;
  readonly wastedEntities: 0;
}

export function queueFindings(depths: readonly QueueDepth[], nowMs: number): QueueFinding[] {
  return depths.flatMap((depth) => {
    const found: QueueFinding[] = [];
    const base = { account: depth.account, queue: depth.name, wastedEntities: 0 as const };
    const oldestAgeSeconds = Math.max(0, Math.round((nowMs - depth.oldestInsertedMs) / 1000));
    if (depth.name.endsWith(poisonSuffix)) {
      const source = depth.name.slice(0, -poisonSuffix.length);
      found.push({
        ...base,
        kind: 'poison-backlog',
        summary: `Poison queue ${depth.name} holds ${depth.messages} messages (the oldest ${oldestAgeSeconds} s old).`,
        evidence: { messages: depth.messages, oldestAgeSeconds },
        pattern:
          'These messages failed processing repeatedly. Read them (cerulean queue peek), fix the cause, then ' +
          `retry them (cerulean queue move ${depth.name} ${source}) or drop them (cerulean queue purge).`,
      });
    }
    if (depth.dequeueCountMax >= repeatedDequeueMin) {
      found.push({
        ...base,
        kind: 'repeated-dequeue',
        summary: `A visible message of ${depth.name} was read ${depth.dequeueCountMax} times and never deleted.`,
        evidence: { dequeueCountMax: depth.dequeueCountMax, messages: depth.messages },
        pattern:
          'A consumer gets it, fails (or takes longer than the visibility timeout) and it comes back. Delete ' +
          `messages once processed; after ${repeatedDequeueMin} dequeues move a message to a poison queue ` +
          'instead of retrying forever; make processing idempotent, since a message can be delivered twice.',
      });
    }
    return found;
  });
}
