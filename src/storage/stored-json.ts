// The stored form of an entity's custom properties, shared by the engines that keep JSON: one
// JSON object, members in the client's order, each value in its JSON form, and a
// `name@odata.type` member before every value whose type JSON cannot carry (Int64, DateTime,
// Guid, Binary, and every Double that is whole or not finite). The form belongs to storage and is
// versioned: a change to it needs a new version and a migration, never a change to this one.
//
// It is the form of Entity.json (the minimal-metadata wire form but for the annotation of whole
// Doubles), so responses derive their text from it without decoding values. Request bodies are
// written straight into this form by table/wire/entity-text.ts, which checks storedJsonVersion.
import { assertNever } from '../domain/assert.js';
import { edmValueJson, parseDateTimeTicks, type EdmType, type EdmValue } from '../domain/edm.js';
import type { Properties } from '../domain/entity.js';

/** The version of this form; engines record it with their schema. */
export const storedJsonVersion = 1;

export function encodeStoredProperties(properties: Properties): string {
  let text = '{';
  for (const [name, value] of properties) {
    const quoted = JSON.stringify(name);
    if (text.length > 1) text += ',';
    // `"name@odata.type"`: the quoted name with the suffix before its closing quote.
    if (isAnnotated(value)) text += `${quoted.slice(0, -1)}@odata.type":"${value.type}",`;
    text += `${quoted}:${edmValueJson(value)}`;
  }
  return `${text}}`;
}

/** The inverse of encodeStoredProperties: unannotated numbers are Int32 when whole, else Double. */
export function decodeStoredProperties(text: string): Properties {
  return decodeStoredMembers(JSON.parse(text) as Record<string, unknown>);
}

/**
 * The properties of a parsed stored object, in the order of `names` (default: the object's own),
 * for an engine whose storage keeps the members but not their order.
 */
export function decodeStoredMembers(
  members: Record<string, unknown>,
  names: Iterable<string> = Object.keys(members),
): Properties {
  const properties: Properties = new Map();
  for (const name of names) {
    if (name.endsWith('@odata.type')) continue;
    properties.set(name, storedValue(members[name], members[`${name}@odata.type`] as EdmType | undefined));
  }
  return properties;
}

function isAnnotated(value: EdmValue): boolean {
  return isAnnotatedType(value.type, value.type === 'Edm.Double' ? value.value : 0);
}

/** Whether a value of `type` is stored with a `name@odata.type` member (`double`: a Double's value). */
export function isAnnotatedType(type: EdmType, double: number): boolean {
  switch (type) {
    case 'Edm.String':
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return false;
    case 'Edm.Double':
      // A whole Double would read back as Int32, and JSON has no NaN or ±Infinity.
      return !Number.isFinite(double) || Number.isInteger(double);
    case 'Edm.Int64':
    case 'Edm.DateTime':
    case 'Edm.Guid':
    case 'Edm.Binary':
      return true;
    default:
      return assertNever(type);
  }
}

function storedValue(raw: unknown, type: EdmType | undefined): EdmValue {
  switch (type) {
    case undefined:
      if (typeof raw === 'string') return { type: 'Edm.String', value: raw };
      if (typeof raw === 'boolean') return { type: 'Edm.Boolean', value: raw };
      return Number.isInteger(raw)
        ? { type: 'Edm.Int32', value: raw as number }
        : { type: 'Edm.Double', value: raw as number };
    case 'Edm.Double':
      return { type, value: typeof raw === 'number' ? raw : Number(raw) };
    case 'Edm.Int64':
      return { type, value: BigInt(raw as string) };
    case 'Edm.DateTime': {
      const ticks = parseDateTimeTicks(raw as string);
      if (ticks === undefined) throw new Error(`corrupt stored entity: bad DateTime ${String(raw)}`);
      return { type, value: ticks };
    }
    case 'Edm.Guid':
      return { type, value: raw as string };
    case 'Edm.Binary':
      return { type, value: Buffer.from(raw as string, 'base64') };
    default:
      throw new Error(`corrupt stored entity: unexpected annotation ${String(type)}`);
  }
}
