// A sweep: the periodic removal of what no request will read again. Every `intervalMs`, batches of
// one sweep step until a batch comes back short or the run's bound is reached, so one run's work is
// bounded and the rest waits for the next. The composition root (compose.ts) runs two, one sweep
// name for both: the queue store's purgeExpired (expired messages are never returned anyway; this
// only frees their space) and the blob store's reclaimContent (stale staged blocks, unreferenced
// content, expired soft-deleted blobs). It stops them before closing the stores.
import assert from 'node:assert/strict';

/** One step of a sweep: removes at most `limit` items that are gone by `nowMs`, and says how many it removed. */
export type SweepStep = (nowMs: number, limit: number) => Promise<number>;

export interface SweepOptions {
  /** Between runs; default one minute. */
  readonly intervalMs?: number;
  /** Items (messages, blocks, content) one step removes at most; default 500. */
  readonly batchMessages?: number;
  /** Calls one run makes at most; default 20 (10,000 items a run). */
  readonly batchesPerRunMax?: number;
  /** The clock (tests inject one); default Date.now. */
  readonly nowMs?: () => number;
  /** Hears of a failed run (the next one tries again). */
  readonly onError?: (error: unknown) => void;
}

export class Sweep {
  private readonly intervalMs: number;
  private readonly batchMessages: number;
  private readonly batchesPerRunMax: number;
  private readonly nowMs: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly step: SweepStep,
    private readonly options: SweepOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 60_000;
    this.batchMessages = options.batchMessages ?? 500;
    this.batchesPerRunMax = options.batchesPerRunMax ?? 20;
    this.nowMs = options.nowMs ?? Date.now;
    assert(this.intervalMs > 0 && this.batchMessages >= 1 && this.batchesPerRunMax >= 1, 'sweep bounds are positive');
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

  /** One run: the items it removed. */
  async runOnce(): Promise<number> {
    const nowMs = Math.floor(this.nowMs());
    let removed = 0;
    for (let batch = 0; batch < this.batchesPerRunMax; batch++) {
      const count = await this.step(nowMs, this.batchMessages);
      removed += count;
      if (count < this.batchMessages) break;
    }
    return removed;
  }
}
