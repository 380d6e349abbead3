// JSON lines: one entity per line in the service's own OData JSON, every property annotated.
// Pure: no I/O.
//
//   {"PartitionKey":"p","RowKey":"r","Timestamp":"2024-05-01T10:00:00.1234567Z",
//    "Count":5,"Count@odata.type":"Edm.Int32","Big":"-9223372036854775808","Big@odata.type":"Edm.Int64"}
//
// Every custom property carries `Name@odata.type` (Edm.String too), so a reader never guesses.
// Int64, DateTime, Guid and Binary values are JSON strings; a finite Double is a JSON number
// literal that keeps its `.0` and the sign of -0 (`-0.0`); NaN and ±Infinity are the strings
// `NaN`, `Infinity`, `-Infinity`, as the service writes them. A line is also a valid Insert
// Entity body. Reading accepts unannotated properties and types them as the service would
// (string → Edm.String, true/false → Edm.Boolean, integer → Edm.Int32, a number written with a
// point or an exponent, such as 2.0 or 1e3, → Edm.Double).
import { annotateDoubleLiterals } from '../double-literals.js';
import { type EdmType, type Row, RowError, type TypedValue, canonicalValue, parseTypeName } from './row.js';

const annotationSuffix = '@odata.type';

export function encodeJsonLine(row: Row): string {
  const parts: string[] = [];
  if (row.partitionKey !== undefined) parts.push(`"PartitionKey":${JSON.stringify(row.partitionKey)}`);
  if (row.rowKey !== undefined) parts.push(`"RowKey":${JSON.stringify(row.rowKey)}`);
  if (row.timestamp !== undefined) parts.push(`"Timestamp":${JSON.stringify(row.timestamp)}`);
  for (const [name, property] of row.properties) {
    const key = JSON.stringify(name);
    parts.push(`${key}:${jsonValue(property)}`, `${JSON.stringify(name + annotationSuffix)}:"${property.type}"`);
  }
  return `{${parts.join(',')}}`;
}

function jsonValue({ type, value }: TypedValue): string {
  switch (type) {
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return value;
    case 'Edm.Double':
      return /^-?\d/.test(value) ? value : JSON.stringify(value); // NaN, Infinity, -Infinity as strings
    default:
      return JSON.stringify(value);
  }
}

/** Parses one line; throws RowError with the reason for anything that is not an entity. */
export function decodeJsonLine(line: string): Row {
  let parsed: unknown;
  try {
    // Unannotated `2.0` or `1e3` is a Double on the wire, which JSON.parse alone would lose.
    parsed = JSON.parse(annotateDoubleLiterals(line));
  } catch (error) {
    throw new RowError(`not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new RowError('a line must be a JSON object');
  }
  const object = parsed as Record<string, unknown>;
  const properties = new Map<string, TypedValue>();
  for (const [name, raw] of Object.entries(object)) {
    if (name.endsWith(annotationSuffix) || name.startsWith('odata.')) continue;
    if (name === 'PartitionKey' || name === 'RowKey' || name === 'Timestamp') continue;
    if (raw === null) continue; // null means "no such property", as in a request body
    const annotation = object[name + annotationSuffix];
    const type = annotation === undefined ? inferredType(name, raw) : annotatedType(name, annotation);
    properties.set(name, { type, value: canonicalValue(type, scalarText(name, raw, type), name) });
  }
  for (const name of Object.keys(object)) {
    if (name.endsWith(annotationSuffix) && !(name.slice(0, -annotationSuffix.length) in object)) {
      throw new RowError(`type annotation ${JSON.stringify(name)} without a value`);
    }
  }
  return {
    partitionKey: keyText(object, 'PartitionKey'),
    rowKey: keyText(object, 'RowKey'),
    timestamp: typeof object['Timestamp'] === 'string' ? object['Timestamp'] : undefined,
    properties,
  };
}

function keyText(object: Record<string, unknown>, which: 'PartitionKey' | 'RowKey'): string | undefined {
  const value = object[which];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RowError(`${which} must be a string`);
  return value;
}

function annotatedType(name: string, annotation: unknown): EdmType {
  const type = typeof annotation === 'string' ? parseTypeName(annotation) : undefined;
  if (type === undefined) throw new RowError(`unknown type ${JSON.stringify(annotation)} for ${JSON.stringify(name)}`);
  return type;
}

function inferredType(name: string, raw: unknown): EdmType {
  switch (typeof raw) {
    case 'string':
      return 'Edm.String';
    case 'boolean':
      return 'Edm.Boolean';
    case 'number':
      return Number.isInteger(raw) ? 'Edm.Int32' : 'Edm.Double';
    default:
      throw new RowError(`the value of ${JSON.stringify(name)} is not a string, number or boolean`);
  }
}

/**
 * A JSON scalar's text. JSON.parse already turned numbers into doubles: exact for Int32 and
 * Double (`-0.0` stays -0), while Int64 beyond 2^53 must come as a string, as this format writes it.
 */
function scalarText(name: string, raw: unknown, type: EdmType): string {
  switch (typeof raw) {
    case 'string':
      return raw;
    case 'boolean':
      return String(raw);
    case 'number':
      if (type === 'Edm.Int64' && !Number.isSafeInteger(raw)) {
        throw new RowError(`the number ${JSON.stringify(name)} is beyond 2^53; write an Int64 as a string`);
      }
      return Object.is(raw, -0) ? '-0.0' : String(raw);
    default:
      throw new RowError(`the value of ${JSON.stringify(name)} is not a string, number or boolean`);
  }
}
