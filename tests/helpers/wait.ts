// Waiting for something a server does, instead of sleeping for as long as it takes on a quiet
// machine: on a loaded one (load 16 on 2 cores) the same work takes many times longer.
import { setTimeout as sleep } from 'node:timers/promises';

/** Long enough that only a server that will never get there reaches it, even on a loaded machine. */
export const waitTimeoutMsDefault = 120_000;

/** Polls `condition` every `pollMs` until it holds; fails naming `what` after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean,
  what: string,
  timeoutMs = waitTimeoutMsDefault,
  pollMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(pollMs);
  }
}
