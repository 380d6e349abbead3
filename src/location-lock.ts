// One server per data directory: the first holds `cerulean.lock` (its PID) in the directory until
// it exits; a second is refused with one line. A lock whose process is gone (killed with -9, the
// machine restarted) is taken over, so nothing needs cleaning up by hand.
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';

export const lockFileName = 'cerulean.lock';

/** Holds the lock of `location` until the process exits; throws an Error naming the holder when it is taken. */
export function lockLocation(location: string): void {
  mkdirSync(location, { recursive: true });
  const path = join(location, lockFileName);
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = lockHolder(path);
      if (holder !== undefined) {
        throw new Error(
          `${location} is in use by another Cerulean server (PID ${holder}); stop it or choose another --location`,
        );
      }
      rmSync(path, { force: true }); // left by a process that is gone: take it over
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    process.once('exit', () => releaseIfOurs(path));
    return;
  }
  throw new Error(`${location}: another server is starting on it at the same time`);
}

/** The PID of a live process holding the lock file, or undefined when it is stale or unreadable. */
function lockHolder(path: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's; ESRCH: gone.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return isCerulean(pid) ? pid : undefined;
}

/** A reused PID names another program: where /proc tells, the holder must be a node process. */
function isCerulean(pid: number): boolean {
  try {
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return /node|cerulean/i.test(commandLine);
  } catch {
    return true; // no /proc (macOS, Windows): trust the PID
  }
}

function releaseIfOurs(path: string): void {
  try {
    if (Number(readFileSync(path, 'utf8').trim()) === process.pid) rmSync(path, { force: true });
  } catch {
    // already gone
  }
}
