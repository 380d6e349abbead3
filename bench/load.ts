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
   * Slow operations at high concurrency complete in waves; the warm-up lasts until every
   * worker finished once and the window until it holds `windowOpsMin` completions, each
   * capped at this many milliseconds.
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

export async function runClosedLoop(
  operations: readonly Operation[],
  plan: LoadPlan,
  abortInFlight: () => void,
): Promise<LoadResult> {
  let phase: 'warmup' | 'measure' | 'stopped' = 'warmup';
  const start = performance.now();
  let measureStart = 0;
  let measureEnd = 0;
  let started = 0;
  let completed = 0;
  let errors = 0;
  let firstError: string | undefined;
  let inFlight = 0;
  let abortedAfterWindow = 0;
  let cutShort: string | undefined;
  const latenciesMs: number[] = [];
  let signalStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (signalStopped = resolve));

  const stop = (now: number, reason?: string): void => {
    if (phase === 'stopped') return;
    if (phase === 'measure') measureEnd = now;
    phase = 'stopped';
    cutShort ??= reason;
    signalStopped();
  };

  // Both window edges fall on completions: slow operations at high concurrency finish in
  // waves, and a window from one completion to another holds whole waves.
  const advance = (now: number, completion: boolean): void => {
    if (phase === 'warmup') {
      const elapsed = now - start;
      const warmedUp = completion && completed >= plan.concurrency;
      if (elapsed >= plan.warmupMs && (warmedUp || elapsed >= plan.durationMaxMs)) {
        phase = 'measure';
        measureStart = now;
      }
    } else if (phase === 'measure') {
      const elapsed = now - measureStart;
      const enough = completion && elapsed >= plan.durationMs && latenciesMs.length >= plan.windowOpsMin;
      if (enough) stop(now);
      else if (elapsed >= plan.durationMaxMs) {
        stop(now, `window capped at ${plan.durationMaxMs} ms with ${latenciesMs.length} of ${plan.windowOpsMin} completions`);
      }
    }
  };

  // A function, so that the compiler does not narrow `phase` across awaits.
  const running = (): boolean => phase !== 'stopped';

  const work = async (operation: Operation): Promise<void> => {
    while (running()) {
      if (started >= plan.opsMax) return stop(performance.now(), `reached ${plan.opsMax} operations`);
      started++;
      const opStart = performance.now();
      inFlight++;
      const failure = await operation().then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      inFlight--;
      if (failure !== undefined) {
        if (!running()) return; // aborted after the window closed
        errors++;
        firstError ??= failure;
        if (errors >= plan.errorsMax) stop(performance.now(), `${errors} errors`);
        await delay(errorBackoffMs);
        continue;
      }
      const opEnd = performance.now();
      completed++;
      if (phase === 'measure') latenciesMs.push(opEnd - opStart);
      advance(opEnd, true);
    }
  };

  const ticker = setInterval(() => advance(performance.now(), false), tickMs);
  const workers = Promise.all(operations.map(work));
  await stopped;
  clearInterval(ticker);
  if (!(await settlesWithin(workers, plan.drainMs))) {
    abortedAfterWindow = inFlight;
    abortInFlight();
    await settlesWithin(workers, abortGraceMs);
  }

  const windowMs = measureStart === 0 ? 0 : measureEnd - measureStart;
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    ops: sorted.length,
    errors,
    windowMs,
    opsPerSec: windowMs > 0 ? (sorted.length * 1000) / windowMs : 0,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    ...(firstError === undefined ? {} : { firstError }),
    abortedAfterWindow,
    ...(cutShort === undefined ? {} : { cutShort }),
  };
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
