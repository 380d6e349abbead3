// Rows <-> the entities of @azure/data-tables. Values travel as `{ value, type }` objects, which
// the SDK sends with an `@odata.type` annotation and (with disableTypeConversion) returns as they
// came on the wire, so nothing passes through a lossy JS number or Date.
import type { TableEntity, TableEntityResult } from '@azure/data-tables';
import { type EdmType, type Row, type TypedValue, canonicalValue, formatDouble } from './formats/row.js';

type SdkTypeName = 'String' | 'Int32' | 'Int64' | 'Double' | 'Boolean' | 'DateTime' | 'Guid' | 'Binary';
type SdkValue = string | number | boolean | { value: string; type: SdkTypeName };
export type SdkEntity = TableEntity<Record<string, SdkValue>>;

/** Keys/metadata the SDK returns beside the custom properties. */
const sdkMetadata = new Set(['partitionKey', 'rowKey', 'timestamp', 'etag', 'odata.etag', 'odata.metadata']);

/** The SDK entity that stores `row` (keys checked by the caller). */
export function toSdkEntity(row: Row, keys: { partitionKey: string; rowKey: string }): SdkEntity {
  const entity: SdkEntity = { partitionKey: keys.partitionKey, rowKey: keys.rowKey };
  for (const [name, property] of row.properties) entity[name] = sdkValue(property);
  return entity;
}

function sdkValue({ type, value }: TypedValue): SdkValue {
  switch (type) {
    case 'Edm.String':
      return value;
    case 'Edm.Int32':
      return Number(value); // a plain JSON integer is an Int32 on the wire
    case 'Edm.Boolean':
      return value === 'true';
    default:
      // Double too: as text with its annotation ("1.5", "NaN", "-0.0"), the service parses it.
      return { value, type: type.slice(4) as SdkTypeName };
  }
}

/** A row from an entity listed with `disableTypeConversion: true`. */
export function fromSdkEntity(entity: TableEntityResult<Record<string, unknown>>): Row {
  const properties = new Map<string, TypedValue>();
  for (const [name, raw] of Object.entries(entity)) {
    if (sdkMetadata.has(name) || raw === null || raw === undefined) continue;
    properties.set(name, typedValue(name, raw));
  }
  const timestamp = entity.timestamp as unknown;
  return {
    partitionKey: entity.partitionKey,
    rowKey: entity.rowKey,
    timestamp:
      typeof timestamp === 'object' && timestamp !== null
        ? String((timestamp as { value: unknown }).value)
        : (timestamp as string | undefined),
    properties,
  };
}

function typedValue(name: string, raw: unknown): TypedValue {
  if (typeof raw !== 'object' || raw === null || !('type' in raw) || !('value' in raw)) {
    throw new Error(`unexpected value of ${JSON.stringify(name)} from the SDK: ${JSON.stringify(raw)}`);
  }
  const type = `Edm.${String(raw.type)}` as EdmType;
  // An annotated Double comes as the JSON number the service wrote (-0 included) or as text.
  const text = typeof raw.value === 'number' && type === 'Edm.Double' ? formatDouble(raw.value) : String(raw.value);
  return { type, value: canonicalValue(type, text, name) };
}
