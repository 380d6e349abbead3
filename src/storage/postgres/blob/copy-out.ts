// Bytes out of PostgreSQL as they are stored: `COPY (query) TO STDOUT (FORMAT binary)`.
//
// The driver hands a bytea result over as hex text: PostgreSQL encodes it, the wire carries twice
// the bytes, and this process makes a string of them and decodes it again (about four times the
// cost of the bytes themselves, measured on 512 KiB chunks). COPY's binary format carries the
// bytes as they are (https://www.postgresql.org/docs/current/sql-copy.html, "Binary Format"); the
// driver passes its CopyData messages to the query object it runs (its `Submittable` interface),
// which parses them here into one Buffer a row. COPY takes no parameters: its text holds literals,
// which the caller builds from numbers it checked.
import assert from 'node:assert/strict';
import type pg from 'pg';
import type { PostgresConnection } from '../connection.js';

/** The signature every binary COPY starts with, then flags and the header extension's length. */
const signature = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const headerBytes = signature.length + 8;

type Stage = 'header' | 'skip' | 'fieldCount' | 'length' | 'data' | 'done';

/**
 * COPY's binary format as it arrives, in messages split anywhere: rows of one non-null column,
 * their values copied once, from the driver's buffer (which it reuses) into one Buffer of the
 * `expectedBytes` the caller knows they add up to.
 */
export class BinaryRows {
  readonly bytes: Buffer;
  private filled = 0;
  private stage: Stage = 'header';
  /** A fixed-size field being gathered (the header, a field count, a length). */
  private readonly field = Buffer.alloc(headerBytes);
  private fieldFilled = 0;
  private skipBytes = 0;
  /** Bytes of the row being copied still to come. */
  private rowBytesLeft = 0;

  constructor(expectedBytes: number) {
    this.bytes = Buffer.allocUnsafe(expectedBytes);
  }

  get done(): boolean {
    return this.stage === 'done';
  }

  /** The rows' bytes so far. */
  get value(): Buffer {
    return this.bytes.subarray(0, this.filled);
  }

  push(payload: Buffer): void {
    for (let at = 0; at < payload.length;) {
      assert.notEqual(this.stage, 'done', 'COPY sent data after its trailer');
      if (this.stage === 'data') {
        const n = payload.copy(this.bytes, this.filled, at, at + Math.min(this.rowBytesLeft, payload.length - at));
        this.filled += n;
        this.rowBytesLeft -= n;
        at += n;
        if (this.rowBytesLeft === 0) this.expect('fieldCount');
      } else if (this.stage === 'skip') {
        const n = Math.min(this.skipBytes, payload.length - at);
        this.skipBytes -= n;
        at += n;
        if (this.skipBytes === 0) this.expect('fieldCount');
      } else {
        const wanted = this.fieldBytes();
        const n = payload.copy(this.field, this.fieldFilled, at, at + wanted - this.fieldFilled);
        this.fieldFilled += n;
        at += n;
        if (this.fieldFilled === wanted) this.fieldRead();
      }
    }
  }

  private fieldBytes(): number {
    return this.stage === 'header' ? headerBytes : this.stage === 'fieldCount' ? 2 : 4;
  }

  private expect(stage: Stage): void {
    this.stage = stage;
    this.fieldFilled = 0;
  }

  private fieldRead(): void {
    if (this.stage === 'header') {
      assert(this.field.subarray(0, signature.length).equals(signature), 'not a binary COPY');
      this.skipBytes = this.field.readUInt32BE(signature.length + 4);
      this.expect(this.skipBytes === 0 ? 'fieldCount' : 'skip');
    } else if (this.stage === 'fieldCount') {
      const fields = this.field.readInt16BE(0);
      if (fields === -1) this.expect('done');
      else {
        assert.equal(fields, 1, 'a COPY of one column');
        this.expect('length');
      }
    } else {
      const length = this.field.readInt32BE(0);
      assert(length >= 0, 'a COPY of a column that is never null');
      assert(this.filled + length <= this.bytes.length, 'COPY sent more bytes than expected');
      this.rowBytesLeft = length;
      this.expect(length === 0 ? 'fieldCount' : 'data');
    }
  }
}

/** One COPY TO STDOUT run by the driver's client (its Submittable interface); `done` settles with the bytes. */
class CopyOut implements pg.Submittable {
  readonly done: Promise<Buffer>;
  /** Set by the driver when it times the query (query_timeout): called once the query is over. */
  callback: ((error: Error | null) => void) | undefined;
  private readonly parsed: BinaryRows;
  /** What the data was not, if it was not what the caller expects. */
  private malformed: Error | undefined;
  private settle!: (error: Error | null) => void;

  constructor(
    private readonly text: string,
    expectedBytes: number,
  ) {
    this.parsed = new BinaryRows(expectedBytes);
    this.done = new Promise<Buffer>((resolve, reject) => {
      let settled = false;
      this.settle = (error) => {
        if (settled) return;
        settled = true;
        this.callback?.(error);
        if (error === null) resolve(this.parsed.value);
        else reject(error);
      };
    });
  }

  submit(connection: pg.Connection): void {
    (connection as unknown as { query(text: string): void }).query(this.text);
  }

  handleCopyData(message: { chunk: Buffer }): void {
    if (this.malformed !== undefined) return;
    // Thrown here, it would end the process from the driver's socket handler: kept for the end.
    try {
      this.parsed.push(message.chunk);
    } catch (error) {
      this.malformed = error instanceof Error ? error : new Error(String(error));
    }
  }

  handleReadyForQuery(): void {
    this.settle(this.malformed ?? (this.parsed.done ? null : new Error('COPY ended without its trailer')));
  }

  /** A failure of the statement (ReadyForQuery follows) or of the connection (nothing follows). */
  handleError(error: Error): void {
    this.settle(error);
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
}

/**
 * The rows of `COPY (query) TO STDOUT (FORMAT binary)` for `copyText`, one after the other, at most
 * `expectedBytes`; a read: a failure is the Azure error PostgresConnection.query answers (503
 * ServerBusy for a database out of reach).
 */
export function copyOut(connection: PostgresConnection, copyText: string, expectedBytes: number): Promise<Buffer> {
  return connection.read((client) => client.query(new CopyOut(copyText, expectedBytes)).done);
}
