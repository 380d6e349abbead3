// Blob content in the database (blob-schema.ts): written chunk by chunk as the source yields it,
// read chunk by chunk as the reader pulls, so memory stays one chunk per request whatever the size.
//
// A write is several transactions, not one: the content row first (a reclaim candidate from its
// start), then each chunk in its own statement, then its size, which marks it complete. One
// transaction over a whole upload would hold a pooled connection for as long as the client takes
// to send (a slow client, or many, would starve every other request), die at the session's
// idle-in-transaction limit when the client pauses, and hold back vacuum for the whole database;
// the price of several is that a process that dies mid-write leaves rows behind, which
// reclaimContent removes after the grace like any unreferenced content. Each statement commits
// durably (synchronous_commit on), so the content is durable when its size is.
import assert from 'node:assert/strict';
import type { ContentRef } from '../blob-store.js';
import { named } from './blob-statements.js';
import type { PostgresConnection } from './connection.js';
import { schemaName as s } from './schema.js';

/**
 * Bytes per chunk row: large enough that a row's overhead and a statement's round trip are small
 * beside its bytes, small enough that a request holds little memory (one chunk, and its hex
 * text when read).
 */
export const chunkBytesDefault = 512 * 1024;

const newContentSql = `WITH c AS (INSERT INTO ${s}.blob_contents (chunk_bytes) VALUES ($1) RETURNING id),
  k AS (INSERT INTO ${s}.blob_reclaim_candidates (content_id) SELECT id FROM c)
  SELECT id FROM c`;
const chunkSql = `INSERT INTO ${s}.blob_chunks (content_id, seq, data) VALUES ($1, $2, $3)`;
const completeSql = `UPDATE ${s}.blob_contents SET size_bytes = $2 WHERE id = $1 AND size_bytes IS NULL`;
const discardSql = `DELETE FROM ${s}.blob_contents WHERE id = $1 AND size_bytes IS NULL`;
/** substring counts from 1. */
const readChunkSql = `SELECT substring(data FROM $3 FOR $4) AS data FROM ${s}.blob_chunks WHERE content_id = $1 AND seq = $2`;

/** Streams `source` into new content (BlobStore.writeContent). */
export async function writeContent(
  connection: PostgresConnection,
  source: AsyncIterable<Uint8Array>,
  chunkBytes: number,
): Promise<ContentRef> {
  assert(Number.isSafeInteger(chunkBytes) && chunkBytes > 0, 'a chunk holds at least one byte');
  const { rows } = await connection.query<{ id: string }>('write', named(newContentSql, [chunkBytes]));
  const id = rows[0]!.id;
  try {
    const sizeBytes = await writeChunks(connection, id, source, chunkBytes);
    const { rowCount } = await connection.query('write', named(completeSql, [id, sizeBytes]));
    assert.equal(rowCount, 1, `content ${id} was reclaimed while it was written (a write longer than the grace)`);
    return { id, sizeBytes };
  } catch (error) {
    // At once if it can; otherwise reclaimContent does, after the grace (it is a candidate).
    await connection.query('write', named(discardSql, [id])).catch(() => undefined);
    throw error;
  }
}

/** Writes the source's bytes as chunks of `chunkBytes` (the last may be shorter); their total. */
async function writeChunks(
  connection: PostgresConnection,
  id: string,
  source: AsyncIterable<Uint8Array>,
  chunkBytes: number,
): Promise<number> {
  // One buffer, reused: a chunk's statement has completed (so sent) before the next is filled.
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let filled = 0;
  let seq = 0;
  for await (const piece of source) {
    for (let offset = 0; offset < piece.length;) {
      const n = Math.min(piece.length - offset, chunkBytes - filled);
      chunk.set(piece.subarray(offset, offset + n), filled);
      filled += n;
      offset += n;
      if (filled === chunkBytes) {
        await connection.query('write', named(chunkSql, [id, seq++, chunk]));
        filled = 0;
      }
    }
  }
  if (filled > 0) await connection.query('write', named(chunkSql, [id, seq++, chunk.subarray(0, filled)]));
  return (seq - (filled > 0 ? 1 : 0)) * chunkBytes + filled;
}

/** A part of one content: `lengthBytes` bytes from `offsetBytes`. */
export interface ContentSegment {
  readonly contentId: string;
  readonly chunkBytes: number;
  readonly offsetBytes: number;
  readonly lengthBytes: number;
}

/**
 * The segments' bytes, in order, one chunk's part per statement, each statement when the reader
 * asks for more (a slow reader holds no connection between chunks).
 */
export async function* readSegments(
  connection: PostgresConnection,
  segments: readonly ContentSegment[],
): AsyncGenerator<Buffer> {
  for (const { contentId, chunkBytes, offsetBytes, lengthBytes } of segments) {
    const endByte = offsetBytes + lengthBytes;
    for (let at = offsetBytes; at < endByte;) {
      const seq = Math.floor(at / chunkBytes);
      const within = at - seq * chunkBytes;
      const n = Math.min(endByte - at, chunkBytes - within);
      const { rows } = await connection.query<{ data: Buffer }>(
        'read',
        named(readChunkSql, [contentId, seq, within + 1, n]),
      );
      const data = rows[0]?.data;
      // Content stays for the grace after its last reference went (blob-reclaim.ts): longer than a read.
      assert(data !== undefined && data.length === n, `content ${contentId} lost chunk ${seq} under a reader`);
      yield data;
      at += n;
    }
  }
}
