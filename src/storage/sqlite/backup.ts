// Backup and restore of the SQLite engine's data directory, for `cerulean backup` / `restore`.
// A backup uses SQLite's online backup API over its own read-only connection: it copies the pages
// of one read transaction, so it holds every transaction committed before it began (a write is
// acknowledged only once committed) and nothing half-written, while the server keeps serving.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { databaseFile, databaseFileName } from './schema.js';

/** SQLite's page count per backup step is an int; this many copies the whole file in one step. */
const pagesPerStepAll = 0x7fffffff;

export interface SqliteBackupSummary {
  readonly bytes: number;
  readonly tables: number;
}

/** Writes a snapshot of the database under `location` to `file` (replaced atomically). */
export async function backupSqlite(location: string, file: string): Promise<SqliteBackupSummary> {
  const source = path.join(location, databaseFileName);
  if (!fs.existsSync(source)) throw new Error(`no Cerulean database in ${location} (${databaseFileName} is missing)`);
  const partial = `${file}.partial`;
  fs.rmSync(partial, { force: true });
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    // The first step copies 100 pages and the second all the rest, inside one read transaction
    // (a write between the two restarts the copy, which then finishes in one step).
    await db.backup(partial, { progress: () => pagesPerStepAll });
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
  const tables = countTables(partial);
  syncFile(partial);
  fs.renameSync(partial, file);
  syncFile(path.dirname(path.resolve(file)));
  return { bytes: fs.statSync(file).size, tables };
}

/** Puts the database of backup `file` into `location`, which must be empty or absent. */
export function restoreSqlite(file: string, location: string): { tables: number } {
  if (fs.existsSync(location) && fs.readdirSync(location).length > 0) {
    throw new Error(`${location} is not empty; restore only into an empty or new directory`);
  }
  if (!fs.existsSync(file)) throw new Error(`no such backup file: ${file}`);
  const tables = countTables(file);
  const target = databaseFile(location); // creates the directory
  const partial = `${target}.partial`;
  fs.copyFileSync(file, partial); // the backup is a closed file: a plain copy is a faithful one
  syncFile(partial);
  fs.renameSync(partial, target);
  syncFile(location);
  return { tables };
}

/** Checks that `file` is an intact Cerulean database and returns how many tables it holds. */
function countTables(file: string): number {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new Error(`${file} is not a Cerulean backup: ${(error as Error).message}`);
  }
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`${file} is damaged: ${String(check)}`);
    return (db.prepare('SELECT count(*) AS n FROM tables').get() as { n: number }).n;
  } catch (error) {
    throw new Error(`${file} is not a Cerulean backup: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
