// COPY's binary format as the PostgreSQL blob store parses it (src/storage/postgres/blob/copy-out.ts),
// split at every byte, as the driver's messages may be: the stores' own tests read it from a real
// database in rows of every shape; here, the splits and the malformed cases a database never sends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BinaryRows } from '../../src/storage/postgres/blob/copy-out.js';

/** The binary COPY of one bytea column with these rows (a header extension of `extension` bytes). */
function copyOf(rows: readonly Buffer[], extension = 0): Buffer {
  const header = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(4), Buffer.alloc(4)]);
  header.writeUInt32BE(extension, 15);
  const parts: Buffer[] = [header, Buffer.alloc(extension)];
  for (const row of rows) {
    const field = Buffer.alloc(6);
    field.writeInt16BE(1, 0);
    field.writeInt32BE(row.length, 2);
    parts.push(field, row);
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

const rows = [Buffer.from('first row'), Buffer.alloc(0), Buffer.from('the third, longer than the others')];
const expected = Buffer.concat(rows);

test('rows split anywhere across messages are their bytes, in order', () => {
  for (const extension of [0, 3]) {
    const copy = copyOf(rows, extension);
    for (let split = 0; split <= copy.length; split++) {
      for (const size of [1, 7]) {
        const parsed = new BinaryRows(expected.length);
        parsed.push(copy.subarray(0, split));
        for (let at = split; at < copy.length; at += size) parsed.push(copy.subarray(at, at + size));
        assert.ok(parsed.done, `split at ${split}`);
        assert.deepEqual(parsed.value, expected, `split at ${split}, pieces of ${size}`);
      }
    }
  }
});

test('a COPY short of its trailer is not done; more bytes than expected, or after the trailer, fail', () => {
  const copy = copyOf(rows);
  const short = new BinaryRows(expected.length);
  short.push(copy.subarray(0, copy.length - 1));
  assert.equal(short.done, false);
  assert.throws(() => new BinaryRows(expected.length - 1).push(copy), /more bytes than expected/);
  assert.throws(() => new BinaryRows(expected.length).push(Buffer.concat([copy, Buffer.from([0])])), /after its trailer/);
  assert.throws(() => new BinaryRows(expected.length).push(Buffer.from('PGCOPY\nnot the signature')), /not a binary COPY/);
});
