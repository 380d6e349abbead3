// How the SQLite engine lays out keys and properties in its rows.
//
// Keys are UTF-16BE blobs: SQLite compares blobs with memcmp, and big-endian code units compare
// byte-wise exactly as JavaScript's `<` compares strings (data-model.md §6), so '10' < '2' and a
// character above U+FFFF sorts by its surrogates.
//
// Properties are the stored JSON form (../stored-json.ts) kept as SQLite JSONB: types survive
// exactly (Int64 and DateTime as annotated strings), a read can splice the text into a response
// without decoding it, and filters on properties are evaluated inside SQLite (scan conditions)
// without waking JavaScript for every row.
import type { Entity, Properties } from '../../domain/entity.js';
import { decodeStoredProperties, minimalJsonOf } from '../stored-json.js';

export { encodeStoredProperties as encodeProperties, decodeStoredProperties as decodeProperties } from '../stored-json.js';

export function encodeKey(key: string): Buffer {
  return Buffer.from(key, 'utf16le').swap16();
}

/** Decodes a key blob, byte-swapping it in place: every blob SQLite hands out is a fresh copy. */
export function decodeKey(blob: Buffer): string {
  return blob.swap16().toString('utf16le');
}

/** A stored entity whose properties are decoded only if something asks for them. */
export class StoredEntity implements Entity {
  private decoded: Properties | undefined;

  constructor(
    readonly partitionKey: string,
    readonly rowKey: string,
    readonly timestamp: bigint,
    private readonly storedJson: string,
  ) {}

  get properties(): Properties {
    this.decoded ??= decodeStoredProperties(this.storedJson);
    return this.decoded;
  }

  get minimalJson(): string | undefined {
    return minimalJsonOf(this.storedJson);
  }
}
