// Typed property schemas with explicit EDM types, and their exact wire form for @azure/data-tables.
import type { EdmTypes } from '@azure/data-tables';

export type { EdmTypes };

interface EdmValue {
  value: string | number | boolean;
  type: EdmTypes;
}

/** One property of a schema: its EDM type and the JavaScript type it maps to. */
export interface Field<T, Optional extends boolean = boolean> {
  readonly edm: EdmTypes;
  readonly isOptional: Optional;
  /** JavaScript value -> the SDK's `{ value, type }` form (always typed, never inferred). */
  toWire(value: T): EdmValue;
  /** What the SDK returns with `disableTypeConversion` -> the JavaScript value. */
  fromWire(wire: { value: unknown; type: string }): T;
  /** The same field, allowed to be absent. */
  optional(): Field<T, true>;
}

export class SchemaError extends Error {
  override name = 'SchemaError';
}

function field<T>(
  edm: EdmTypes,
  toWire: (value: T) => EdmValue['value'],
  fromWire: (text: string) => T,
  isOptional = false,
): Field<T, false> {
  return {
    edm,
    isOptional: isOptional as false,
    toWire: (value: T) => ({ value: toWire(value), type: edm }),
    fromWire: (wire) => {
      // A whole-number Double comes back without annotation and reads as Int32
      // (docs/protocol-notes.md#numbers-in-responses).
      const widened = wire.type === 'Int32' && (edm === 'Double' || edm === 'Int64');
      if (wire.type !== edm && !widened)
        throw new SchemaError(`expected Edm.${edm}, the service returned Edm.${wire.type}`);
      return fromWire(String(wire.value));
    },
    optional: () => field(edm, toWire, fromWire, true) as unknown as Field<T, true>,
  };
}

function checkInt32(value: number): number {
  if (!Number.isInteger(value) || value < -(2 ** 31) || value > 2 ** 31 - 1)
    throw new SchemaError(`${value} is not an Int32`);
  return value;
}

function checkInt64(value: bigint): string {
  if (typeof value !== 'bigint' || BigInt.asIntN(64, value) !== value)
    throw new SchemaError(`${String(value)} is not an Int64 bigint`);
  return value.toString();
}

function doubleToWire(value: number): number | string {
  if (typeof value !== 'number') throw new SchemaError(`${String(value)} is not a number`);
  // JSON has no literal for these; the service takes the strings with an Edm.Double annotation.
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return value;
}

function parseDouble(text: string): number {
  if (text === 'NaN') return NaN;
  if (text === 'Infinity') return Infinity;
  if (text === '-Infinity') return -Infinity;
  const value = Number(text);
  if (Number.isNaN(value)) throw new SchemaError(`${JSON.stringify(text)} is not a Double`);
  return value;
}

const guidPattern = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Schema field constructors, one per EDM type. */
export const t = {
  string: () =>
    field<string>(
      'String',
      (v) => v,
      (text) => text,
    ),
  int32: () => field<number>('Int32', checkInt32, (text) => Number(text)),
  /** Int64 is a bigint in JavaScript: a number would lose digits beyond 2^53. */
  int64: () => field<bigint>('Int64', checkInt64, (text) => BigInt(text)),
  double: () => field<number>('Double', doubleToWire, parseDouble),
  boolean: () =>
    field<boolean>(
      'Boolean',
      (v) => v,
      (text) => text === 'true',
    ),
  dateTime: () =>
    field<Date>(
      'DateTime',
      (v) => {
        if (!(v instanceof Date) || Number.isNaN(v.getTime())) throw new SchemaError('not a valid Date');
        return v.toISOString();
      },
      (text) => new Date(text),
    ),
  guid: () =>
    field<string>(
      'Guid',
      (v) => {
        if (!guidPattern.test(v)) throw new SchemaError(`${JSON.stringify(v)} is not a GUID`);
        return v.toLowerCase();
      },
      (text) => text.toLowerCase(),
    ),
  binary: () =>
    field<Uint8Array>(
      'Binary',
      (v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64'),
      (text) => new Uint8Array(Buffer.from(text, 'base64')),
    ),
};

export type Schema = Record<string, Field<any, boolean>>;

type ValueOf<F> = F extends Field<infer T, boolean> ? T : never;
type RequiredNames<S extends Schema> = { [K in keyof S]: S[K]['isOptional'] extends true ? never : K }[keyof S];
type OptionalNames<S extends Schema> = { [K in keyof S]: S[K]['isOptional'] extends true ? K : never }[keyof S];

/** The JavaScript shape of a schema: required fields, then optional ones. */
export type Infer<S extends Schema> = { -readonly [K in RequiredNames<S>]: ValueOf<S[K]> } & {
  -readonly [K in OptionalNames<S>]?: ValueOf<S[K]>;
};

/** A property value on the wire with its EDM type, as the SDK takes and (with disableTypeConversion) returns it. */
export type WireProperties = Record<string, EdmValue>;

export function toWireProperties<S extends Schema>(schema: S, value: Infer<S>): WireProperties {
  const wire: WireProperties = {};
  for (const [name, fieldDef] of Object.entries(schema)) {
    const v = (value as Record<string, unknown>)[name];
    if (v === undefined || v === null) {
      if (!fieldDef.isOptional) throw new SchemaError(`${name} is required`);
      continue;
    }
    try {
      wire[name] = fieldDef.toWire(v);
    } catch (error) {
      throw new SchemaError(`${name}: ${(error as Error).message}`);
    }
  }
  return wire;
}

export function fromWireProperties<S extends Schema>(
  schema: S,
  raw: Record<string, unknown>,
  names?: readonly string[],
): Infer<S> {
  const value: Record<string, unknown> = {};
  for (const name of (names ?? Object.keys(schema)).filter((n) => n in schema)) {
    const fieldDef = schema[name]!;
    const wire = raw[name] as { value: unknown; type: string } | null | undefined;
    if (wire === undefined || wire === null || (typeof wire === 'object' && wire.value === null)) {
      if (!fieldDef.isOptional && names === undefined)
        throw new SchemaError(`${name} is missing from the stored entity`);
      continue;
    }
    try {
      value[name] = fieldDef.fromWire(wire);
    } catch (error) {
      throw new SchemaError(`${name}: ${(error as Error).message}`);
    }
  }
  return value as Infer<S>;
}
