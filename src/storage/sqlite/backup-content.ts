// The blob content of a data-directory backup (backup.ts). The snapshot holds the rows, inline
// content (64 KiB or less) among them; larger content is in files beside the database
// (blob-content.ts), which a backup adds to the same file, as rows of two tables of its own:
//
// - cerulean_backup_files: one row per content file the snapshot's rows name (block rows of the
//   lists its blobs name, staged blocks), with its size and SHA-256;
// - cerulean_backup_chunks: its bytes, in pieces of at most 1 MiB by (content id, seq).
//
// One file rather than a directory: a backup is then one thing to copy, keep and name
// ("nightly.sqlite"), written as `<file>.partial` and renamed whole, so a file of its name is always
// complete; and it stays an SQLite database that `sqlite3` opens. Pieces of 1 MiB keep memory
// bounded on both sides: a piece is read, hashed and inserted, then the next (a 1 GiB blob never
// needs more than one piece in memory).
//
// Why a file the snapshot names is still there when it is copied: a file is renamed into place
// whole and never changes (blob-content.ts), and reclaimContent unlinks it only after every row
// naming it is deleted, then a grace (one hour by default) after that, the garbage stamp being reset
// whenever a row naming it goes (sqlite/blob/writer.ts; docs/blob-storage.md). So a file the snapshot names
// stays at least a grace after the snapshot's read transaction began; once open it stays readable
// whole even if unlinked (POSIX). A backup that takes longer than the grace could find one gone: it
// is told apart from damage by the live database (no row names it any more) and backup.ts then takes
// a new snapshot. A reader's pins (blob-store.ts) are of no use here: they live in the server process.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { contentFilePath } from './blob/content.js';

const filesTable = 'cerulean_backup_files';
const chunksTable = 'cerulean_backup_chunks';
/** The bytes of one row of cerulean_backup_chunks at most: what a backup or a restore holds at once. */
const chunkBytesMax = 1024 * 1024;
/** Content files handled per query of cerulean_backup_files. */
const filesPerPage = 256;

export interface ContentSummary {
  /** Content files in the backup. */
  readonly files: number;
  readonly bytes: number;
}

/** A content file the snapshot names is not in the data directory (reclaimed since, or lost). */
export class ContentFileMissingError extends Error {
  override readonly name = 'ContentFileMissingError';
  constructor(readonly contentId: string) {
    super(`blob content ${contentId} is named by the snapshot, but its file is missing`);
  }
}

const contentSchema = `
CREATE TABLE ${filesTable} (content_id TEXT PRIMARY KEY, size_bytes INTEGER NOT NULL, sha256 TEXT);
CREATE TABLE ${chunksTable} (content_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL);
CREATE UNIQUE INDEX ${chunksTable}_by_piece ON ${chunksTable} (content_id, seq);
`;

/** Content ids (with sizes) the rows name that are not inline rows: those in files. */
function namedFilesSql(db: Database.Database): string | undefined {
  if (!hasTable(db, 'blob_blocks')) return undefined; // a database from before the Blob service
  const inline = hasTable(db, 'blob_inline') ? 'WHERE content_id NOT IN (SELECT content_id FROM blob_inline)' : '';
  return (
    'SELECT content_id, max(content_size) AS size_bytes FROM (SELECT content_id, content_size FROM blob_blocks ' +
    `UNION ALL SELECT content_id, content_size FROM blob_staged) ${inline} GROUP BY content_id`
  );
}

/**
 * Adds to the snapshot `db` (a connection to the backup's partial file) every content file of
 * `location` its rows name. Throws ContentFileMissingError for a file that is not there.
 */
export async function addContent(location: string, db: Database.Database): Promise<ContentSummary> {
  // Nothing here needs to survive a crash before the final fsync (backup.ts): the file is `.partial`.
  db.pragma('synchronous = OFF');
  db.exec(contentSchema);
  dropDeadLists(db);
  const named = namedFilesSql(db);
  if (named !== undefined) db.exec(`INSERT INTO ${filesTable} (content_id, size_bytes) ${named}`);
  const page = db.prepare(
    `SELECT content_id, size_bytes FROM ${filesTable} WHERE content_id > ? ORDER BY content_id LIMIT ${filesPerPage}`,
  );
  const insert = db.prepare(`INSERT INTO ${chunksTable} (content_id, seq, bytes) VALUES (?, ?, ?)`);
  const note = db.prepare(`UPDATE ${filesTable} SET sha256 = ? WHERE content_id = ?`);
  const buffer = Buffer.allocUnsafe(chunkBytesMax);
  let files = 0;
  let bytes = 0;
  for (let after = ''; ;) {
    const rows = page.all(after) as { content_id: string; size_bytes: number }[];
    if (rows.length === 0) break;
    for (const row of rows) {
      const sha256 = await copyFileIn(location, row.content_id, row.size_bytes, buffer, (seq, chunk) =>
        insert.run(row.content_id, seq, chunk),
      );
      note.run(sha256, row.content_id);
      files++;
      bytes += row.size_bytes;
    }
    after = rows.at(-1)!.content_id;
  }
  return { files, bytes };
}

/**
 * Drops from the snapshot the block lists no blob names (a blob rewritten or deleted since): the
 * server keeps them a while only for its readers in flight (blob-store.ts), and a restored server
 * has none. Their content is not copied, and no row of the backup names content it lacks.
 */
function dropDeadLists(db: Database.Database): void {
  if (!hasTable(db, 'blob_blocks')) return;
  db.exec(
    'DELETE FROM blob_blocks WHERE list_id NOT IN (SELECT list_id FROM blobs); ' +
      'DELETE FROM blob_lists WHERE id NOT IN (SELECT list_id FROM blobs);',
  );
}

/** Reads one content file in pieces of `buffer`'s size, passing each to `put`; its SHA-256. */
async function copyFileIn(
  location: string,
  id: string,
  sizeBytes: number,
  buffer: Buffer,
  put: (seq: number, chunk: Buffer) => void,
): Promise<string> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(contentFilePath(location, id), 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ContentFileMissingError(id);
    throw error;
  }
  // Open, the file is read whole even if it is reclaimed meanwhile; it never changes once named.
  try {
    const hash = createHash('sha256');
    let offset = 0;
    for (let seq = 0; ; seq++) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      put(seq, chunk); // SQLite copies the bytes: the buffer is reused for the next piece
      offset += bytesRead;
    }
    if (offset !== sizeBytes)
      throw new Error(`blob content ${id}: its file holds ${offset} bytes, its rows say ${sizeBytes}`);
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

/** Whether a row of the live database `db` still names content `id` (else it was reclaimed). */
export function contentStillNamed(db: Database.Database, id: string): boolean {
  if (!hasTable(db, 'blob_blocks')) return false;
  const named = (table: string) => db.prepare(`SELECT 1 FROM ${table} WHERE content_id = ? LIMIT 1`).get(id);
  return named('blob_blocks') !== undefined || named('blob_staged') !== undefined;
}

/**
 * Writes the content files a backup holds into `location` (new and empty), each fsynced, then their
 * directories, checking each file's size and SHA-256; then drops the backup's own tables from `db`
 * (the database being restored, not yet in place). Refuses a backup whose rows name content it
 * does not hold (one made before backups held blob content).
 */
export function writeContentOut(db: Database.Database, location: string, file: string): ContentSummary {
  const named = namedFilesSql(db);
  const held = hasTable(db, filesTable)
    ? `SELECT content_id FROM ${filesTable} WHERE sha256 IS NOT NULL`
    : "SELECT '' WHERE 0"; // no NULL: NOT IN a list holding NULL is never true
  const missing =
    named === undefined
      ? 0
      : (db.prepare(`SELECT count(*) AS n FROM (${named}) WHERE content_id NOT IN (${held})`).get() as { n: number }).n;
  if (missing > 0)
    throw new Error(
      `${file} does not hold ${missing} pieces of blob content its blobs need ` +
        '(a backup made before backups held blob content): restore refused',
    );
  if (!hasTable(db, filesTable)) return { files: 0, bytes: 0 };
  const page = db.prepare(
    `SELECT content_id, size_bytes, sha256 FROM ${filesTable} ` +
      `WHERE content_id > ? ORDER BY content_id LIMIT ${filesPerPage}`,
  );
  const chunks = db.prepare(`SELECT bytes FROM ${chunksTable} WHERE content_id = ? ORDER BY seq`).pluck();
  const directories = new Set<string>();
  let files = 0;
  let bytes = 0;
  for (let after = ''; ;) {
    const rows = page.all(after) as { content_id: string; size_bytes: number; sha256: string }[];
    if (rows.length === 0) break;
    for (const row of rows) {
      const target = contentFilePath(location, row.content_id);
      directories.add(path.dirname(target));
      writeFileOut(target, chunks.iterate(row.content_id) as IterableIterator<Buffer>, row, file);
      files++;
      bytes += row.size_bytes;
    }
    after = rows.at(-1)!.content_id;
  }
  // The files' names are durable before the database that names them is put in place.
  if (directories.size > 0) for (const directory of [...directories, path.join(location, 'blobs')]) syncPath(directory);
  db.exec(`DROP TABLE ${chunksTable}; DROP TABLE ${filesTable};`);
  return { files, bytes };
}

function writeFileOut(
  target: string,
  chunks: IterableIterator<Buffer>,
  expected: { readonly content_id: string; readonly size_bytes: number; readonly sha256: string },
  file: string,
): void {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const fd = fs.openSync(target, 'wx');
  try {
    const hash = createHash('sha256');
    let sizeBytes = 0;
    for (const chunk of chunks) {
      hash.update(chunk);
      for (let written = 0; written < chunk.length;)
        written += fs.writeSync(fd, chunk, written, chunk.length - written);
      sizeBytes += chunk.length;
    }
    if (sizeBytes !== expected.size_bytes || hash.digest('hex') !== expected.sha256)
      throw new Error(`${file} is damaged: blob content ${expected.content_id} differs from its size or SHA-256`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** fsync of a file or a directory (a directory's: the entries created in it are durable). */
export function syncPath(target: string): void {
  const fd = fs.openSync(target, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
