// A few transfers at once: blob and file commands move many small items, where one request at a
// time would leave the connection idle between round trips.

/** Transfers in flight by default: enough to hide round trips, few enough for a shared machine. */
export const transfersInFlightDefault = 8;

/**
 * Runs `work` over `items` with at most `inFlight` at once, in order of the items; stops taking new
 * ones once `stopped()` says so, and waits for those under way. The first failure is thrown after
 * the others under way have settled.
 */
export async function forEachInPool<T>(
  items: Iterable<T> | AsyncIterable<T>,
  inFlight: number,
  work: (item: T) => Promise<void>,
  stopped: () => boolean = () => false,
): Promise<void> {
  const running = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  for await (const item of items) {
    if (failure !== undefined || stopped()) break;
    const task: Promise<void> = work(item).then(
      () => void running.delete(task),
      (error: unknown) => {
        running.delete(task);
        failure ??= { error };
      },
    );
    running.add(task);
    if (running.size >= inFlight) await Promise.race(running);
  }
  await Promise.all(running);
  if (failure !== undefined) throw failure.error;
}
