// How the PostgreSQL engine lays out keys and properties in its rows.
//
// Keys: UTF-16BE bytea (schema.ts says why).
//
// Properties: the stored JSON form (../stored-json.ts, version recorded in schema_version) as
// jsonb, with two escapes for what jsonb cannot hold: a string value containing U+0000 or an
// unpaired surrogate becomes {"@utf16": base64 of its UTF-16LE code units}, and the Double -0
// (jsonb numbers are numerics, which have no negative zero) becomes the annotated string "-0".
// jsonb orders members its own way, so the properties' order is kept in an "@order" member (a
// name no property can have). Rows written since schema version 2 also keep the stored JSON form
// itself as text (`doc`), byte for byte what the SQLite engine stores, so that reads splice it
// into responses (Entity.json) instead of decoding jsonb; jsonb stays for the conditions
// that run inside the database and for merges computed in SQL (which leave `doc` null).
import assert from 'node:assert/strict';
import type { EdmValue } from '../../domain/edm.js';
import type { Entity, Properties } from '../../domain/entity.js';
import { LazyEntity, StoredEntity } from '../lazy-entity.js';
import { decodeStoredMembers, encodeStoredProperties } from '../stored-json.js';
import type { StoredProperties } from '../table-store.js';

export function encodeKey(key: string): Buffer {
  return Buffer.from(key, 'utf16le').swap16();
}

/** Decodes a key from a bytea the driver handed out (a fresh Buffer: swapped in place). */
export function decodeKey(bytes: Buffer): string {
  return bytes.swap16().toString('utf16le');
}

/** The marker member of an escaped string; `@` cannot start a property name. */
const utf16Marker = '@utf16';
/** The member listing the property names in their order. */
const orderMember = '@order';
/** A string jsonb cannot hold: U+0000 or a surrogate not in a pair. */
const jsonbUnsafe = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What a row holds of an entity's properties: `doc` the stored JSON form, `props` its jsonb text. */
export interface EncodedProperties {
  readonly doc: string;
  readonly props: string;
}

export function encodeProperties(properties: Properties): EncodedProperties {
  const doc = encodeStoredProperties(properties);
  return {
    doc,
    props: withOrder(escaped(properties) ? objectMembers(properties) : doc.slice(1, -1), [...properties.keys()]),
  };
}

/** The jsonb text of an object's members, with the "@order" member when there is more than one name. */
function withOrder(members: string, names: readonly string[]): string {
  const all = [members];
  if (names.length > 1) all.push(`"${orderMember}":${JSON.stringify(names)}`);
  return `{${all.filter((text) => text !== '').join(',')}}`;
}

/** The incoming properties of a put or merge, and the stored text the request path made of them, if any. */
export interface IncomingProperties {
  readonly properties: Properties;
  readonly stored?: StoredProperties | undefined;
}

/**
 * A stored JSON text (canonical: JSON.stringify's escapes, a Double -0 as `-0.0`) that may hold
 * what jsonb cannot: an escaped U+0000 or surrogate, or a -0 (matches inside strings only make
 * the caller take the slow path).
 */
const storedTextUnsafe = /\\u0000|\\ud[89a-f]|:-0(?:\.0*)?(?:[eE][+-]?\d+)?[,}]/i;

/**
 * The stored text of incoming properties and their names in order, straight from the text the
 * request path made, so that a write does not decode its body's properties only to encode them
 * again; undefined when there is no such text or it needs codec escapes (then encode `properties`).
 */
export function incomingText(
  incoming: IncomingProperties,
): { readonly doc: string; readonly names: readonly string[] } | undefined {
  const doc = incoming.stored?.json;
  if (doc === undefined || storedTextUnsafe.test(doc)) return undefined;
  // Property names cannot contain '@' (nor start with a digit: JSON.parse keeps their order).
  const names = Object.keys(JSON.parse(doc) as object).filter((name) => !name.includes('@'));
  assert.equal(names.length, incoming.stored!.count, 'the stored text holds as many properties as it says');
  return { doc, names };
}

/** What a row holds of incoming properties written as they are (a put, or a merge into nothing). */
export function encodeIncoming(incoming: IncomingProperties): EncodedProperties {
  const text = incomingText(incoming);
  if (text === undefined) return encodeProperties(incoming.properties);
  return { doc: text.doc, props: withOrder(text.doc.slice(1, -1), text.names) };
}

/** An entity read back: from its stored JSON form, or from the jsonb text of a row that has none. */
export function storedEntity(
  partitionKey: string,
  rowKey: string,
  timestamp: bigint,
  doc: string | null,
  props: string | null,
): Entity {
  if (doc !== null) return new StoredEntity(partitionKey, rowKey, timestamp, doc);
  assert(props !== null, 'a row without its stored JSON form is read with its jsonb text');
  return new LazyEntity(partitionKey, rowKey, timestamp, props, decodeProperties);
}

function escaped(properties: Properties): boolean {
  for (const value of properties.values()) if (needsEscape(value)) return true;
  return false;
}

function needsEscape(value: EdmValue): boolean {
  return (
    (value.type === 'Edm.String' && jsonbUnsafe.test(value.value)) ||
    (value.type === 'Edm.Double' && Object.is(value.value, -0))
  );
}

/**
 * The stored members of `properties` as a jsonb object without the "@order" member: what a merge
 * in SQL lays over the stored object (it keeps the order itself).
 */
export function encodeMergedMembers(properties: Properties): string {
  return `{${objectMembers(properties)}}`;
}

/** The members of the stored object of `properties`, without the braces. */
function objectMembers(properties: Properties): string {
  let escaped: Map<string, EdmValue> | undefined;
  for (const [name, value] of properties) {
    if (needsEscape(value)) (escaped ??= new Map()).set(name, value);
  }
  if (escaped === undefined) return encodeStoredProperties(properties).slice(1, -1);
  const plain: Properties = new Map([...properties].filter(([name]) => !escaped.has(name)));
  const members = [...escaped].map(([name, value]) =>
    value.type === 'Edm.String'
      ? `${JSON.stringify(name)}:{"${utf16Marker}":"${Buffer.from(value.value, 'utf16le').toString('base64')}"}`
      : `${JSON.stringify(`${name}@odata.type`)}:"Edm.Double",${JSON.stringify(name)}:"-0"`,
  );
  return [...members, encodeStoredProperties(plain).slice(1, -1)].filter((text) => text !== '').join(',');
}

/** The properties of a stored jsonb text (PostgreSQL's output form), in their order. */
export function decodeProperties(text: string): Properties {
  const members = JSON.parse(text) as Record<string, unknown>;
  const order = members[orderMember] as string[] | undefined;
  delete members[orderMember];
  if (text.includes(`"${utf16Marker}"`)) {
    for (const [name, value] of Object.entries(members)) {
      if (typeof value === 'object' && value !== null && utf16Marker in value) {
        members[name] = Buffer.from((value as Record<string, string>)[utf16Marker]!, 'base64').toString('utf16le');
      }
    }
  }
  return decodeStoredMembers(members, order);
}

/**
 * Whether `name` can name a table here: PostgreSQL text holds neither U+0000 nor unpaired
 * surrogates, and table names (validated at creation) are ASCII letters and digits.
 */
export function storableName(name: string): boolean {
  return !/\u0000|[\ud800-\udfff]/.test(name);
}
