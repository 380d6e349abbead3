// The account backup file (docs/cli.md "Account backup file"): JSON lines, each blob's line followed
// by its raw bytes and a line with their SHA-256, so containers and blobs of any size stream into
// one file and back out of it in order, never whole in memory.
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { once } from 'node:events';
import type { BlobHeader, ContainerHeader } from './blob-transfer.js';
import type { TransferProgress } from './progress.js';
import type { MessageRecord, QueueRecord } from './queue-backup.js';
import type { EntityRecord, TableRecord } from './table-backup.js';

export const backupFormat = 'cerulean-account-backup';
/**
 * 2 added queues and messages (and their counts in the end record); 3 added blobs' index tags (a
 * blob record's `tags`) and previous versions (`previousVersion`, `currentDeleted`, the end record's
 * `versions`), so a reader of 2 refuses a file it would misread; 4 added Data Lake paths' access
 * control (a blob record's `access`) and page blobs (`blobType` PageBlob with `page`: its size,
 * sequence number and written ranges; the content is those ranges' bytes), so a reader of 3 refuses
 * a file whose access control or page blobs it would drop. A reader reads every earlier version.
 */
export const backupVersion = 4;

export interface BackupHead {
  readonly kind: 'backup';
  readonly format: typeof backupFormat;
  readonly version: number;
  readonly createdOn: string;
  /** The endpoint it was taken from, without key or signature. */
  readonly source: string;
}

export interface BackupEnd {
  readonly kind: 'end';
  readonly tables: number;
  readonly entities: number;
  /** Absent in version 1 (0). */
  readonly queues?: number;
  readonly messages?: number;
  readonly containers: number;
  readonly blobs: number;
  /** Previous versions of blobs (`backup --versions`); absent before version 3 (0). */
  readonly versions?: number;
  readonly bytes: number;
}

export interface ContentEnd {
  readonly kind: 'content';
  readonly sha256: string;
}

export type BackupRecord =
  | BackupHead
  | TableRecord
  | EntityRecord
  | QueueRecord
  | MessageRecord
  | ContainerHeader
  | BlobHeader
  | ContentEnd
  | BackupEnd;

/** Appends records and content to a file, respecting the stream's back-pressure. */
export class BackupWriter {
  private readonly out: WriteStream;
  private failure: Error | undefined;
  /** Ctrl-C: the next write fails, so the caller removes the partial file. */
  interruption: { readonly requested: boolean } | undefined;
  /** Told of each entity, message and blob written (an item) and of every byte put in the file. */
  progress: TransferProgress | undefined;

  constructor(readonly file: string) {
    this.out = createWriteStream(file, { flags: 'wx' });
    this.out.on('error', (error) => (this.failure = error));
  }

  async record(record: BackupRecord): Promise<void> {
    await this.write(Buffer.from(`${JSON.stringify(record)}\n`));
    if (record.kind === 'entity' || record.kind === 'message') this.progress?.add(1, 0);
  }

  /** Writes exactly the bytes of `content`, then its newline and content record; answers their count. */
  async content(content: AsyncIterable<Buffer>): Promise<number> {
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of content) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      await this.write(chunk);
    }
    await this.write(Buffer.from('\n'));
    await this.record({ kind: 'content', sha256: hash.digest('hex') });
    this.progress?.add(1, 0);
    return bytes;
  }

  private async write(chunk: Buffer): Promise<void> {
    if (this.interruption?.requested) throw new Error('interrupted');
    if (this.failure) throw this.failure;
    if (!this.out.write(chunk)) await this.drained();
    if (this.failure) throw this.failure;
    this.progress?.add(0, chunk.byteLength);
  }

  /** Until the stream takes more, or fails. */
  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.out.off('drain', done).off('error', done);
        resolve();
      };
      this.out.on('drain', done).on('error', done);
    });
  }

  /** Flushes and closes; the data is on disk (fsync) when it resolves. */
  async close(): Promise<void> {
    this.out.end();
    await once(this.out, 'finish');
    if (this.failure) throw this.failure;
    const handle = await open(this.file, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  abandon(): void {
    this.out.destroy();
  }
}

/** Malformed or truncated backup files. */
export class BackupFormatError extends Error {
  override readonly name = 'BackupFormatError';
}

const readBytes = 1024 * 1024;
const lineBytesMax = 16 * 1024 * 1024;

/** Reads a backup file record by record; a blob's content is read as a stream of its exact length. */
export class BackupReader {
  private position = 0;
  private buffered = Buffer.alloc(0);

  private constructor(
    private readonly handle: FileHandle,
    readonly file: string,
  ) {}

  static async open(file: string): Promise<BackupReader> {
    return new BackupReader(await open(file, 'r'), file);
  }

  /** The next record, or undefined at the end of the file. */
  async record(): Promise<BackupRecord | undefined> {
    for (;;) {
      const newline = this.buffered.indexOf(0x0a);
      if (newline >= 0) {
        const line = this.buffered.subarray(0, newline).toString('utf8');
        this.buffered = this.buffered.subarray(newline + 1);
        try {
          return JSON.parse(line) as BackupRecord;
        } catch {
          throw new BackupFormatError(`${this.file}: not a record near byte ${this.position - this.buffered.length}`);
        }
      }
      if (this.buffered.length > lineBytesMax) throw new BackupFormatError(`${this.file}: a record is too long`);
      if (!(await this.fill())) {
        if (this.buffered.length === 0) return undefined;
        throw new BackupFormatError(`${this.file}: the file ends in the middle of a record`);
      }
    }
  }

  /** Exactly `bytes` of content, then the newline after it. */
  async *content(bytes: number): AsyncIterable<Buffer> {
    let left = bytes;
    while (left > 0) {
      if (this.buffered.length === 0 && !(await this.fill()))
        throw new BackupFormatError(`${this.file}: the file ends in the middle of a blob's content`);
      const piece = this.buffered.subarray(0, Math.min(left, this.buffered.length));
      this.buffered = this.buffered.subarray(piece.length);
      left -= piece.length;
      yield Buffer.from(piece);
    }
    if (this.buffered.length === 0) await this.fill();
    if (this.buffered[0] !== 0x0a) throw new BackupFormatError(`${this.file}: a blob's content has another length`);
    this.buffered = this.buffered.subarray(1);
  }

  private async fill(): Promise<boolean> {
    const chunk = Buffer.alloc(readBytes);
    const { bytesRead } = await this.handle.read(chunk, 0, readBytes, this.position);
    if (bytesRead === 0) return false;
    this.position += bytesRead;
    this.buffered = Buffer.concat([this.buffered, chunk.subarray(0, bytesRead)]);
    return true;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

/** Whether the file starts as an account backup (else it may be a data-directory snapshot). */
export async function isAccountBackup(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const start = Buffer.alloc(256);
    const { bytesRead } = await handle.read(start, 0, start.length, 0);
    return start.subarray(0, bytesRead).toString('utf8').includes(`"format":"${backupFormat}"`);
  } finally {
    await handle.close();
  }
}
