// What every engine's blob store shares: the compare-and-swap decision on a record's ETag, List
// Blobs' order (a name's snapshots, then its base blob) and the merge of names that have only
// staged blocks into it, and the checks on the sizes and content ids the service passes in.
import assert from 'node:assert/strict';
import type {
  Block,
  BlobRecord,
  ContentRef,
  IfEtag,
  ListBlobsOptions,
  ListedBlob,
  WriteOutcome,
} from './blob-store.js';

/**
 * The outcome of a write conditioned on `ifEtag` against the current record's ETag (undefined:
 * there is none): `null` asks for none, a string for that ETag, `undefined` for anything.
 */
export function etagOutcome(currentEtag: string | undefined, ifEtag: IfEtag): WriteOutcome {
  if (ifEtag === undefined) return 'ok';
  if (ifEtag === null) return currentEtag === undefined ? 'ok' : 'etagMismatch';
  if (currentEtag === undefined) return 'blobNotFound';
  return currentEtag === ifEtag ? 'ok' : 'etagMismatch';
}

/**
 * A listed entry's place in List Blobs' order: (name, base, snapshot) with base 0 for a snapshot
 * and 1 for the base blob, so a name's snapshots come before it. A name with only staged blocks
 * stands where its base blob would.
 */
export type ListPlace = readonly [name: string, base: 0 | 1, snapshot: string];

export function listPlace(name: string, snapshot: string): ListPlace {
  return [name, snapshot === '' ? 1 : 0, snapshot];
}

export function compareListPlaces(a: ListPlace, b: ListPlace): number {
  return compareCodePoints(a[0], b[0]) || a[1] - b[1] || compareCodePoints(a[2], b[2]);
}

/**
 * Strings in code point order, which is the byte order of their UTF-8 (SQLite's BINARY collation,
 * PostgreSQL's "C"); JavaScript's `<` compares UTF-16 units, which puts U+E000..U+FFFF after the
 * characters beyond U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Where a listing starts: options.from in List Blobs' order, or the prefix. */
export function listStart(options: ListBlobsOptions): ListPlace {
  const prefixStart: ListPlace = [options.prefix, 0, ''];
  if (options.from === undefined) return prefixStart;
  const place = listPlace(options.from.name, options.from.snapshot);
  return compareListPlaces(place, prefixStart) < 0 ? prefixStart : place;
}

/**
 * Records (in order, at most `limit`, from `start` on) and the names with only staged blocks (in
 * order, the same bounds) merged into the first `limit` entries of the listing.
 */
export function mergeListed(
  records: readonly BlobRecord[],
  uncommittedNames: readonly string[],
  start: ListPlace,
  limit: number,
): ListedBlob[] {
  const names = uncommittedNames.filter((name) => compareListPlaces(listPlace(name, ''), start) >= 0);
  const listed: ListedBlob[] = [];
  let r = 0;
  let n = 0;
  while (listed.length < limit && (r < records.length || n < names.length)) {
    const record = records[r];
    const name = names[n];
    const recordFirst =
      name === undefined ||
      (record !== undefined && compareListPlaces(listPlace(record.name, record.snapshot), listPlace(name, '')) < 0);
    if (recordFirst) listed.push({ kind: 'blob', record: records[r++]! });
    else listed.push({ kind: 'uncommitted', name: names[n++]! });
  }
  return listed;
}

/** Content ids are the engine's own: 32 lower-case hex digits (a random UUID without its dashes). */
export const contentIdPattern = /^[0-9a-f]{32}$/;

export function assertContentId(id: string): void {
  assert.match(id, contentIdPattern, 'a content id is one this store made');
}

export function assertBlock(block: Block): void {
  assertContentId(block.content.id);
  assert(Number.isSafeInteger(block.content.sizeBytes) && block.content.sizeBytes >= 0, 'a size is a count of bytes');
}

/** The committed size after a change, which the record the service passes must state. */
export function assertCommittedSize(record: BlobRecord, sizeBytes: number): void {
  assert.equal(record.sizeBytes, sizeBytes, `blob ${record.name}: the record's size is its committed blocks' sum`);
}

/**
 * The bytes of content that came not yet written (ContentRef.unwritten), as a Buffer (across
 * threads a Buffer arrives as a plain Uint8Array; a database binds a Buffer as bytes), checked to
 * be as many as the ref says.
 */
export function unwrittenBytes(ref: ContentRef): Buffer {
  assert(ref.unwritten !== undefined, 'content that came unwritten');
  const { bytes } = ref.unwritten;
  assert.equal(bytes.byteLength, ref.sizeBytes, 'unwritten content holds the bytes its ref says');
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function blocksSize(blocks: readonly Block[]): number {
  let size = 0;
  for (const block of blocks) {
    assertBlock(block);
    size += block.content.sizeBytes;
  }
  return size;
}

/** The range [start, end) clamped to a blob of `sizeBytes`. */
export function clampRange(startByte: number, endByteExclusive: number, sizeBytes: number): [number, number] {
  assert(Number.isSafeInteger(startByte) && startByte >= 0, 'a range starts at a byte offset');
  assert(Number.isSafeInteger(endByteExclusive) || endByteExclusive === Number.POSITIVE_INFINITY, 'a range ends');
  const end = Math.min(endByteExclusive, sizeBytes);
  const start = Math.min(startByte, end);
  return [start, end];
}
