// Backup and restore of the SQLite engine's data directory, for `cerulean backup` / `restore`.
// A backup uses SQLite's online backup API over its own read-only connection: it copies the pages
// of one read transaction, so it holds every transaction committed before it began (a write is
// acknowledged only once committed) and nothing half-written, while the server keeps serving. The
// blob content files its rows name are then added into the same file (backup-content.ts says how,
// and why they are all still there).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  ContentFileMissingError,
  addContent,
  contentStillNamed,
  syncPath,
  writeContentOut,
  type ContentSummary,
} from './backup-content.js';
import { databaseFile, databaseFileName } from './schema.js';

/** SQLite's page count per backup step is an int; this many copies the whole file in one step. */
const pagesPerStepAll = 0x7fffffff;
/** Snapshots taken at most when content files the last one named were reclaimed before they were copied. */
const snapshotAttemptsMax = 3;

/** What a database holds, per service, for a backup's or a restore's summary. */
export interface ServiceCounts {
  readonly tables: number;
  readonly entities: number;
  readonly queues: number;
  readonly messages: number;
  readonly containers: number;
  /** Base blobs (not snapshots) of the containers not deleted. */
  readonly blobs: number;
}

export interface SqliteBackupSummary {
  readonly bytes: number;
  readonly tables: number;
  readonly counts: ServiceCounts;
  /** The blob content files in the backup. */
  readonly content: ContentSummary;
}

/** For tests: runs between the snapshot and the copy of the content files it names. */
export interface SqliteBackupHooks {
  readonly afterSnapshot?: (attempt: number) => Promise<void>;
}

/** Writes a snapshot of the data directory `location` to `file` (replaced atomically). */
export async function backupSqlite(
  location: string,
  file: string,
  hooks: SqliteBackupHooks = {},
): Promise<SqliteBackupSummary> {
  const source = path.join(location, databaseFileName);
  if (!fs.existsSync(source)) throw new Error(`no Cerulean database in ${location} (${databaseFileName} is missing)`);
  const partial = `${file}.partial`;
  let content: ContentSummary | undefined;
  for (let attempt = 1; content === undefined; attempt++) {
    fs.rmSync(partial, { force: true });
    try {
      await snapshot(source, partial);
      await hooks.afterSnapshot?.(attempt);
      content = await withDatabase(partial, {}, (db) => addContent(location, db));
    } catch (error) {
      fs.rmSync(partial, { force: true });
      if (!(error instanceof ContentFileMissingError)) throw error;
      const named = withDatabase(source, { readonly: true }, (db) => contentStillNamed(db, error.contentId));
      if (named) throw new Error(`the data directory is damaged: ${error.message}`);
      // Reclaimed since the snapshot, a grace after its rows went: the copy took that long.
      if (attempt === snapshotAttemptsMax)
        throw new Error(
          `${error.message}: it was reclaimed before it was copied, ${attempt} times ` +
            '(the backup takes longer than the server keeps unnamed content, one hour by default)',
        );
    }
  }
  const counts = countTables(partial);
  syncPath(partial);
  fs.renameSync(partial, file);
  syncPath(path.dirname(path.resolve(file)));
  return { bytes: fs.statSync(file).size, tables: counts.tables, counts, content };
}

/** Copies the database `source` to `partial` in one read transaction. */
async function snapshot(source: string, partial: string): Promise<void> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    // The first step copies 100 pages and the second all the rest, inside one read transaction
    // (a write between the two restarts the copy, which then finishes in one step).
    await db.backup(partial, { progress: () => pagesPerStepAll });
  } finally {
    db.close();
  }
  toRollbackJournal(partial);
}

/**
 * A copy of the database keeps its WAL mode, and a WAL database opened read-only (to check it)
 * leaves `-shm` and `-wal` files beside it, which a writer closing last would remove. A backup is
 * one closed file: it is put in rollback-journal mode (the server puts a restored database back in
 * WAL mode when it opens it), so no reader of it leaves anything beside it.
 */
function toRollbackJournal(file: string): void {
  withDatabase(file, {}, (db) => db.pragma('journal_mode = DELETE'));
}

/**
 * Puts the backup `file` into `location`, which must be empty or absent: the blob content files
 * first, each on disk, then the database that names them.
 */
export function restoreSqlite(
  file: string,
  location: string,
): { tables: number; counts: ServiceCounts; content: ContentSummary } {
  if (fs.existsSync(location) && fs.readdirSync(location).length > 0) {
    throw new Error(`${location} is not empty; restore only into an empty or new directory`);
  }
  if (!fs.existsSync(file)) throw new Error(`no such backup file: ${file}`);
  if (!startsAsSqlite(file)) throw new Error(`${file} is not a Cerulean backup: not an SQLite database`);
  const target = databaseFile(location); // creates the directory
  const partial = `${target}.partial`;
  fs.copyFileSync(file, partial); // the backup is a closed file: a plain copy is a faithful one
  let content: ContentSummary;
  let counts: ServiceCounts;
  try {
    // Checked in the copy, never opened where it lies (a backup made in WAL mode would get -shm
    // and -wal files beside it).
    counts = countTables(partial, file);
    toRollbackJournal(partial);
    content = withDatabase(partial, {}, (db) => {
      const written = writeContentOut(db, location, file);
      db.exec('VACUUM'); // the pages the content held are free now: give them back
      return written;
    });
  } catch (error) {
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${partial}${suffix}`, { force: true });
    throw error;
  }
  syncPath(partial);
  fs.renameSync(partial, target);
  syncPath(location);
  return { tables: counts.tables, counts, content };
}

function withDatabase<T>(file: string, options: Database.Options, use: (db: Database.Database) => T): T {
  const db = new Database(file, { ...options, fileMustExist: true });
  let closeNow = true;
  try {
    const result = use(db);
    if (result instanceof Promise) {
      closeNow = false;
      return result.finally(() => db.close()) as T;
    }
    return result;
  } finally {
    if (closeNow) db.close();
  }
}

/**
 * Checks that `file` is an intact Cerulean database and returns what it holds per service; messages
 * name it `label`.
 */
function countTables(file: string, label = file): ServiceCounts {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new Error(`${label} is not a Cerulean backup: ${(error as Error).message}`);
  }
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`${label} is damaged: ${String(check)}`);
    return countServices(db);
  } catch (error) {
    throw new Error(`${label} is not a Cerulean backup: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

/** Rows per service; a service whose tables an older database lacks counts 0. */
function countServices(db: Database.Database): ServiceCounts {
  const present = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
  );
  const count = (table: string, sql: string) => (present.has(table) ? (db.prepare(sql).get() as { n: number }).n : 0);
  const live = present.has('blob_containers_deleted') ? 'id NOT IN (SELECT id FROM blob_containers_deleted)' : '1 = 1';
  return {
    tables: (db.prepare('SELECT count(*) AS n FROM tables').get() as { n: number }).n,
    entities: count('entities', 'SELECT count(*) AS n FROM entities'),
    queues: count('queues', 'SELECT count(*) AS n FROM queues'),
    messages: count('messages', 'SELECT count(*) AS n FROM messages'),
    containers: count('blob_containers', `SELECT count(*) AS n FROM blob_containers WHERE ${live}`),
    blobs: count(
      'blobs',
      `SELECT count(*) AS n FROM blobs WHERE snapshot = '' AND container_id IN (SELECT id FROM blob_containers WHERE ${live})`,
    ),
  };
}

/** The 16-byte header every SQLite database file starts with (sqlite.org/fileformat.html). */
const sqliteHeader = Buffer.from('SQLite format 3\0', 'latin1');

function startsAsSqlite(file: string): boolean {
  const head = Buffer.alloc(sqliteHeader.length);
  const fd = fs.openSync(file, 'r');
  try {
    return fs.readSync(fd, head, 0, head.length, 0) === head.length && head.equals(sqliteHeader);
  } finally {
    fs.closeSync(fd);
  }
}
