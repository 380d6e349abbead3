// How the SQLite engine lays out keys and properties in its rows.
//
// Keys are UTF-16BE blobs: SQLite compares blobs with memcmp, and big-endian code units compare
// byte-wise exactly as JavaScript's `<` compares strings (data-model.md §6), so '10' < '2' and a
// character above U+FFFF sorts by its surrogates.
//
// Properties are one JSON array of (name, type code, value) triples. JSON.parse is native and
// faster than any byte decoder we could write in JS, and the triples keep every EDM type exact:
// Int64 and DateTime ticks travel as decimal strings, never as JS numbers.
import type { EdmType, EdmValue, Properties } from '../../protocol/edm.js';

export function encodeKey(key: string): Buffer {
  return Buffer.from(key, 'utf16le').swap16();
}

export function decodeKey(blob: Buffer): string {
  return Buffer.from(blob).swap16().toString('utf16le');
}

const typeCodes: Record<EdmType, number> = {
  'Edm.String': 0,
  'Edm.Int32': 1,
  'Edm.Int64': 2,
  'Edm.Double': 3,
  'Edm.Boolean': 4,
  'Edm.DateTime': 5,
  'Edm.Guid': 6,
  'Edm.Binary': 7,
};

type StoredScalar = string | number | boolean;

function storedValue(value: EdmValue): StoredScalar {
  switch (value.type) {
    case 'Edm.String':
    case 'Edm.Int32':
    case 'Edm.Boolean':
    case 'Edm.Guid':
      return value.value;
    case 'Edm.Int64':
    case 'Edm.DateTime':
      return value.value.toString();
    case 'Edm.Double':
      // JSON has no NaN, Infinity or -0: those travel as their text.
      if (Object.is(value.value, -0)) return '-0';
      return Number.isFinite(value.value) ? value.value : String(value.value);
    case 'Edm.Binary':
      return value.value.toString('base64');
    default:
      return assertNever(value);
  }
}

function edmValue(code: number, stored: StoredScalar): EdmValue {
  switch (code) {
    case 0:
      return { type: 'Edm.String', value: stored as string };
    case 1:
      return { type: 'Edm.Int32', value: stored as number };
    case 2:
      return { type: 'Edm.Int64', value: BigInt(stored as string) };
    case 3:
      return { type: 'Edm.Double', value: typeof stored === 'number' ? stored : Number(stored) };
    case 4:
      return { type: 'Edm.Boolean', value: stored as boolean };
    case 5:
      return { type: 'Edm.DateTime', value: BigInt(stored as string) };
    case 6:
      return { type: 'Edm.Guid', value: stored as string };
    case 7:
      return { type: 'Edm.Binary', value: Buffer.from(stored as string, 'base64') };
    default:
      throw new Error(`corrupt row: unknown property type code ${code}`);
  }
}

export function encodeProperties(properties: Properties): string {
  const triples: StoredScalar[] = [];
  for (const [name, value] of properties) triples.push(name, typeCodes[value.type], storedValue(value));
  return JSON.stringify(triples);
}

export function decodeProperties(text: string): Properties {
  const triples = JSON.parse(text) as StoredScalar[];
  const properties: Properties = new Map();
  for (let i = 0; i < triples.length; i += 3) {
    properties.set(triples[i] as string, edmValue(triples[i + 1] as number, triples[i + 2]!));
  }
  return properties;
}

function assertNever(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
