// How the SQLite engine lays out keys and properties in its rows.
//
// Keys are UTF-16BE blobs: SQLite compares blobs with memcmp, and big-endian code units compare
// byte-wise exactly as JavaScript's `<` compares strings (data-model.md §6), so '10' < '2' and a
// character above U+FFFF sorts by its surrogates.
//
// Properties are the minimal-metadata JSON object of the wire (odata.encodeMinimalProperties),
// kept as SQLite JSONB: types survive exactly (Int64 and DateTime as annotated strings), a read
// splices the text into the response without decoding it, and filters on properties can be
// evaluated inside SQLite (scan conditions) without waking JavaScript for every row.
import type { Entity, Properties } from '../../protocol/edm.js';
import { decodeMinimalProperties } from '../../protocol/odata.js';

export { encodeMinimalProperties as encodeProperties } from '../../protocol/odata.js';
export const decodeProperties = decodeMinimalProperties;

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
    readonly propertiesJson: string,
  ) {}

  get properties(): Properties {
    this.decoded ??= decodeMinimalProperties(this.propertiesJson);
    return this.decoded;
  }
}
