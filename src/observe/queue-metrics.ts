// Queue series on /_metrics, read from the store when scraped: per queue, its approximate message
// count, the age of its oldest message and the highest dequeue count among its visible messages.
// Only the deepest queues get series (queueSeriesMax), so the number of series stays bounded
// however many queues the accounts hold; a queue without unexpired messages has none.
import { Gauge, type Registry } from 'prom-client';
import type { QueueDepth } from '../storage/queue-store.js';

/** Queues with series, deepest first, across all accounts. */
export const queueSeriesMax = 20;

export interface QueueDepths {
  /** The queue service's now (its clock, which tests may move). */
  readonly nowMs: number;
  readonly depths: readonly QueueDepth[];
}

export type QueueDepthSource = (limit: number) => Promise<QueueDepths>;

const labelNames = ['account', 'queue'] as const;

export function registerQueueGauges(prefix: string, source: QueueDepthSource, registers: Registry[]): void {
  // The three gauges are collected together on a scrape: they share one read of the store.
  let pending: Promise<QueueDepths | undefined> | undefined;
  const read = (): Promise<QueueDepths | undefined> => {
    pending ??= source(queueSeriesMax)
      .catch(() => undefined) // the store is unreachable: no queue series this scrape, the rest still answers
      .finally(() => (pending = undefined));
    return pending;
  };
  const gauge = (name: string, help: string, value: (depth: QueueDepth, nowMs: number) => number): void => {
    const metric: Gauge<(typeof labelNames)[number]> = new Gauge({
      name: `${prefix}${name}`,
      help,
      labelNames,
      registers,
      async collect() {
        const snapshot = await read();
        metric.reset();
        for (const depth of snapshot?.depths ?? []) {
          metric.set({ account: depth.account, queue: depth.name }, value(depth, snapshot!.nowMs));
        }
      },
    });
  };
  const deepest = `the ${queueSeriesMax} deepest queues`;
  gauge('queue_messages', `Approximate messages (unexpired, visible or not) of ${deepest}.`, (d) => d.messages);
  gauge(
    'queue_oldest_message_age_seconds',
    `Seconds since the oldest unexpired message of each of ${deepest} was inserted.`,
    (d, nowMs) => Math.max(0, (nowMs - d.oldestInsertedMs) / 1000),
  );
  gauge(
    'queue_dequeue_count_max',
    `Highest dequeue count among the visible messages of each of ${deepest} (0: none was read yet).`,
    (d) => d.dequeueCountMax,
  );
}
