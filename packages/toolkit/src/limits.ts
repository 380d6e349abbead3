// The service's limits (Azure REST: understanding-the-table-service-data-model), checked before anything is sent, so a
// bad entity fails
// with a precise message on the client instead of a 400 from the service or, worse, half of a
// multi-request operation.
import { forbiddenKeyCharacters } from './keys.js';
import type { WireProperties } from './schema.js';

export const limits = {
  /**
   * Keys may be "up to 1 KiB in size"; in UTF-16 that is 512 characters, which is what Azurite
   * enforces. Whether the service counts characters or bytes is not documented; 512 works on all.
   */
  keyLengthChars: 512,
  /** Custom properties: 255 including PartitionKey, RowKey and Timestamp. */
  customProperties: 252,
  propertyNameChars: 255,
  stringUtf16Units: 32 * 1024,
  binaryBytes: 64 * 1024,
  entityBytes: 1024 * 1024,
  operationsPerBatch: 100,
  batchPayloadBytes: 4 * 1024 * 1024,
  minDateTimeMs: Date.UTC(1601, 0, 1),
  maxDateTimeMs: Date.UTC(9999, 11, 31, 23, 59, 59, 999),
} as const;

/** Error codes match the service's for the same violation. */
export type LimitCode =
  | 'KeyValueTooLarge'
  | 'OutOfRangeInput'
  | 'TooManyProperties'
  | 'PropertyNameTooLong'
  | 'PropertyNameInvalid'
  | 'PropertyValueTooLarge'
  | 'EntityTooLarge'
  | 'InvalidInput'
  | 'InvalidDuplicateRow'
  | 'TooManyOperations'
  | 'RequestBodyTooLarge';

export class LimitError extends Error {
  override name = 'LimitError';
  constructor(
    readonly code: LimitCode,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const propertyNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;
const reservedNames = new Set(['PartitionKey', 'RowKey', 'Timestamp']);

export function validateKey(which: 'PartitionKey' | 'RowKey', key: string): void {
  if (key.length > limits.keyLengthChars) {
    throw new LimitError(
      'KeyValueTooLarge',
      `${which} is ${key.length} characters, the limit is ${limits.keyLengthChars}`,
    );
  }
  const bad = forbiddenKeyCharacters.exec(key);
  if (bad)
    throw new LimitError(
      'OutOfRangeInput',
      `${which} holds the forbidden character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

export function validatePropertyName(name: string): void {
  if (name.length > limits.propertyNameChars)
    throw new LimitError('PropertyNameTooLong', `property name of ${name.length} characters`);
  if (!propertyNamePattern.test(name) || reservedNames.has(name)) {
    throw new LimitError('PropertyNameInvalid', `${JSON.stringify(name)} is not a valid property name`);
  }
}

/** Bytes of one value in the service's size accounting (Azure REST: understanding-the-table-service-data-model). */
function valueBytes(name: string, wire: WireProperties[string]): number {
  switch (wire.type) {
    case 'String': {
      const units = String(wire.value).length;
      if (units > limits.stringUtf16Units) {
        throw new LimitError(
          'PropertyValueTooLarge',
          `${name} is ${units} UTF-16 units, the limit is ${limits.stringUtf16Units}`,
        );
      }
      return 2 * units + 4;
    }
    case 'Binary': {
      const bytes = Buffer.byteLength(String(wire.value), 'base64');
      if (bytes > limits.binaryBytes)
        throw new LimitError('PropertyValueTooLarge', `${name} is ${bytes} bytes, the limit is ${limits.binaryBytes}`);
      return bytes + 4;
    }
    case 'DateTime': {
      const ms = Date.parse(String(wire.value));
      if (!(ms >= limits.minDateTimeMs && ms <= limits.maxDateTimeMs)) {
        throw new LimitError('OutOfRangeInput', `${name} = ${String(wire.value)} is outside 1601-01-01..9999-12-31`);
      }
      return 8;
    }
    case 'Guid':
      return 16;
    case 'Double':
    case 'Int64':
      return 8;
    case 'Int32':
      return 4;
    case 'Boolean':
      return 1;
    default:
      throw new LimitError('InvalidInput', `${name} has unknown type ${String(wire.type)}`);
  }
}

/** Size of an entity in the service's accounting; throws LimitError on any violated limit. */
export function validateEntity(partitionKey: string, rowKey: string, properties: WireProperties): number {
  validateKey('PartitionKey', partitionKey);
  validateKey('RowKey', rowKey);
  const names = Object.keys(properties);
  if (names.length > limits.customProperties) {
    throw new LimitError(
      'TooManyProperties',
      `${names.length} properties, the limit is ${limits.customProperties} besides the keys and Timestamp`,
    );
  }
  let bytes = 4 + 2 * (partitionKey.length + rowKey.length);
  for (const name of names) {
    validatePropertyName(name);
    bytes += 8 + 2 * name.length + valueBytes(name, properties[name]!);
  }
  if (bytes > limits.entityBytes)
    throw new LimitError('EntityTooLarge', `entity is ${bytes} bytes, the limit is ${limits.entityBytes}`);
  return bytes;
}
