// An entity as the service sees it, and the facts about one that every layer shares: its keys,
// their rules, and its size by the service's accounting (Azure REST: understanding-the-table-service-data-model).
import { StorageError } from '../errors.js';
import { keyLengthUtf16Max } from '../limits.js';
import { assertNever } from './assert.js';
import type { EdmType, EdmValue } from './edm.js';

/** Custom properties in the order the client first sent them. */
export type Properties = Map<string, EdmValue>;

/** An entity as the service sees it. `timestamp` is in ticks, set by the store on every write. */
export interface Entity {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly timestamp: bigint;
  readonly properties: Properties;
  /**
   * The same properties as one JSON object, when the store has such text at hand, so responses
   * splice it instead of encoding the values again. Its one form: the members in the properties'
   * order, each value in its OData JSON form, preceded by a `name@odata.type` member exactly where
   * minimal metadata has one, and also (only) before Doubles whose value is a JSON number. The
   * encoder derives every metadata level from it (table/wire/odata.ts). A store sets it only where
   * it guarantees that form (the stored form of storage/stored-json.ts is it).
   */
  readonly json?: string;
}

/** The two keys that address an entity in its table. */
export interface EntityKeys {
  readonly partitionKey: string;
  readonly rowKey: string;
}

/**
 * Azure REST: understanding-the-table-service-data-model accounting (third-party summary, unverified): 4 bytes + 2 per
 * key code unit
 * + per property 8 + 2 per name code unit + the value's size.
 */
export function entitySizeBytes(partitionKey: string, rowKey: string, properties: Properties): number {
  return keyedSizeBytes(partitionKey, rowKey, propertiesSizeBytes(properties));
}

/** The sum of propertySizeBytes over `properties`. */
export function propertiesSizeBytes(properties: Properties): number {
  let propertyBytes = 0;
  for (const [name, value] of properties) {
    const length = value.type === 'Edm.String' || value.type === 'Edm.Binary' ? value.value.length : 0;
    propertyBytes += propertySizeBytes(name, value.type, length);
  }
  return propertyBytes;
}

/** The whole entity's size from its keys and the sum of its propertySizeBytes. */
export function keyedSizeBytes(partitionKey: string, rowKey: string, propertyBytes: number): number {
  return 4 + 2 * (partitionKey.length + rowKey.length) + propertyBytes;
}

/** One property's share; `length` is a String's UTF-16 code units or a Binary's bytes, else unused. */
export function propertySizeBytes(name: string, type: EdmType, length: number): number {
  return 8 + 2 * name.length + valueSizeBytes(type, length);
}

function valueSizeBytes(type: EdmType, length: number): number {
  switch (type) {
    case 'Edm.String':
      return 2 * length + 4;
    case 'Edm.Binary':
      return length + 4;
    case 'Edm.Guid':
      return 16;
    case 'Edm.DateTime':
    case 'Edm.Double':
    case 'Edm.Int64':
      return 8;
    case 'Edm.Int32':
      return 4;
    case 'Edm.Boolean':
      return 1;
    default:
      return assertNever(type);
  }
}

// `/ \ # ?`, C0 and C1 controls (Azure REST: understanding-the-table-service-data-model), and lone surrogates: those
// cannot be carried
// in a percent-encoded UTF-8 URL, so such an entity could never be addressed (our choice).
const forbiddenKeyCharacter = /[/\\#?\u0000-\u001f\u007f-\u009f]|\p{Cs}/u;

/** Key length and characters (Azure REST: understanding-the-table-service-data-model; both codes unverified). */
export function validateKey(value: string, which: 'PartitionKey' | 'RowKey'): void {
  if (value.length > keyLengthUtf16Max) {
    // 400 KeyValueTooLarge is the spec's recommendation (Azure REST: understanding-the-table-service-data-model,
    // unverified).
    throw new StorageError('KeyValueTooLarge', `The ${which} is longer than ${keyLengthUtf16Max} characters.`);
  }
  if (forbiddenKeyCharacter.test(value)) {
    throw new StorageError('OutOfRangeInput', `The ${which} contains a character that is not allowed in keys.`);
  }
}
