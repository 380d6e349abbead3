// How the SQLite engine lays out keys and properties in its rows.
//
// Keys are UTF-16BE blobs: SQLite compares blobs with memcmp, and big-endian code units compare
// byte-wise exactly as JavaScript's `<` compares strings (Azure REST: understanding-the-table-service-data-model), so
// '10' < '2' and a
// character above U+FFFF sorts by its surrogates.
//
// Properties are the stored JSON form (../stored-json.ts) kept as SQLite JSONB: types survive
// exactly (Int64 and DateTime as annotated strings), a read can splice the text into a response
// without decoding it, and filters on properties are evaluated inside SQLite (scan conditions)
// without waking JavaScript for every row.
export { StoredEntity } from '../lazy-entity.js';

export {
  encodeStoredProperties as encodeProperties,
  decodeStoredProperties as decodeProperties,
} from '../stored-json.js';

export function encodeKey(key: string): Buffer {
  return Buffer.from(key, 'utf16le').swap16();
}

/** Decodes a key blob, byte-swapping it in place: every blob SQLite hands out is a fresh copy. */
export function decodeKey(blob: Buffer): string {
  return blob.swap16().toString('utf16le');
}
