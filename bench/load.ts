// Closed-loop load: `concurrency` workers each run one operation after another (no think
// time), first through a warm-up, then through a measured window. Every loop is bounded in
// time (warm-up, window and drain caps) and in count (opsMax, errorsMax) and stops by itself.
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

/** One operation of a worker; it throws when the server's reply is not the expected one. */
export type Operation = () => Promise<void>;

export interface LoadPlan {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /**
   * Slow operations at high concurrency complete in waves: the warm-up lasts until the first
   * completion and the window until it holds `windowOpsMin` completions, each capped at
   * this many milliseconds.
   */
  durationMaxMs: number;
  windowOpsMin: number;
  /** How long in-flight operations may take to finish after the window closes before they are aborted. */
  drainMs: number;
  opsMax: number;
  errorsMax: number;
}

export interface LoadResult {
  /** Operations that completed inside the measured window. */
  ops: number;
  /** Operations started over the whole run, warm-up and the drain after the window included. */
  opsStarted: number;
  /** Failed operations over the whole run (warm-up included). */
  errors: number;
  windowMs: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  firstError?: string;
  /** Operations still running a moment after the window closed, then aborted (slow scans). */
  abortedAfterWindow: number;
  /** Set when the run ended before its plan was met (error or count limit, window cap). */
  cutShort?: string;
}

const tickMs = 10;
const errorBackoffMs = 5;
const abortGraceMs = 5_000;

export function runClosedLoop(
  operations: readonly Operation[],
  plan: LoadPlan,
  abortInFlight: () => void,
): Promise<LoadResult> {
  return new ClosedLoop(plan).run(operations, abortInFlight);
}

class ClosedLoop {
  private phase: 'warmup' | 'measure' | 'stopped' = 'warmup';
  private readonly start = performance.now();
  private measureStart = 0;
  private measureEnd = 0;
  private started = 0;
  private inFlight = 0;
  private errors = 0;
  private firstError: string | undefined;
  private cutShort: string | undefined;
  private readonly latenciesMs: number[] = [];
  private signalStopped: () => void = () => {};
  private readonly stopped = new Promise<void>((resolve) => (this.signalStopped = resolve));

  constructor(private readonly plan: LoadPlan) {}

  async run(operations: readonly Operation[], abortInFlight: () => void): Promise<LoadResult> {
    const ticker = setInterval(() => this.advance(performance.now(), false), tickMs);
    const workers = Promise.all(operations.map((operation) => this.work(operation)));
    await this.stopped;
    clearInterval(ticker);
    let abortedAfterWindow = 0;
    if (!(await settlesWithin(workers, this.plan.drainMs))) {
      abortedAfterWindow = this.inFlight;
      abortInFlight();
      await settlesWithin(workers, abortGraceMs);
    }
    return this.result(abortedAfterWindow);
  }

  /** A method, so that the compiler does not narrow `phase` across awaits. */
  private running(): boolean {
    return this.phase !== 'stopped';
  }

  private async work(operation: Operation): Promise<void> {
    while (this.running()) {
      if (this.started >= this.plan.opsMax) {
        return this.stop(performance.now(), `reached ${this.plan.opsMax} operations`);
      }
      this.started++;
      const opStart = performance.now();
      this.inFlight++;
      const failure = await operation().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      this.inFlight--;
      if (failure !== undefined) {
        if (!this.running()) return; // aborted after the window closed
        this.errors++;
        this.firstError ??= failure;
        if (this.errors >= this.plan.errorsMax) this.stop(performance.now(), `${this.errors} errors`);
        await delay(errorBackoffMs);
        continue;
      }
      const opEnd = performance.now();
      if (this.phase === 'measure') this.latenciesMs.push(opEnd - opStart);
      this.advance(opEnd, true);
    }
  }

  // Both window edges fall on completions: slow operations at high concurrency finish in
  // waves, and a window from one completion to a completion at least `windowOpsMin` (= C)
  // completions later holds whole waves.
  private advance(now: number, completion: boolean): void {
    const { plan } = this;
    if (this.phase === 'warmup') {
      const elapsed = now - this.start;
      if (elapsed >= plan.warmupMs && (completion || elapsed >= plan.durationMaxMs)) {
        this.phase = 'measure';
        this.measureStart = now;
      }
    } else if (this.phase === 'measure') {
      const elapsed = now - this.measureStart;
      const held = this.latenciesMs.length;
      if (completion && elapsed >= plan.durationMs && held >= plan.windowOpsMin) this.stop(now);
      else if (elapsed >= plan.durationMaxMs) {
        this.stop(now, `window capped at ${plan.durationMaxMs} ms with ${held} of ${plan.windowOpsMin} completions`);
      }
    }
  }

  private stop(now: number, reason?: string): void {
    if (this.phase === 'stopped') return;
    if (this.phase === 'measure') this.measureEnd = now;
    this.phase = 'stopped';
    this.cutShort ??= reason;
    this.signalStopped();
  }

  private result(abortedAfterWindow: number): LoadResult {
    const windowMs = this.measureStart === 0 ? 0 : this.measureEnd - this.measureStart;
    const sorted = Float64Array.from(this.latenciesMs).sort();
    return {
      ops: sorted.length,
      opsStarted: this.started,
      errors: this.errors,
      windowMs,
      opsPerSec: windowMs > 0 ? (sorted.length * 1000) / windowMs : 0,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      ...(this.firstError === undefined ? {} : { firstError: this.firstError }),
      abortedAfterWindow,
      ...(this.cutShort === undefined ? {} : { cutShort: this.cutShort }),
    };
  }
}

/** Whether `promise` settled within `ms`; the timer never outlives the answer. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}
