// EDM values in the explorer: every property is held as its type and one canonical text (what the
// grid shows, the editor edits and the CSV file holds), converted to and from the OData JSON wire
// form here and nowhere else (Azure REST: payload-format-for-table-service-operations).

export const edmTypes = [
  'Edm.String',
  'Edm.Int32',
  'Edm.Int64',
  'Edm.Double',
  'Edm.Boolean',
  'Edm.DateTime',
  'Edm.Guid',
  'Edm.Binary',
] as const;
export type EdmType = (typeof edmTypes)[number];

export interface Property {
  readonly type: EdmType;
  readonly text: string;
}

export interface Entity {
  readonly partitionKey: string;
  readonly rowKey: string;
  /** As the service sent it ('' when $select left it out). */
  readonly timestamp: string;
  readonly etag: string;
  /** Custom properties in the order the service sent them. */
  readonly properties: ReadonlyMap<string, Property>;
}

export type WireEntity = Record<string, unknown>;

export const keyNames = ['PartitionKey', 'RowKey', 'Timestamp'] as const;

export function isEdmType(text: string): text is EdmType {
  return (edmTypes as readonly string[]).includes(text);
}

/**
 * An unannotated JSON number written with a point or an exponent (`2.0`, `1e+308`): the service's
 * Edm.Double. JSON.parse alone turns `2.0` into 2, indistinguishable from the Int32 2.
 */
class DoubleLiteral {
  constructor(readonly text: string) {}
}

/**
 * JSON.parse that keeps number literals with a point or an exponent as DoubleLiterals, through the
 * reviver's source text (JSON.parse source text access: Chromium 114+, Firefox 135+). Where the
 * browser does not give the source, such numbers read as before (integral ones as Int32).
 */
export function parseWireJson(text: string): unknown {
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined && /[.eE]/.test(context.source)
      ? new DoubleLiteral(context.source)
      : value,
  );
}

/** Reads one entity of a response body (or a JSON-lines file): annotations name the types JSON cannot. */
export function entityFromWire(wire: WireEntity): Entity {
  const properties = new Map<string, Property>();
  for (const [name, value] of Object.entries(wire)) {
    if (name.includes('@') || name.startsWith('odata.') || (keyNames as readonly string[]).includes(name)) continue;
    const annotation = wire[`${name}@odata.type`];
    properties.set(name, propertyFromWire(value, typeof annotation === 'string' ? annotation : undefined, name));
  }
  return {
    partitionKey: String(wire['PartitionKey'] ?? ''),
    rowKey: String(wire['RowKey'] ?? ''),
    timestamp: typeof wire['Timestamp'] === 'string' ? wire['Timestamp'] : '',
    etag: typeof wire['odata.etag'] === 'string' ? wire['odata.etag'] : '',
    properties,
  };
}

function propertyFromWire(value: unknown, annotation: string | undefined, name: string): Property {
  if (annotation !== undefined) {
    if (!isEdmType(annotation)) throw new Error(`property ${name}: unknown type ${annotation}`);
    return { type: annotation, text: value instanceof DoubleLiteral ? value.text : String(value) };
  }
  if (value instanceof DoubleLiteral) return { type: 'Edm.Double', text: value.text };
  switch (typeof value) {
    case 'string':
      return { type: 'Edm.String', text: value };
    case 'boolean':
      return { type: 'Edm.Boolean', text: String(value) };
    case 'number':
      return { type: Number.isInteger(value) ? 'Edm.Int32' : 'Edm.Double', text: String(value) };
    default:
      throw new Error(`property ${name}: ${JSON.stringify(value)} is no EDM value`);
  }
}

/** The request body of an insert or update: every non-string property carries its type. */
export function entityToWire(
  partitionKey: string,
  rowKey: string,
  properties: Iterable<[string, Property]>,
): WireEntity {
  const wire: WireEntity = { PartitionKey: partitionKey, RowKey: rowKey };
  for (const [name, property] of properties) {
    if (property.type !== 'Edm.String') wire[`${name}@odata.type`] = property.type;
    wire[name] = wireValue(property);
  }
  return wire;
}

function wireValue({ type, text }: Property): unknown {
  switch (type) {
    case 'Edm.Int32':
      return Number(text);
    case 'Edm.Double':
      // NaN and ±Infinity have no JSON number: they travel as strings (Azure REST:
      // payload-format-for-table-service-operations).
      return doubleSpecials.includes(text) ? text : Number(text);
    case 'Edm.Boolean':
      return text === 'true';
    default:
      return text;
  }
}

const doubleSpecials = ['NaN', 'Infinity', '-Infinity'];
const int32Pattern = /^[+-]?\d{1,10}$/;
const int64Pattern = /^-?\d{1,19}$/;
const doublePattern = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const guidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const dateTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,7})?Z$/;
/**
 * Property limits of the service (Azure REST: payload-format-for-table-service-operations): 64 KiB strings and
 * binaries.
 */
const stringLengthUtf16Max = 32 * 1024;
const binaryBytesMax = 64 * 1024;

/** Why `text` is not a valid value of `type`, or undefined when it is. */
export function invalidReason(type: EdmType, text: string): string | undefined {
  switch (type) {
    case 'Edm.String':
      return text.length > stringLengthUtf16Max ? `longer than ${stringLengthUtf16Max} characters` : undefined;
    case 'Edm.Int32': {
      if (!int32Pattern.test(text)) return 'a whole number, e.g. 42';
      const value = Number(text);
      return value < -(2 ** 31) || value > 2 ** 31 - 1 ? 'out of Int32 range (-2147483648 to 2147483647)' : undefined;
    }
    case 'Edm.Int64': {
      if (!int64Pattern.test(text)) return 'a whole number, e.g. 9007199254740993';
      const value = BigInt(text);
      return value < -(2n ** 63n) || value > 2n ** 63n - 1n ? 'out of Int64 range' : undefined;
    }
    case 'Edm.Double':
      if (doubleSpecials.includes(text)) return undefined;
      if (!doublePattern.test(text)) return 'a number such as 3.25 or 1e-9, or NaN, Infinity, -Infinity';
      return Number.isFinite(Number(text)) ? undefined : 'too large for a Double (write Infinity for infinity)';
    case 'Edm.Boolean':
      return text === 'true' || text === 'false' ? undefined : 'true or false';
    case 'Edm.DateTime':
      return dateTimeReason(text);
    case 'Edm.Guid':
      return guidPattern.test(text) ? undefined : 'a GUID such as 3f2504e0-4f89-11d3-9a0c-0305e82c3301';
    case 'Edm.Binary':
      if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return 'base64, e.g. AAEC/w==';
      return (text.length / 4) * 3 > binaryBytesMax + 2 ? `more than ${binaryBytesMax} bytes` : undefined;
  }
}

function dateTimeReason(text: string): string | undefined {
  const match = dateTimePattern.exec(text);
  const shape = 'UTC ISO 8601 with up to 7 fractional digits, e.g. 2024-05-01T12:30:00.1234567Z';
  if (match === null) return shape;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return `not a real date or time: ${shape}`;
  }
  return year < 1601 ? 'before 1601-01-01, the earliest DateTime the service stores' : undefined;
}

/** The name of a type without its `Edm.` prefix, for compact display. */
export function shortType(type: EdmType): string {
  return type.slice(4);
}

/** A DateTime `ms` milliseconds after the epoch in the service's 7-digit form. */
export function dateTimeText(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '0000Z');
}

/**
 * The service's rule for property names (Azure REST: understanding-the-table-service-data-model), plus the names the
 * editor reserves.
 */
const propertyNamePattern = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Pc}\p{Mn}\p{Mc}]*$/u;

export function propertyNameReason(name: string): string | undefined {
  if (name === '') return 'a name is needed';
  if ((keyNames as readonly string[]).includes(name)) return `${name} is a system property`;
  if (name.length > 255) return 'at most 255 characters';
  return propertyNamePattern.test(name) ? undefined : 'letters, digits and _ only, not starting with a digit';
}
