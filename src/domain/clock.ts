// The services' clock (queue visibility and expiry, blob leases). Stores never read time
// themselves (storage/queue-store.ts), so tests can move time without sleeping.
import { readFileSync } from 'node:fs';

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/**
 * The test clock: the system clock plus an offset in milliseconds read from `path` (a decimal
 * number; a missing or unreadable file is offset 0) on every call, so a test moves time forward
 * by writing the file. It is enabled only by the environment variable CERULEAN_TEST_CLOCK_FILE,
 * which only whoever starts the process can set: nothing a client sends can move the clock, and
 * a production server started without the variable never reads the file. It moves only the queue
 * service's notion of now (visibility, expiry, reported times), not request-date or SAS checks.
 */
export function offsetFileClock(path: string): Clock {
  return {
    nowMs() {
      let offsetMs = 0;
      try {
        const value = Number(readFileSync(path, 'utf8').trim());
        if (Number.isFinite(value)) offsetMs = Math.trunc(value); // the store takes whole milliseconds
      } catch {
        // no file yet: no offset
      }
      return Date.now() + offsetMs;
    },
  };
}

export const testClockVariable = 'CERULEAN_TEST_CLOCK_FILE';

/** The clock the server uses: the test clock only when the variable names a file. */
export function clockFromEnvironment(env: NodeJS.ProcessEnv): Clock {
  const path = env[testClockVariable];
  return path === undefined || path === '' ? systemClock : offsetFileClock(path);
}
