// The periodic removal of expired messages: every `intervalMs`, batches of purgeExpired until a
// batch comes back short or the run's bound is reached, so one run's work is bounded and the
// rest waits for the next. Expired messages are never returned anyway; this only frees their space.
// The composition root (compose.ts) starts it with the queue store and stops it before closing;
// it runs the blob store's reclaimContent the same way.
import assert from 'node:assert/strict';
import type { QueueStore } from './queue-store.js';

export interface ExpiryPurgeOptions {
  /** Between runs; default one minute. */
  readonly intervalMs?: number;
  /** Messages one purgeExpired call removes at most; default 500. */
  readonly batchMessages?: number;
  /** Calls one run makes at most; default 20 (10,000 messages a run). */
  readonly batchesPerRunMax?: number;
  /** The clock (tests inject one); default Date.now. */
  readonly nowMs?: () => number;
  /** Hears of a failed run (the next one tries again). */
  readonly onError?: (error: unknown) => void;
}

export class ExpiryPurge {
  private readonly intervalMs: number;
  private readonly batchMessages: number;
  private readonly batchesPerRunMax: number;
  private readonly nowMs: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly store: Pick<QueueStore, 'purgeExpired'>,
    private readonly options: ExpiryPurgeOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 60_000;
    this.batchMessages = options.batchMessages ?? 500;
    this.batchesPerRunMax = options.batchesPerRunMax ?? 20;
    this.nowMs = options.nowMs ?? Date.now;
    assert(this.intervalMs > 0 && this.batchMessages >= 1 && this.batchesPerRunMax >= 1, 'purge bounds are positive');
  }

  /** Runs every intervalMs until stop(); the timer does not keep the process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.running !== undefined) return; // the last run is still going: skip a beat
      this.running = this.runOnce().finally(() => (this.running = undefined));
      this.running.catch((error: unknown) => this.options.onError?.(error));
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run in progress (its failure is not this caller's). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** One run: the messages it removed. */
  async runOnce(): Promise<number> {
    const nowMs = Math.floor(this.nowMs());
    let removed = 0;
    for (let batch = 0; batch < this.batchesPerRunMax; batch++) {
      const count = await this.store.purgeExpired(nowMs, this.batchMessages);
      removed += count;
      if (count < this.batchMessages) break;
    }
    return removed;
  }
}
