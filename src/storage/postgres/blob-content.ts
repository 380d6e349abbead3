// Blob content in the database (blob-schema.ts): written chunk by chunk as the source yields it,
// read chunk by chunk as the reader pulls, so memory stays one chunk per request whatever the size.
//
// A write larger than a chunk is several transactions, not one: the content row with its first
// chunk (a reclaim candidate from its start), then each chunk in its own statement, then its size,
// which marks it complete (content of one chunk or less is one statement, complete). One
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
import { isMissingTable } from './failures.js';
import { schemaName as s } from './schema.js';

/**
 * Bytes per chunk row: large enough that a row's overhead and a statement's round trip are small
 * beside its bytes, small enough that a request holds little memory (one chunk, and its hex
 * text when read).
 */
export const chunkBytesDefault = 512 * 1024;

// A new content with its first chunk (none when empty), complete ($4 its size) or not ($4 null).
const newContentSql = `WITH c AS (
    INSERT INTO ${s}.blob_contents (chunk_bytes, size_bytes) VALUES ($1, $4) RETURNING id
  ), k AS (INSERT INTO ${s}.blob_reclaim_candidates (content_id) SELECT id FROM c),
  d AS (INSERT INTO ${s}.blob_chunks (content_id, seq, data) SELECT id, 0, $3 FROM c WHERE $2)
  SELECT id FROM c`;
// Each chunk starts the content's grace again (blob-reclaim.ts): only a writer that stalls for the
// grace loses its content, however long the whole write takes.
const chunkSql = `WITH touched AS (
    UPDATE ${s}.blob_reclaim_candidates SET marked_ms = NULL WHERE content_id = $1 AND marked_ms IS NOT NULL
  ) INSERT INTO ${s}.blob_chunks (content_id, seq, data) VALUES ($1, $2, $3)`;
const completeSql = `UPDATE ${s}.blob_contents SET size_bytes = $2 WHERE id = $1 AND size_bytes IS NULL`;
const discardSql = `DELETE FROM ${s}.blob_contents WHERE id = $1 AND size_bytes IS NULL`;
/**
 * Streams `source` into new content (BlobStore.writeContent). Content of one chunk or less (most
 * blocks) is one statement; larger, its first chunk comes with the content row and its size
 * after the last.
 */
export async function writeContent(
  connection: PostgresConnection,
  source: AsyncIterable<Uint8Array>,
  chunkBytes: number,
): Promise<ContentRef> {
  assert(Number.isSafeInteger(chunkBytes) && chunkBytes > 0, 'a chunk holds at least one byte');
  const chunks = rechunked(source, chunkBytes)[Symbol.asyncIterator]();
  const first = await chunks.next();
  const data = first.done === true ? Buffer.alloc(0) : first.value;
  const whole = data.length < chunkBytes;
  const values = [chunkBytes, data.length > 0, data, whole ? data.length : null];
  const { rows } = await connection.query<{ id: string }>('write', named(newContentSql, values));
  const id = rows[0]!.id;
  if (whole) return { id, sizeBytes: data.length };
  try {
    let sizeBytes = data.length;
    for (let seq = 1, next = await chunks.next(); next.done !== true; seq++, next = await chunks.next()) {
      await writeChunk(connection, id, seq, next.value);
      sizeBytes += next.value.length;
    }
    const { rowCount } = await connection.query('write', named(completeSql, [id, sizeBytes]));
    if (rowCount !== 1) reclaimedUnder(id);
    return { id, sizeBytes };
  } catch (error) {
    // At once if it can; otherwise reclaimContent does, after the grace (it is a candidate).
    await connection.query('write', named(discardSql, [id])).catch(() => undefined);
    throw error;
  }
}

function reclaimedUnder(id: string): never {
  assert.fail(`content ${id} was reclaimed while it was written (a pause longer than the grace)`);
}

/** One chunk; a content gone (its foreign key) was reclaimed under the writer. */
async function writeChunk(connection: PostgresConnection, id: string, seq: number, data: Buffer): Promise<void> {
  try {
    await connection.query('write', named(chunkSql, [id, seq, data]));
  } catch (error) {
    if (isMissingTable(error)) reclaimedUnder(id);
    throw error;
  }
}

/**
 * The source's bytes in chunks of `chunkBytes`, the last shorter (none for no bytes). One buffer,
 * reused: the caller is done with a chunk (its statement completed, so sent) before it asks for
 * the next.
 */
async function* rechunked(source: AsyncIterable<Uint8Array>, chunkBytes: number): AsyncGenerator<Buffer> {
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let filled = 0;
  for await (const piece of source) {
    for (let offset = 0; offset < piece.length;) {
      const n = Math.min(piece.length - offset, chunkBytes - filled);
      chunk.set(piece.subarray(offset, offset + n), filled);
      filled += n;
      offset += n;
      if (filled === chunkBytes) {
        yield chunk;
        filled = 0;
      }
    }
  }
  if (filled > 0) yield chunk.subarray(0, filled);
}
