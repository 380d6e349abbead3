// The SQLite database: its file, pragmas and schema, shared by the reading and the writing side.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { SettingKey } from '../table-store.js';
import { blobSchema } from './blob/schema.js';
import { blobTagsSchema } from './blob/tags.js';
import { rebuildIndexesOfEarlierForm } from './property-indexes.js';
import { queueSchema } from './queue-schema.js';

export const databaseFileName = 'cerulean.sqlite';
/**
 * Page cache per connection, bounded whatever the data size (the OS page cache holds the rest).
 * The reader's holds the interior pages of a 10M-entity index (~50 MiB), so a point read touches
 * one leaf outside it; the writer mostly appends and needs less, and so do the scan threads, which
 * read leaves in order.
 */
const cacheKiB = { reader: 64 * 1024, writer: 32 * 1024, scanner: 8 * 1024 } as const;

const schema = `
CREATE TABLE IF NOT EXISTS tables (
  account TEXT NOT NULL,
  name_lower TEXT NOT NULL,
  name TEXT NOT NULL,
  id INTEGER NOT NULL UNIQUE,
  PRIMARY KEY (account, name_lower)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entities (
  table_id INTEGER NOT NULL,
  pk BLOB NOT NULL,
  rk BLOB NOT NULL,
  ts INTEGER NOT NULL,
  props BLOB NOT NULL, -- JSONB of the minimal-metadata properties object
  PRIMARY KEY (table_id, pk, rk)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS settings (
  account TEXT NOT NULL,
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (account, scope, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
`;

export function databaseFile(location: string): string {
  fs.mkdirSync(location, { recursive: true });
  return path.join(location, databaseFileName);
}

/**
 * Opens the database. The writer creates the schema; in WAL mode with synchronous=FULL every
 * COMMIT has fsync'ed the log before it returns.
 */
export function openDatabase(file: string, role: keyof typeof cacheKiB): Database.Database {
  const db = new Database(file, { readonly: role !== 'writer' && file !== ':memory:' });
  if (role === 'writer') {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(schema);
    db.exec(queueSchema);
    db.exec(blobSchema);
    db.exec(blobTagsSchema);
    rebuildIndexesOfEarlierForm(db);
  }
  db.pragma(`cache_size = -${cacheKiB[role]}`);
  return db;
}

/**
 * The LIMIT clause of a statement whose limit is bound per run: `LIMIT ? + 0`, never `LIMIT ?`.
 * SQLite (3.53) reads the value bound to a bare LIMIT parameter while it plans the statement, so
 * binding that parameter again marks the statement expired and its next run parses and plans it
 * anew; better-sqlite3 binds every parameter on every run, so every run did (a CPU profile of
 * Peek Messages showed SQLite's parser and planner). An expression is planned once, for any value.
 */
export function boundLimit(parameter = '?'): string {
  return `LIMIT ${parameter} + 0`;
}

/** SQL both sides use to find a table's id. */
export const selectTableSql = 'SELECT name, id FROM tables WHERE account = ? AND name_lower = ?';

/**
 * Where a setting lives in the settings table. Account settings keep the scope name 'service'
 * their rows had before settings were typed, so existing data directories keep them.
 */
export function settingRow(key: SettingKey): { readonly scope: string; readonly name: string } {
  return key.scope === 'account'
    ? { scope: 'service', name: key.name }
    : { scope: 'table', name: key.table.toLowerCase() };
}

export function tableCacheKey(account: string, name: string): string {
  return `${account}\u0000${name.toLowerCase()}`;
}
