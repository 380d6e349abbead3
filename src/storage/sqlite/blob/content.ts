// The bytes of blob content, beside the SQLite database: one file per ContentRef at
// `<location>/blobs/<first two hex digits of the id>/<id>` (256 directories, created once, so no
// directory grows past 1/256 of the files and a sweep walks one of them per step).
//
// A write streams into `<id>` (created exclusively), then fsyncs the file and its directory at
// once before it resolves: the content and its name are both on disk before any row refers to them
// (the rows' commit fsyncs the write-ahead log after). No temporary name is needed, because a file
// is only ever read through a row that names it: a crash at any point leaves no file, or a file
// (whole or partial) no row names yet, which the sweep (sweep()) finds and reclaimContent removes
// after the grace. `<id>.tmp` files, which earlier versions wrote and renamed, are removed likewise.
//
// Files are read with streams on the calling thread; a file removed while a reader has it open
// stays readable to that reader (POSIX unlink semantics).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createReadStream, type Stats } from 'node:fs';
import { mkdir, open, opendir, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { ContentRef } from '../../blob-store.js';
import { assertContentId, contentIdPattern } from '../../blob-rows.js';

/** Bytes written to a file at once: small chunks from the source are gathered up to this. */
const writeChunkBytes = 256 * 1024;
/**
 * The size of the chunks a reader yields: a 1 MiB Get Blob is one read, not four (each a trip
 * through the thread pool). A reader holds about this much at a time.
 */
export const readChunkBytes = 1024 * 1024;

/** Where content lives: files (on disk) or memory (an in-memory store). */
export interface ContentFiles {
  write(source: AsyncIterable<Uint8Array>): Promise<ContentRef>;
  /** The bytes [start, endExclusive) of one piece of content. */
  read(id: string, start: number, endExclusive: number): AsyncIterable<Buffer>;
  exists(id: string): Promise<boolean>;
  remove(ids: readonly string[]): Promise<void>;
  /**
   * One step of the sweep: ids of content older than `beforeMs` (by its write time) from the next
   * slices of the store, until it has looked at `entriesMax` or at all of them, removing temporary
   * files of that age (writes that never finished) on the way.
   */
  sweep(beforeMs: number, entriesMax: number): Promise<string[]>;
}

export function newContentId(): string {
  return randomUUID().replaceAll('-', '');
}

/** A file written to within this long is safe from the sweep for about its grace (keepFromSweep). */
const mtimeFreshMs = 1_000;
/** Files under a temporary name: writes of earlier versions that never finished. */
const tempSuffix = '.tmp';

export class DiskContent implements ContentFiles {
  private sweepNext = 0;

  private readonly root: string;

  private constructor(private readonly location: string) {
    this.root = contentRoot(location);
  }

  /** Creates `<location>/blobs` and its 256 directories (fsynced) if they are not there yet. */
  static async open(location: string): Promise<DiskContent> {
    const root = contentRoot(location);
    await mkdir(root, { recursive: true });
    for (let i = 0; i < 256; i++) await mkdir(path.join(root, slice(i)), { recursive: true });
    await syncDirectory(root);
    await syncDirectory(location);
    return new DiskContent(location);
  }

  path(id: string): string {
    return contentFilePath(this.location, id);
  }

  async write(source: AsyncIterable<Uint8Array>): Promise<ContentRef> {
    const id = newContentId();
    const name = this.path(id);
    const file = await open(name, 'wx');
    let sizeBytes = 0;
    try {
      sizeBytes = await writeAll(file, source);
      // The bytes and the name are flushed at once: each fsync waits for its own, and no row names
      // the file before both are done (the module's comment says why no temporary name is needed).
      const [, , info] = await Promise.all([file.sync(), syncDirectory(path.dirname(name)), file.stat()]);
      await keepFromSweep(file, info);
    } catch (error) {
      await file.close().catch(() => undefined);
      await rm(name, { force: true });
      throw error;
    }
    // Durable: closing the file need not hold up the commit that names it.
    file.close().catch(() => undefined);
    return { id, sizeBytes };
  }

  read(id: string, start: number, endExclusive: number): AsyncIterable<Buffer> {
    if (endExclusive <= start) return emptyChunks();
    return createReadStream(this.path(id), { start, end: endExclusive - 1, highWaterMark: readChunkBytes });
  }

  exists(id: string): Promise<boolean> {
    return stat(this.path(id)).then(
      () => true,
      () => false,
    );
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) await rm(this.path(id), { force: true });
  }

  async sweep(beforeMs: number, entriesMax: number): Promise<string[]> {
    const found: string[] = [];
    let entries = 0;
    for (let slices = 0; slices < 256 && entries < entriesMax; slices++) {
      const directory = path.join(this.root, slice(this.sweepNext));
      this.sweepNext = (this.sweepNext + 1) % 256;
      for await (const entry of await opendir(directory)) {
        entries++;
        const file = path.join(directory, entry.name);
        const info = await stat(file).catch(() => undefined);
        if (info === undefined || info.mtimeMs >= beforeMs) continue;
        if (entry.name.endsWith(tempSuffix)) await rm(file, { force: true });
        else if (contentIdPattern.test(entry.name)) found.push(entry.name);
      }
    }
    return found;
  }
}

/**
 * Where the file of content `id` is in the data directory `location`: DiskContent's layout, and
 * the backup of a data directory's too (it copies these files, its restore writes them).
 */
export function contentFilePath(location: string, id: string): string {
  assertContentId(id);
  return path.join(contentRoot(location), id.slice(0, 2), id);
}

/** The folder of a data directory's content files. */
function contentRoot(location: string): string {
  return path.join(location, 'blobs');
}

function slice(index: number): string {
  return index.toString(16).padStart(2, '0');
}

/**
 * Writes the source's bytes in pieces of at least writeChunkBytes (small chunks gathered), one
 * write in flight while the next piece is read from the source, so the disk and the socket work at
 * once. At most two pieces are held: the one being written and the one being gathered.
 */
async function writeAll(file: FileHandle, source: AsyncIterable<Uint8Array>): Promise<number> {
  let sizeBytes = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const flush = async (): Promise<void> => {
    await writing;
    if (pendingBytes === 0) return;
    const chunk = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    writing = file.write(chunk, 0, chunk.length);
    // Handled now (a rejection left for later would be an unhandled one); awaiting it rethrows it.
    writing.catch(() => undefined);
  };
  try {
    for await (const chunk of source) {
      assert(chunk instanceof Uint8Array, 'content arrives as bytes');
      // No copy: the source hands its chunks over (BlobStore.writeContent).
      pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
      pendingBytes += chunk.length;
      sizeBytes += chunk.length;
      if (pendingBytes >= writeChunkBytes) await flush();
    }
    await flush();
    await writing;
  } finally {
    // Never close the file under a write still in flight (its failure, if any, was thrown above).
    await writing.catch(() => undefined);
  }
  return sizeBytes;
}

/**
 * A file whose write resolves must outlive the commit that names it, but the sweep takes any file
 * untouched (by mtime) for longer than the grace for abandoned, even one still being written: a
 * body that trickled in for longer than that. Such a file gets a fresh mtime (the grace is far
 * longer than a commit), and a file the sweep already removed fails the write.
 */
async function keepFromSweep(file: FileHandle, info: Stats): Promise<void> {
  let checked = info;
  if (Date.now() - checked.mtimeMs > mtimeFreshMs) {
    const nowDate = new Date();
    await file.utimes(nowDate, nowDate);
    checked = await file.stat();
  }
  if (checked.nlink === 0) throw new Error('blob content was swept while its body was received (a stalled upload)');
}

/** Makes a directory's entries (a created or renamed file) durable. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function* emptyChunks(): AsyncIterable<Buffer> {}

/** Content of an in-memory store: chunks in a map, with the time each was written (for the sweep). */
export class MemoryContent implements ContentFiles {
  private readonly pieces = new Map<string, { readonly chunks: Buffer[]; readonly writtenMs: number }>();

  async write(source: AsyncIterable<Uint8Array>): Promise<ContentRef> {
    const chunks: Buffer[] = [];
    let sizeBytes = 0;
    for await (const chunk of source) {
      chunks.push(Buffer.from(chunk));
      sizeBytes += chunk.length;
    }
    const id = newContentId();
    this.pieces.set(id, { chunks, writtenMs: Date.now() });
    return { id, sizeBytes };
  }

  async *read(id: string, start: number, endExclusive: number): AsyncIterable<Buffer> {
    const piece = this.pieces.get(id);
    assert(piece !== undefined, `content ${id} is there while a row names it`);
    let offset = 0;
    for (const chunk of piece.chunks) {
      const from = Math.max(start - offset, 0);
      const to = Math.min(endExclusive - offset, chunk.length);
      if (from < to) yield chunk.subarray(from, to);
      offset += chunk.length;
      if (offset >= endExclusive) return;
    }
  }

  async exists(id: string): Promise<boolean> {
    return this.pieces.has(id);
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.pieces.delete(id);
  }

  async sweep(beforeMs: number): Promise<string[]> {
    // In memory, pieces are few enough to look at all of them.
    return [...this.pieces].filter(([, piece]) => piece.writtenMs < beforeMs).map(([id]) => id);
  }
}
