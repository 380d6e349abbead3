// Entity request bodies → keys and typed custom properties (Azure REST: understanding-the-table-service-data-model,
// payload-format-for-table-service-operations), plus the key and
// size rules a body alone can break. Whether keys must be present is the service's call: merge and
// update bodies may omit them (the URL carries them).
import { assertNever } from '../../domain/assert.js';
import { StorageError } from '../../errors.js';
import { entitySizeBytes, validateKey } from '../../domain/entity.js';
import {
  binaryValueBytesMax,
  customPropertiesMax,
  entityBytesMax,
  propertyNameLengthUtf16Max,
  stringValueLengthUtf16Max,
} from '../../limits.js';
import {
  type EdmType,
  type EdmValue,
  isEdmType,
  parseBase64,
  parseDateTimeTicks,
  parseDoubleText,
  parseGuid,
  parseInt32Text,
  parseInt64Text,
} from '../../domain/edm.js';
import { type JsonValue, readJson } from './json-reader.js';
import { type Properties } from '../../domain/entity.js';

export interface DecodedEntity {
  readonly partitionKey: string | undefined;
  readonly rowKey: string | undefined;
  readonly properties: Properties;
}

const annotationSuffix = '@odata.type';
const timestampAnnotation = `Timestamp${annotationSuffix}`;

/**
 * Decodes a request body (already UTF-8-decoded text) into keys and typed custom properties,
 * validating everything of Azure REST: payload-format-for-table-service-operations,
 * understanding-the-table-service-data-model that a body alone can violate.
 * A key that is absent or `null` comes back undefined (the service answers PropertiesNeedValue).
 */
export function decodeEntityBody(text: string): DecodedEntity {
  const root = readJson(text); // rejects repeated member names, annotations included
  if (root.kind !== 'object') throw new StorageError('InvalidInput', 'The entity body must be a JSON object.');

  const values = new Map<string, JsonValue>();
  const annotations = new Map<string, EdmType>();
  for (const [name, value] of root.members) {
    // Control members and the server-owned Timestamp are ignored
    // (docs/protocol-notes.md#control-members-in-request-bodies).
    if (name.startsWith('odata.') || name === 'Timestamp' || name === timestampAnnotation) continue;
    if (name.endsWith(annotationSuffix)) annotations.set(name.slice(0, -annotationSuffix.length), annotatedType(value));
    else values.set(name, value);
  }
  for (const name of annotations.keys()) {
    if (!values.has(name)) throw new StorageError('InvalidInput', `Type annotation without a value for ${quote(name)}.`);
  }

  const partitionKey = decodeKey(values, annotations, 'PartitionKey');
  const rowKey = decodeKey(values, annotations, 'RowKey');
  const properties: Properties = new Map();
  for (const [name, json] of values) {
    if (name === 'PartitionKey' || name === 'RowKey') continue;
    validatePropertyName(name);
    const value = decodeValue(name, json, annotations.get(name));
    if (value === undefined) continue; // null: not stored (Azure REST: understanding-the-table-service-data-model)
    properties.set(name, value);
    if (properties.size > customPropertiesMax) {
      throw new StorageError('TooManyProperties', `The entity has more than ${customPropertiesMax} custom properties.`);
    }
  }
  // Keys missing from a merge/update body count as empty here; the service re-checks with its keys.
  if (entitySizeBytes(partitionKey ?? '', rowKey ?? '', properties) > entityBytesMax) {
    throw new StorageError('EntityTooLarge');
  }
  return { partitionKey, rowKey, properties };
}

// C# identifier rules (Azure REST: understanding-the-table-service-data-model; exact class unverified): a letter (any
// script) or `_`,
// then letters, decimal digits, connectors such as `_`, and combining marks. Format characters
// (Cf), which C# also allows, are left out: invisible names are more likely mistakes.
const propertyNamePattern = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Pc}\p{Mn}\p{Mc}]*$/u;
/** The common case, a subset of the above that a non-Unicode regex checks much faster. */
const asciiPropertyNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function validatePropertyName(name: string): void {
  if (name.length > propertyNameLengthUtf16Max) {
    const detail = `A property name is longer than ${propertyNameLengthUtf16Max} characters.`;
    throw new StorageError('PropertyNameTooLong', detail);
  }
  if (!asciiPropertyNamePattern.test(name) && !propertyNamePattern.test(name)) {
    throw new StorageError('PropertyNameInvalid', `The property name ${quote(name)} is invalid.`);
  }
}

function annotatedType(value: JsonValue): EdmType {
  if (value.kind === 'string' && isEdmType(value.value)) return value.value;
  const shown = value.kind === 'string' ? quote(value.value) : `a JSON ${value.kind}`;
  throw new StorageError('InvalidInput', `Unsupported property type ${shown}.`);
}

/** PartitionKey/RowKey: a string (annotated `Edm.String` at most), absent, or null (= absent). */
function decodeKey(
  values: ReadonlyMap<string, JsonValue>,
  annotations: ReadonlyMap<string, EdmType>,
  which: 'PartitionKey' | 'RowKey',
): string | undefined {
  const type = annotations.get(which);
  if (type !== undefined && type !== 'Edm.String') {
    throw new StorageError('InvalidInput', `The ${which} must be of type Edm.String.`);
  }
  const json = values.get(which);
  if (json === undefined || json.kind === 'null') return undefined;
  // A non-string key is malformed input rather than a missing value (our choice; unverified).
  if (json.kind !== 'string') throw new StorageError('InvalidInput', `The ${which} must be a string.`);
  validateKey(json.value, which);
  return json.value;
}

/**
 * A custom property's typed value, by its annotation or else its JSON type (Azure REST:
 * payload-format-for-table-service-operations).
 */
function decodeValue(name: string, json: JsonValue, annotated: EdmType | undefined): EdmValue | undefined {
  if (json.kind === 'null') return undefined;
  if (json.kind === 'object' || json.kind === 'array') {
    const detail = `The value of ${quote(name)} is a JSON ${json.kind}, which no EDM type allows.`;
    throw new StorageError('InvalidInput', detail);
  }
  const type = annotated ?? inferredType(json);
  const value = convert(type, json);
  if (value === undefined) {
    const literal = json.kind === 'string' ? json.value : json.kind === 'number' ? json.text : String(json.value);
    // Wording after the service's own message (Azure REST: table-service-error-codes).
    throw new StorageError('InvalidInput', `Unrecognized '${type}' literal ${quote(literal)} for ${quote(name)}.`);
  }
  if (value.type === 'Edm.String' && value.value.length > stringValueLengthUtf16Max) {
    const detail = `The string ${quote(name)} is longer than ${stringValueLengthUtf16Max} characters.`;
    throw new StorageError('PropertyValueTooLarge', detail);
  }
  if (value.type === 'Edm.Binary' && value.value.length > binaryValueBytesMax) {
    const detail = `The binary ${quote(name)} is longer than ${binaryValueBytesMax} bytes.`;
    throw new StorageError('PropertyValueTooLarge', detail);
  }
  return value;
}

type JsonScalar = Extract<JsonValue, { kind: 'string' | 'number' | 'boolean' }>;

function inferredType(json: JsonScalar): EdmType {
  switch (json.kind) {
    case 'string':
      return 'Edm.String';
    case 'boolean':
      return 'Edm.Boolean';
    case 'number':
      return /[.eE]/.test(json.text) ? 'Edm.Double' : 'Edm.Int32';
  }
}

/**
 * Converts a JSON scalar to `type`, or undefined if it does not fit. Numbers and booleans are also
 * accepted as strings (`"5"` + Edm.Int32, `"NaN"` + Edm.Double, docs/protocol-notes.md#annotated-values-as-strings);
 * Int64 and Int32
 * are read from the literal's text, never through a JS number.
 */
function convert(type: EdmType, json: JsonScalar): EdmValue | undefined {
  const text = json.kind === 'string' ? json.value : json.kind === 'number' ? json.text : undefined;
  const string = json.kind === 'string' ? json.value : undefined;
  switch (type) {
    case 'Edm.String':
      return string === undefined ? undefined : { type, value: string };
    case 'Edm.Int32': {
      const value = text === undefined ? undefined : parseInt32Text(text);
      return value === undefined ? undefined : { type, value: value | 0 }; // `| 0` turns -0 into 0
    }
    case 'Edm.Int64': {
      const value = text === undefined ? undefined : parseInt64Text(text);
      return value === undefined ? undefined : { type, value };
    }
    case 'Edm.Double': {
      const value = text === undefined ? undefined : parseDoubleText(text);
      return value === undefined ? undefined : { type, value };
    }
    case 'Edm.Boolean': {
      const value =
        json.kind === 'boolean' ? json.value : string === 'true' ? true : string === 'false' ? false : undefined;
      return value === undefined ? undefined : { type, value };
    }
    case 'Edm.DateTime': {
      const value = string === undefined ? undefined : parseDateTimeTicks(string);
      return value === undefined ? undefined : { type, value };
    }
    case 'Edm.Guid': {
      const value = string === undefined ? undefined : parseGuid(string);
      return value === undefined ? undefined : { type, value };
    }
    case 'Edm.Binary': {
      const value = string === undefined ? undefined : parseBase64(string);
      return value === undefined ? undefined : { type, value };
    }
    default:
      return assertNever(type);
  }
}

/** A name or literal for an error message: JSON-quoted and cut short, since bodies can be megabytes. */
function quote(text: string): string {
  const shownLengthMax = 64;
  return JSON.stringify(text.length > shownLengthMax ? `${text.slice(0, shownLengthMax)}…` : text);
}
