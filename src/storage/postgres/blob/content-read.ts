// Reading blob content (blob-content.ts writes it): the chunks of a range, a few per statement,
// each statement when the reader has taken the one before, and one statement ahead, so that the
// next chunks are on their way while the caller sends these. Memory stays two statements' chunks
// per reader whatever the size, and a slow reader holds no connection between statements.
//
// The bytes come as COPY's binary format (postgres/blob/copy-out.ts), not as bytea results, which the
// driver hands over as hex text.
import assert from 'node:assert/strict';
import { copyOut } from './copy-out.js';
import type { PostgresConnection } from '../connection.js';
import { schemaName as s } from '../schema.js';

/** A part of one content: `lengthBytes` bytes from `offsetBytes`. */
export interface ContentSegment {
  readonly contentId: string;
  readonly chunkBytes: number;
  readonly offsetBytes: number;
  readonly lengthBytes: number;
}

/** Chunks one statement reads at most: 2 MiB of 512 KiB chunks, a statement's round trip small beside them. */
const chunksPerReadMax = 4;

/** One statement's part of a content: bytes [fromByte, toByte), in chunks fromSeq to toSeq. */
interface ReadStep {
  readonly contentId: string;
  readonly chunkBytes: number;
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly fromByte: number;
  readonly toByte: number;
}

/** The segments' parts in steps of at most chunksPerReadMax chunks, in order. */
function* readSteps(segments: readonly ContentSegment[]): Generator<ReadStep> {
  for (const { contentId, chunkBytes, offsetBytes, lengthBytes } of segments) {
    const endByte = offsetBytes + lengthBytes;
    for (let at = offsetBytes; at < endByte;) {
      const fromSeq = Math.floor(at / chunkBytes);
      const toByte = Math.min(endByte, (fromSeq + chunksPerReadMax) * chunkBytes);
      const toSeq = Math.ceil(toByte / chunkBytes) - 1;
      yield { contentId, chunkBytes, fromSeq, toSeq, fromByte: at, toByte };
      at = toByte;
    }
  }
}

/**
 * Bytes a row of a COPY carries at most: messages of the driver's socket reads' size (64 KiB) let
 * it reuse its buffer; a message of a whole chunk has it grow a new one each time.
 */
const copyRowBytesMax = 64 * 1024;

/**
 * The COPY of a step's bytes, in rows of at most copyRowBytesMax, in order. COPY takes no
 * parameters: the literals are a content id (digits, as the database gave it) and numbers checked here.
 */
function copyText(step: ReadStep, holding: boolean): string {
  const { contentId: id, chunkBytes: size, fromSeq, toSeq, fromByte: from, toByte: to } = step;
  assert.match(id, /^[1-9][0-9]*$/, 'a content id is a positive integer');
  for (const n of [size, fromSeq, toSeq, from, to]) assert(Number.isSafeInteger(n) && n >= 0, 'a count');
  // Each chunk's part [b.first, b.last) within it, in pieces from each p.at.
  const first = `c.seq::bigint * ${size}`;
  const select = `SELECT substring(c.data FROM p.at + 1 FOR least(${copyRowBytesMax}, b.last - p.at))
    FROM ${s}.blob_chunks c,
      LATERAL (SELECT greatest(${from} - ${first}, 0)::integer AS first,
        (least(${to}, ${first} + ${size}) - ${first})::integer AS last) b,
      LATERAL generate_series(b.first, b.last - 1, ${copyRowBytesMax}) AS p(at)
    WHERE c.content_id = ${id} AND c.seq BETWEEN ${fromSeq} AND ${toSeq} ORDER BY c.seq, p.at`;
  return `${holding ? holdSql(id) : ''}COPY (${select}) TO STDOUT (FORMAT binary)`;
}

/**
 * Starts the grace of the content again if a reclaim pass marked it and nothing references it
 * any more (postgres/blob/reclaim.ts): a reader that goes on reading keeps it, however long it takes;
 * content still referenced is left alone, however often it is read. In the COPY's query string,
 * so one round trip.
 */
const holdSql = (id: string): string => `UPDATE ${s}.blob_reclaim_candidates k SET marked_ms = NULL
  WHERE k.content_id = ${id} AND k.marked_ms IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ${s}.blob_blocks b WHERE b.content_id = ${id})
    AND NOT EXISTS (SELECT 1 FROM ${s}.blob_staged t WHERE t.content_id = ${id})
    AND NOT EXISTS (SELECT 1 FROM ${s}.blob_pages p WHERE p.content_id = ${id});\n`;

interface Pending {
  readonly step: ReadStep;
  readonly bytes: Promise<Buffer>;
}

/**
 * The segments' bytes, in order, one buffer a statement: each statement starts when the reader
 * has taken the previous statement's, and so runs while it sends them.
 */
export async function* readSegments(
  connection: PostgresConnection,
  segments: readonly ContentSegment[],
  holding: boolean,
): AsyncGenerator<Buffer> {
  const steps = readSteps(segments);
  const start = (): Pending | undefined => {
    const next = steps.next();
    if (next.done === true) return undefined;
    // A read either way: holding content is idempotent, and harmless if its outcome is lost.
    const step = next.value;
    const bytes = copyOut(connection, copyText(step, holding), step.toByte - step.fromByte);
    // A reader that stops early never awaits the one ahead: its failure is nobody's.
    bytes.catch(() => undefined);
    return { step, bytes };
  };
  for (let pending = start(); pending !== undefined;) {
    const { step, bytes } = pending;
    const value = await bytes;
    pending = start();
    // Content stays for the grace after its last reference went or its last read (postgres/blob/reclaim.ts).
    assert.equal(value.length, step.toByte - step.fromByte, `content ${step.contentId} lost chunks under a reader`);
    yield value;
  }
}
