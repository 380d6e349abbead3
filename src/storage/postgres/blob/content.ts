// Writing blob content into the database (blob-schema.ts; postgres/blob/content-read.ts reads it): in
// statements of a few chunks as the source yields them, so memory stays bounded whatever the size.
//
// A write larger than a statement is several transactions, not one: the content row with its
// first chunk (a reclaim candidate from its start), then more chunks a statement, the last of
// which writes its size, marking it complete (content of one chunk or less is written by the
// transaction that names it: postgres/blob/unwritten.ts). One transaction over a whole upload would hold a
// pooled connection for as long as the client takes to send (a slow client, or many, would
// starve every other request), die at the session's idle-in-transaction limit when the client
// pauses, and hold back vacuum for the whole database; the price of several is that a process
// that dies mid-write leaves rows behind, which reclaimContent removes after the grace like any
// unreferenced content. Each statement commits durably (synchronous_commit on), so the content is
// durable when its size is.
import assert from 'node:assert/strict';
import type { ContentRef } from '../../blob-store.js';
import { named } from './statements.js';
import type { ContentIds } from './unwritten.js';
import type { PostgresConnection } from '../connection.js';
import { isMissingTable } from '../failures.js';
import { schemaName as s } from '../schema.js';

/**
 * Bytes per chunk row: large enough that a row's overhead is small beside its bytes, small enough
 * that a read of a few bytes reads little (postgres/blob/content-read.ts).
 */
export const chunkBytesDefault = 512 * 1024;

/**
 * Chunks one statement writes at most (2 MiB of 512 KiB chunks): each statement is a durable
 * commit, whose flush costs as much as a few hundred KiB of bytes, so fewer and larger statements
 * write faster; a writer holds two statements' chunks at most.
 */
export const chunksPerWriteMax = 4;

/** `(seq, $n::bytea)` rows of `count` chunks, their data the parameters from $`first`. */
const chunkValues = (count: number, first: number): string =>
  Array.from({ length: count }, (_, i) => `(${i}, $${first + i}::bytea)`).join(', ');

/**
 * A new content ($1 bytes a chunk), incomplete (its size null), with its first `count` chunks
 * ($2...): its id. A reclaim candidate from its start.
 */
const newContentSql = (count: number): string => `WITH c AS (
    INSERT INTO ${s}.blob_contents (chunk_bytes, size_bytes) VALUES ($1, NULL) RETURNING id
  ), k AS (INSERT INTO ${s}.blob_reclaim_candidates (content_id) SELECT id FROM c),
  d AS (INSERT INTO ${s}.blob_chunks (content_id, seq, data)
    SELECT c.id, v.seq, v.data FROM c, (VALUES ${chunkValues(count, 2)}) AS v(seq, data))
  SELECT id FROM c`;

/**
 * `count` more chunks ($3... or, completing, $4...) of content $1 from chunk $2. Each statement
 * starts the content's grace again (postgres/blob/reclaim.ts): only a writer that stalls for the grace
 * loses its content, however long the whole write takes. The last also completes it with its
 * size ($3), if every chunk before these is there ($2 of them): `completed` 1.
 */
const moreChunksSql = (count: number, completing: boolean): string => `WITH touched AS (
    UPDATE ${s}.blob_reclaim_candidates SET marked_ms = NULL WHERE content_id = $1 AND marked_ms IS NOT NULL
  ), d AS (INSERT INTO ${s}.blob_chunks (content_id, seq, data)
    SELECT $1, $2::integer + v.i, v.data FROM (VALUES ${chunkValues(count, completing ? 4 : 3)}) AS v(i, data))
  ${
    completing
      ? `, done AS (UPDATE ${s}.blob_contents SET size_bytes = $3 WHERE id = $1 AND size_bytes IS NULL
      AND (SELECT count(*) FROM ${s}.blob_chunks WHERE content_id = $1) = $2 RETURNING id)
    SELECT count(*)::integer AS completed FROM done`
      : 'SELECT 1 AS completed'
  }`;
const discardSql = `DELETE FROM ${s}.blob_contents WHERE id = $1 AND size_bytes IS NULL`;

/**
 * Streams `source` into new content (BlobStore.writeContent): content of one chunk or less (most
 * blocks) comes back unwritten, for the write that names it to write (postgres/blob/unwritten.ts);
 * larger, the first chunk goes as soon as it is in, then up to
 * chunksPerWriteMax chunks a statement, each in flight while the next one's chunks arrive, the
 * last completing it. The database stores the first chunk while the rest arrives (for content of a
 * few chunks, that costs a commit and saves more than it costs).
 */
export async function writeContent(
  connection: PostgresConnection,
  source: AsyncIterable<Uint8Array>,
  buffers: ChunkBuffers,
  ids: ContentIds,
): Promise<ContentRef> {
  const chunker = new Chunker(source, buffers);
  const first = await chunker.next(1);
  const firstBytes = bytesOf(first.chunks);
  if (first.last) {
    // Copied out of the chunk buffer (most are far smaller), which goes back to be used again.
    const bytes = Buffer.from(first.chunks[0] ?? Buffer.alloc(0));
    buffers.give(first.chunks);
    return { id: await ids.next(), sizeBytes: firstBytes, unwritten: { bytes, writtenMs: Date.now() } };
  }
  const values = [buffers.chunkBytes, ...first.chunks];
  const created = connection.query<{ id: string }>('write', named(newContentSql(first.chunks.length), values));
  const writing = new PipelinedWrite(connection, created, first.chunks);
  try {
    return await writing.rest(chunker, firstBytes);
  } catch (error) {
    // At once if it can; otherwise reclaimContent does, after the grace (it is a candidate).
    const id = await writing.settled();
    if (id !== undefined) await connection.query('write', named(discardSql, [id])).catch(() => undefined);
    throw error;
  }
}

const bytesOf = (chunks: readonly Buffer[]): number => chunks.reduce((sum, chunk) => sum + chunk.length, 0);

/** A write of more than one statement: one statement in flight while the chunks of the next arrive. */
class PipelinedWrite {
  /** The content's id, once the first statement is done. */
  private readonly id: Promise<string>;
  /** The statement in flight: for the last, whether it completed the content (1). */
  private inFlight: Promise<number>;
  private inFlightChunks: Buffer[];

  constructor(
    private readonly connection: PostgresConnection,
    created: Promise<{ rows: { id: string }[] }>,
    chunks: Buffer[],
  ) {
    this.id = created.then(({ rows }) => rows[0]!.id);
    this.inFlight = this.id.then(() => 0);
    // Awaited once the next chunks are in: a failure meanwhile is not unhandled.
    this.inFlight.catch(() => undefined);
    this.inFlightChunks = chunks;
  }

  /** The chunks after the first statement's `writtenBytes`; the content once complete. */
  async rest(chunker: Chunker, writtenBytes: number): Promise<ContentRef> {
    let seq = this.inFlightChunks.length;
    let sizeBytes = writtenBytes;
    for (let last = false; !last;) {
      const batch = await chunker.next(chunksPerWriteMax);
      // A batch follows one that was not the last: the source had more bytes.
      assert(batch.chunks.length > 0, 'a batch after one that was not the last has chunks');
      const id = await this.id;
      await this.inFlight;
      chunker.recycle(this.inFlightChunks);
      sizeBytes += bytesOf(batch.chunks);
      last = batch.last;
      const values = last ? [id, seq, sizeBytes, ...batch.chunks] : [id, seq, ...batch.chunks];
      const text = moreChunksSql(batch.chunks.length, last);
      this.inFlight = this.connection.query<{ completed: number }>('write', named(text, values)).then(
        ({ rows }) => rows[0]!.completed,
        (error: unknown) => {
          // Its foreign key: the content was removed.
          if (isMissingTable(error)) reclaimedUnder(id);
          throw error;
        },
      );
      this.inFlight.catch(() => undefined);
      this.inFlightChunks = batch.chunks;
      seq += batch.chunks.length;
    }
    const id = await this.id;
    if ((await this.inFlight) !== 1) reclaimedUnder(id);
    chunker.recycle(this.inFlightChunks);
    return { id, sizeBytes };
  }

  /** Once nothing is in flight: the content's id, if its first statement wrote it. */
  async settled(): Promise<string | undefined> {
    await this.inFlight.catch(() => undefined);
    return this.id.catch(() => undefined);
  }
}

/** The content was reclaimed under its writer: fails the write. */
function reclaimedUnder(id: string): never {
  assert.fail(`content ${id} was reclaimed while it was written (a pause longer than the grace)`);
}

/** Chunks of a source, and whether they are its last. */
interface Batch {
  readonly chunks: Buffer[];
  readonly last: boolean;
}

/**
 * Chunk buffers a store's writes take and give back once their statement is done with them, so
 * that a write allocates none once the store is warm (buffers of half a MiB are each an
 * allocation the collector accounts for). It keeps spareChunksMax at most.
 */
export class ChunkBuffers {
  private readonly spare: Buffer[] = [];

  constructor(readonly chunkBytes: number) {
    assert(Number.isSafeInteger(chunkBytes) && chunkBytes > 0, 'a chunk holds at least one byte');
  }

  take(): Buffer {
    return this.spare.pop() ?? Buffer.allocUnsafe(this.chunkBytes);
  }

  /** Chunks `take` gave (a last chunk may be the start of one), no longer used. */
  give(chunks: readonly Buffer[]): void {
    for (const chunk of chunks) {
      if (this.spare.length >= spareChunksMax) return;
      const whole = chunk.byteOffset === 0 && chunk.buffer.byteLength === this.chunkBytes;
      if (chunk.length === this.chunkBytes) this.spare.push(chunk);
      else if (whole) this.spare.push(Buffer.from(chunk.buffer, 0, this.chunkBytes));
    }
  }
}

/** Spare chunk buffers a store keeps: 8 MiB of 512 KiB chunks, two writes' worth. */
const spareChunksMax = 16;

/**
 * The source's bytes in chunks, the last shorter (none for no bytes), copied into buffers the
 * caller gives back (recycle) once its statement is done with them.
 */
class Chunker {
  private readonly pieces: AsyncIterator<Uint8Array>;
  private readonly chunkBytes: number;
  /** A piece read ahead, to know whether the chunks before it were the last; `at` its bytes used. */
  private piece: Uint8Array | undefined;
  private at = 0;
  private ended = false;

  constructor(
    source: AsyncIterable<Uint8Array>,
    private readonly buffers: ChunkBuffers,
  ) {
    this.pieces = source[Symbol.asyncIterator]();
    this.chunkBytes = buffers.chunkBytes;
  }

  /** Up to `count` chunks: `count` full ones unless the source ends first; `last` if it has. */
  async next(count: number): Promise<Batch> {
    const chunks: Buffer[] = [];
    let chunk = this.fresh();
    let filled = 0;
    while (await this.more()) {
      const piece = this.piece!;
      const n = Math.min(piece.length - this.at, this.chunkBytes - filled);
      chunk.set(piece.subarray(this.at, this.at + n), filled);
      filled += n;
      this.at += n;
      if (filled < this.chunkBytes) continue;
      chunks.push(chunk);
      if (chunks.length === count) return { chunks, last: !(await this.more()) };
      chunk = this.fresh();
      filled = 0;
    }
    if (filled > 0) chunks.push(chunk.subarray(0, filled));
    else this.buffers.give([chunk]);
    return { chunks, last: true };
  }

  recycle(chunks: readonly Buffer[]): void {
    this.buffers.give(chunks);
  }

  private fresh(): Buffer {
    return this.buffers.take();
  }

  /** Whether the source has bytes not yet taken, reading a piece ahead if need be. */
  private async more(): Promise<boolean> {
    while (!this.ended && (this.piece === undefined || this.at === this.piece.length)) {
      const next = await this.pieces.next();
      if (next.done === true) this.ended = true;
      else {
        this.piece = next.value;
        this.at = 0;
      }
    }
    return !this.ended;
  }
}
