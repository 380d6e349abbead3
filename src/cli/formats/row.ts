// One entity as the file formats carry it: keys, the Timestamp the service set, and typed
// properties whose values are canonical text. Pure: no I/O. Text keeps every EDM value exact
// (Int64 beyond 2^53, DateTime to 100 ns, -0, NaN, ±Infinity), which no JS number could.
import {
  type EdmType,
  formatDateTimeTicks,
  formatFiniteDouble,
  isEdmType,
  parseBase64,
  parseDateTimeTicks,
  parseDoubleText,
  parseGuid,
  parseInt32Text,
  parseInt64Text,
} from '../../domain/edm.js';

export type { EdmType };

export interface TypedValue {
  readonly type: EdmType;
  /** Canonical text (see canonicalValue): what every format writes and every reader produces. */
  readonly value: string;
}

export interface Row {
  /** Absent only in exports whose --select left the keys out. */
  readonly partitionKey: string | undefined;
  readonly rowKey: string | undefined;
  /** The service's Timestamp as ISO text; ignored on import (the service sets it). */
  readonly timestamp: string | undefined;
  /** Custom properties in the order the service returned them. */
  readonly properties: ReadonlyMap<string, TypedValue>;
}

/** A row a reader could not turn into an entity; the reason goes to the rejects file. */
export class RowError extends Error {
  override readonly name = 'RowError';
}

/**
 * The canonical text of `text` read as `type`, or a RowError saying why it is not one:
 * Int32/Int64 decimal, Double as JSON number text (integral values with `.0`, `-0.0` for -0) or
 * NaN/Infinity/-Infinity, Boolean `true`/`false` (any case accepted), DateTime ISO 8601 UTC with
 * up to 7 fraction digits, Guid lower-case hyphenated, Binary padded base64.
 */
export function canonicalValue(type: EdmType, text: string, name: string): string {
  const fail = (): never => {
    const shown = text.length > 64 ? `${text.slice(0, 64)}…` : text;
    throw new RowError(`${JSON.stringify(shown)} is not a valid ${type} for ${JSON.stringify(name)}`);
  };
  switch (type) {
    case 'Edm.String':
      return text;
    case 'Edm.Int32':
      return String(parseInt32Text(text) ?? fail());
    case 'Edm.Int64':
      return String(parseInt64Text(text) ?? fail());
    case 'Edm.Double':
      return formatDouble(parseDoubleText(text) ?? fail());
    case 'Edm.Boolean': {
      const lower = text.toLowerCase();
      return lower === 'true' || lower === 'false' ? lower : fail();
    }
    case 'Edm.DateTime':
      return formatDateTimeTicks(parseDateTimeTicks(text) ?? fail());
    case 'Edm.Guid':
      return parseGuid(text) ?? fail();
    case 'Edm.Binary':
      return (parseBase64(text) ?? fail()).toString('base64');
  }
}

/** A double's canonical text: NaN, Infinity, -Infinity, or its shortest round-trip JSON form. */
export function formatDouble(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return formatFiniteDouble(value);
}

/**
 * An EDM type name as files spell it: `Edm.Int64`, also `Int64` and any letter case (hand-written
 * files); undefined if it names no type Azure Tables stores.
 */
export function parseTypeName(text: string): EdmType | undefined {
  const bare = text
    .trim()
    .replace(/^edm\./i, '')
    .toLowerCase();
  const type = `Edm.${bare.charAt(0).toUpperCase()}${bare.slice(1)}`.replace('Datetime', 'DateTime');
  return isEdmType(type) ? type : undefined;
}

/** The keys an import needs, or a RowError. */
export function requireKeys(row: Row): { partitionKey: string; rowKey: string } {
  if (row.partitionKey === undefined) throw new RowError('the row has no PartitionKey');
  if (row.rowKey === undefined) throw new RowError('the row has no RowKey');
  return { partitionKey: row.partitionKey, rowKey: row.rowKey };
}
