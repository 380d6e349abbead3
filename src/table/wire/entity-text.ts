// Entity request bodies straight to the stored JSON text (storage/stored-json.ts, form v1) in one
// pass over the body: no JSON tree, no typed values, for the bodies clients really send (flat
// objects of scalars, canonical literals). This is the $batch and single-write hot path.
//
// It never decides an error. Whatever it does not take as plainly valid (a syntax error, a
// nested value, a bad type, a limit, but also unusual valid input such as a DateTime with an
// offset) goes through decodeEntityBody (wire/entity-json.ts), the one reader of record, whose result
// or error is then the answer. Both paths give the same keys and byte-identical stored text:
// tests/table/wire/entity-text.test.ts checks that over random and hostile bodies.
import assert from 'node:assert/strict';
import { assertNever } from '../../domain/assert.js';
import {
  canonicalBase64,
  canonicalDateTimeText,
  edmTypes,
  formatFiniteDouble,
  parseDoubleText,
  parseGuid,
  parseInt32Text,
  parseInt64Text,
  type EdmType,
} from '../../domain/edm.js';
import {
  keyedSizeBytes,
  propertiesSizeBytes,
  propertySizeBytes,
  validateKey,
  type Properties,
} from '../../domain/entity.js';
import { StorageError } from '../../errors.js';
import { binaryValueBytesMax, customPropertiesMax, entityBytesMax, stringValueLengthUtf16Max } from '../../limits.js';
import {
  decodeStoredProperties,
  encodeStoredProperties,
  isAnnotatedType,
  storedJsonVersion,
} from '../../storage/stored-json.js';
import type { StoredProperties } from '../../storage/table-store.js';
import { decodeEntityBody, validatePropertyName, type DecodedEntity } from './entity-json.js';

assert(storedJsonVersion === 1, 'entity-text writes stored JSON form v1');

/** A decoded request body: keys, and the properties as stored text, decoded only on demand. */
export class EntityBody implements DecodedEntity {
  private decoded: Properties | undefined;

  constructor(
    readonly partitionKey: string | undefined,
    readonly rowKey: string | undefined,
    readonly stored: StoredProperties,
    decoded?: Properties,
  ) {
    this.decoded = decoded;
  }

  get properties(): Properties {
    this.decoded ??= decodeStoredProperties(this.stored.json);
    return this.decoded;
  }
}

/** Decodes and validates a request body (UTF-8-decoded text): the same answer as decodeEntityBody. */
export function decodeEntity(text: string): EntityBody {
  const fast = transcodeOrUndefined(text);
  if (fast !== undefined) return fast;
  const { partitionKey, rowKey, properties } = decodeEntityBody(text);
  const stored = {
    json: encodeStoredProperties(properties),
    count: properties.size,
    propertyBytes: propertiesSizeBytes(properties),
  };
  return new EntityBody(partitionKey, rowKey, stored, properties);
}

/** The one-pass result, or undefined when decodeEntityBody must answer (see the file header). */
export function transcodeOrUndefined(text: string): EntityBody | undefined {
  try {
    const members = scanFlatObject(text);
    return members === undefined ? undefined : transcode(members);
  } catch (error) {
    // A validator of record refused something: decodeEntityBody gives the error, in its order.
    if (error instanceof StorageError) return undefined;
    throw error;
  }
}

// -- pass 1: the members of a flat object of scalars ----------------------------------------------

/** What a member's value is, as JSON sees it. */
const Kind = { String: 0, Number: 1, True: 2, False: 3, Null: 4 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

interface Members {
  /** Member names, decoded. */
  readonly names: string[];
  readonly kinds: Kind[];
  /** A string's decoded value, a number's literal text; '' for the others. */
  readonly values: string[];
  /** A string's JSON text when it is already what JSON.stringify gives for its value; else undefined. */
  readonly rawStrings: (string | undefined)[];
}

const quote = 0x22;
const backslash = 0x5c;
const anySurrogate = /[\ud800-\udfff]/;

/**
 * The members of `{ "name": scalar, … }` with no repeated name, or undefined for anything else.
 * JSON.parse (native, and strict RFC 8259 as json-reader is) checks the syntax first; the walk
 * over the then well-formed text only finds where each name and value lies.
 */
function scanFlatObject(text: string): Members | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const members: Members = { names: [], kinds: [], values: [], rawStrings: [] };
  const strings = new StringCursor(text);
  // JSON.stringify escapes lone surrogates only; a text without any needs no closer look.
  const rawStringsKept = !anySurrogate.test(text);
  const seen = new Set<string>();
  let pos = skipWhitespace(text, skipWhitespace(text, 0) + 1); // past '{'
  if (text.charCodeAt(pos) === 0x7d /* } */) return members;
  for (;;) {
    const nameEnd = strings.end(pos);
    const name = strings.value(pos, nameEnd);
    if (seen.has(name)) return undefined;
    seen.add(name);
    pos = skipWhitespace(text, skipWhitespace(text, nameEnd + 1) + 1); // past ':'
    const c = text.charCodeAt(pos);
    let end: number;
    let kind: Kind;
    let value = '';
    let rawString: string | undefined;
    if (c === quote) {
      end = strings.end(pos);
      kind = Kind.String;
      value = strings.value(pos, end);
      if (rawStringsKept && !strings.escaped) rawString = text.slice(pos, end + 1);
      end++;
    } else if (c === 0x74 /* t */) {
      [kind, end] = [Kind.True, pos + 4];
    } else if (c === 0x66 /* f */) {
      [kind, end] = [Kind.False, pos + 5];
    } else if (c === 0x6e /* n */) {
      [kind, end] = [Kind.Null, pos + 4];
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      end = pos + 1;
      while (isNumberCharacter(text.charCodeAt(end))) end++;
      kind = Kind.Number;
      value = text.slice(pos, end);
    } else {
      return undefined; // an object or an array
    }
    members.names.push(name);
    members.kinds.push(kind);
    members.values.push(value);
    members.rawStrings.push(rawString);
    pos = skipWhitespace(text, end);
    if (text.charCodeAt(pos) === 0x7d /* } */) return members;
    pos = skipWhitespace(text, pos + 1); // past ','
  }
}

/** Finds the ends of the string literals of a well-formed JSON text, in order, by search. */
class StringCursor {
  /** The first backslash not before the string being read (-1: none left). */
  private nextBackslash: number;
  /** Whether the string last passed to end() holds an escape. */
  escaped = false;

  constructor(private readonly text: string) {
    this.nextBackslash = text.indexOf('\\');
  }

  /** Index of the closing quote of the literal opening at `start`. */
  end(start: number): number {
    const text = this.text;
    const end = text.indexOf('"', start + 1);
    this.escaped = this.nextBackslash >= 0 && this.nextBackslash < end;
    if (!this.escaped) return end;
    let pos = start + 1;
    while (text.charCodeAt(pos) !== quote) pos += text.charCodeAt(pos) === backslash ? 2 : 1;
    this.nextBackslash = text.indexOf('\\', pos + 1);
    return pos;
  }

  /** The value of the literal text[start..end] that end() just found. */
  value(start: number, end: number): string {
    const literal = this.text.slice(start + (this.escaped ? 0 : 1), this.escaped ? end + 1 : end);
    return this.escaped ? (JSON.parse(literal) as string) : literal;
  }
}

function skipWhitespace(text: string, pos: number): number {
  for (;;) {
    const c = text.charCodeAt(pos);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return pos;
    pos++;
  }
}

/** Digits, sign, point and exponent: what a (well-formed) number literal is made of. */
function isNumberCharacter(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

// -- pass 2: keys, types and the stored text, by decodeEntityBody's rules ------------------------

const annotationSuffix = '@odata.type';
const timestampAnnotation = `Timestamp${annotationSuffix}`;
const edmTypeNames: ReadonlySet<string> = new Set(edmTypes);

function transcode(members: Members): EntityBody | undefined {
  const { names, kinds, values } = members;
  // Annotations may come before or after their value.
  let annotations: Map<string, EdmType> | undefined;
  let partitionKey: string | undefined;
  let rowKey: string | undefined;
  let annotatedValues = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (isIgnored(name)) continue;
    if (name.endsWith(annotationSuffix)) {
      if (kinds[i] !== Kind.String || !edmTypeNames.has(values[i]!)) return undefined;
      annotations ??= new Map();
      annotations.set(name.slice(0, -annotationSuffix.length), values[i] as EdmType);
    }
  }
  let json = '{';
  let count = 0;
  let propertyBytes = 0;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (isIgnored(name) || name.endsWith(annotationSuffix)) continue;
    const kind = kinds[i]!;
    const annotated = annotations?.get(name);
    if (annotated !== undefined) annotatedValues++;
    if (name === 'PartitionKey' || name === 'RowKey') {
      if (annotated !== undefined && annotated !== 'Edm.String') return undefined;
      if (kind === Kind.Null) continue;
      if (kind !== Kind.String) return undefined;
      validateKey(values[i]!, name);
      if (name === 'PartitionKey') partitionKey = values[i];
      else rowKey = values[i];
      continue;
    }
    validatePropertyName(name);
    if (kind === Kind.Null) continue;
    const type = annotated ?? inferredType(kind, values[i]!);
    const value = storedValue(type, kind, values[i]!, members.rawStrings[i]);
    if (value === undefined) return undefined;
    if (json.length > 1) json += ',';
    if (value.annotated) json += `"${name}@odata.type":"${type}",`;
    // A valid property name needs no escaping: JSON.stringify(name) is `"${name}"`.
    json += `"${name}":${value.json}`;
    propertyBytes += propertySizeBytes(name, type, value.length);
    if (++count > customPropertiesMax) return undefined;
  }
  // Every annotation must have its value (the keys' included); value names are unique.
  if (annotatedValues !== (annotations?.size ?? 0)) return undefined;
  if (keyedSizeBytes(partitionKey ?? '', rowKey ?? '', propertyBytes) > entityBytesMax) return undefined;
  return new EntityBody(partitionKey, rowKey, { json: `${json}}`, count, propertyBytes });
}

/** Control members and the server-owned Timestamp (docs/protocol-notes.md#control-members-in-request-bodies). */
function isIgnored(name: string): boolean {
  return name.startsWith('odata.') || name === 'Timestamp' || name === timestampAnnotation;
}

function inferredType(kind: Kind, value: string): EdmType {
  switch (kind) {
    case Kind.String:
      return 'Edm.String';
    case Kind.True:
    case Kind.False:
      return 'Edm.Boolean';
    case Kind.Number:
      return /[.eE]/.test(value) ? 'Edm.Double' : 'Edm.Int32';
    default:
      throw new Error(`a JSON ${kind} has no inferred type`); // null is never stored
  }
}

interface StoredValue {
  /** The value's text in the stored object. */
  readonly json: string;
  readonly annotated: boolean;
  /** A String's code units or a Binary's bytes (for the size accounting). */
  readonly length: number;
}

// Canonical integer literals: what String(Number(text)) or String(BigInt(text)) gives back.
const canonicalInt32 = /^-?[1-9]\d{0,8}$|^0$/;
const canonicalInt64 = /^-?[1-9]\d{0,17}$|^0$/;

/** The stored text of a value of `type` given as `kind`, or undefined if it does not fit the type. */
function storedValue(type: EdmType, kind: Kind, value: string, rawString: string | undefined): StoredValue | undefined {
  const isString = kind === Kind.String;
  const isNumber = kind === Kind.Number;
  switch (type) {
    case 'Edm.String':
      if (!isString || value.length > stringValueLengthUtf16Max) return undefined;
      return { json: rawString ?? JSON.stringify(value), annotated: false, length: value.length };
    case 'Edm.Int32': {
      if (!isString && !isNumber) return undefined;
      if (canonicalInt32.test(value)) return { json: value, annotated: false, length: 0 };
      const int32 = parseInt32Text(value);
      return int32 === undefined ? undefined : { json: String(int32 | 0), annotated: false, length: 0 };
    }
    case 'Edm.Int64': {
      if (!isString && !isNumber) return undefined;
      if (canonicalInt64.test(value)) return { json: `"${value}"`, annotated: true, length: 0 };
      const int64 = parseInt64Text(value);
      return int64 === undefined ? undefined : { json: `"${int64}"`, annotated: true, length: 0 };
    }
    case 'Edm.Double': {
      if (!isString && !isNumber) return undefined;
      const double = parseDoubleText(value);
      if (double === undefined) return undefined;
      const json = Number.isFinite(double) ? formatFiniteDouble(double) : `"${String(double)}"`;
      return { json, annotated: isAnnotatedType(type, double), length: 0 };
    }
    case 'Edm.Boolean': {
      if (kind === Kind.True || (isString && value === 'true')) return { json: 'true', annotated: false, length: 0 };
      if (kind === Kind.False || (isString && value === 'false')) return { json: 'false', annotated: false, length: 0 };
      return undefined;
    }
    case 'Edm.DateTime': {
      const text = isString ? canonicalDateTimeText(value) : undefined;
      return text === undefined ? undefined : { json: `"${text}"`, annotated: true, length: 0 };
    }
    case 'Edm.Guid': {
      const guid = isString ? parseGuid(value) : undefined;
      return guid === undefined ? undefined : { json: `"${guid}"`, annotated: true, length: 0 };
    }
    case 'Edm.Binary': {
      const base64 = isString ? canonicalBase64(value) : undefined;
      if (base64 === undefined || base64.bytes > binaryValueBytesMax) return undefined;
      return { json: `"${base64.text}"`, annotated: true, length: base64.bytes };
    }
    default:
      return assertNever(type);
  }
}
