// One server per data directory: the first holds `cerulean.lock` in the directory until it exits; a
// second is refused with one line.
//
// The lock is one the kernel releases with the process: `cerulean.lock` is a small SQLite database
// that the server holds in exclusive locking mode (an fcntl lock on Unix, LockFileEx on Windows),
// taken with `BEGIN EXCLUSIVE` and never given back until the process ends. Whether the holder
// exited, was killed with -9 or the machine lost power, the lock is gone with it, and nothing needs
// cleaning up by hand. A PID in the file is not enough: after a reboot another node process may have
// that PID. Node has no flock of its own and a native addon only for this would be one more build;
// better-sqlite3 is the engine's own driver already. The file itself stays after exit (deleting it
// could leave a starting server holding a lock on a name that no longer exists).
//
// The holder's PID is written into the database header's user_version field so that the refusal can
// name it; it is only ever read for that message, never to decide whether the lock is held.
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const lockFileName = 'cerulean.lock';

/** The open lock databases of this process: closing one (or its collection as garbage) would release the lock. */
const held: Database.Database[] = [];

/** Holds the lock of `location` until the process exits; throws an Error naming the holder when it is taken. */
export function lockLocation(location: string): void {
  mkdirSync(location, { recursive: true });
  const path = join(location, lockFileName);
  for (let attempt = 0; ; attempt++) {
    const db = new Database(path, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
      db.pragma(`user_version = ${process.pid}`);
      db.exec('COMMIT');
      held.push(db);
      return;
    } catch (error) {
      db.close();
      const code = (error as { code?: unknown }).code;
      if (code === 'SQLITE_BUSY') {
        const holder = lockHolder(path);
        const named = holder === undefined ? '' : ` (PID ${holder})`;
        throw new Error(
          `${location} is in use by another Cerulean server${named}; stop it or choose another --location`,
        );
      }
      // Earlier versions wrote the holder's PID as text: such a file is no lock the kernel holds.
      if (code === 'SQLITE_NOTADB' && attempt === 0) {
        rmSync(path, { force: true });
        continue;
      }
      throw error;
    }
  }
}

/** The PID the holder wrote into the header (user_version, bytes 60–63 big-endian), if it can be read. */
function lockHolder(path: string): number | undefined {
  try {
    const header = readFileSync(path).subarray(0, 100);
    if (header.length < 100 || header.toString('latin1', 0, 16) !== 'SQLite format 3\u0000') return undefined;
    const pid = header.readUInt32BE(60);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
