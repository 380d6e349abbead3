// Entity models: a kind, a typed schema and key templates built from its attributes.
import { codecs, joinComponents, prefixRange, splitComponents, type KeyCodec } from './keys.js';
import { validateEntity, validatePropertyName } from './limits.js';
import {
  fromWireProperties,
  SchemaError,
  toWireProperties,
  type Field,
  type Infer,
  type Schema,
  type WireProperties,
} from './schema.js';

/** Properties the toolkit keeps on every row it writes. */
export const reserved = {
  /** The entity-kind marker, so heterogeneous partitions can be told apart. */
  kind: '_kind',
  /**
   * Ids of the last writes of this row, newest last: a write whose response was lost finds its id
   * here on the re-read and knows it landed, even if other writes followed it.
   */
  operations: '_ops',
} as const;

/** Set on the rows of an entity whose two-step delete has begun; readers treat them as absent. */
export const deletingProperty = '_deleting';

export function isDeleting(raw: RawEntity): boolean {
  return wireString(raw[deletingProperty]) === 'true';
}

/** A part of a key: a field (default codec by EDM type, or an explicit one) or a constant. */
export type KeyPart<S extends Schema> =
  | (keyof S & string)
  | { readonly field: keyof S & string; readonly codec: KeyCodec<any> }
  | { readonly literal: string };

function defaultCodec(fieldDef: Field<unknown>): KeyCodec<any> {
  switch (fieldDef.edm) {
    case 'String':
      return codecs.text();
    case 'Int32':
      return codecs.int(10);
    case 'Int64':
      return codecs.int64();
    case 'Double':
      return codecs.double();
    case 'DateTime':
      return codecs.ticks();
    case 'Guid':
      return codecs.guid();
    case 'Boolean':
      return codecs.boolean();
    case 'Binary':
      throw new SchemaError('a Binary field cannot be part of a key');
  }
}

type Resolved = { field: string; codec: KeyCodec<any> } | { literal: string };

/** An ordered list of key parts joined as compound-key components. */
export class KeyTemplate<S extends Schema> {
  private readonly parts: readonly Resolved[];
  private readonly literalCodec = codecs.text();

  constructor(schema: S, parts: readonly KeyPart<S>[]) {
    this.parts = parts.map((part): Resolved => {
      if (typeof part === 'string') {
        const fieldDef = schema[part];
        if (!fieldDef) throw new SchemaError(`key part ${part} is not in the schema`);
        return { field: part, codec: defaultCodec(fieldDef) };
      }
      if ('field' in part && !schema[part.field]) throw new SchemaError(`key part ${part.field} is not in the schema`);
      return part;
    });
  }

  /** Fields the key is built from, in order. */
  get fields(): string[] {
    return this.parts.flatMap((part) => ('field' in part ? [part.field] : []));
  }

  private encodePart(part: Resolved, values: Record<string, unknown>): string {
    if ('literal' in part) return this.literalCodec.encode(part.literal);
    const value = values[part.field];
    if (value === undefined || value === null) throw new SchemaError(`key field ${part.field} has no value`);
    return part.codec.encode(value);
  }

  encode(values: Partial<Infer<S>>): string {
    return joinComponents(this.parts.map((part) => this.encodePart(part, values as Record<string, unknown>)));
  }

  /** The fields a key holds, decoded. */
  decode(key: string): Partial<Infer<S>> {
    const components = splitComponents(key);
    if (components.length !== this.parts.length)
      throw new SchemaError(`key ${JSON.stringify(key)} does not match the template`);
    const values: Record<string, unknown> = {};
    this.parts.forEach((part, index) => {
      if ('field' in part) values[part.field] = part.codec.decode(components[index]!);
      else if (this.literalCodec.decode(components[index]!) !== part.literal) {
        throw new SchemaError(`key ${JSON.stringify(key)} lacks the constant ${part.literal}`);
      }
    });
    return values as Partial<Infer<S>>;
  }

  /**
   * Key range of every key whose leading parts are given: constants are filled in, and fields are
   * taken from `values` until the first missing one.
   */
  range(values: Partial<Infer<S>>): { ge: string; lt: string } {
    const encoded: string[] = [];
    for (const part of this.parts) {
      if ('field' in part && (values as Record<string, unknown>)[part.field] === undefined) break;
      encoded.push(this.encodePart(part, values as Record<string, unknown>));
    }
    return prefixRange(encoded);
  }
}

export interface ModelDefinition<S extends Schema> {
  /** Entity-kind marker, written to every row as `_kind`. */
  kind: string;
  schema: S;
  partitionKey: readonly KeyPart<NoInfer<S>>[];
  rowKey: readonly KeyPart<NoInfer<S>>[];
}

/** A stored entity: its values plus the keys and the ETag the service gave it. */
export type Stored<T> = T & {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly etag: string;
  readonly timestamp?: Date;
};

/** What the SDK returns for an entity read with `disableTypeConversion`. */
export type RawEntity = Record<string, unknown> & {
  partitionKey: string;
  rowKey: string;
  etag?: string;
  timestamp?: string;
};

/** The entity shape the SDK accepts, every property typed. */
export type WireEntity = { partitionKey: string; rowKey: string; [property: string]: WireProperties[string] | string };

export class Model<S extends Schema> {
  readonly kind: string;
  readonly schema: S;
  readonly partitionKey: KeyTemplate<S>;
  readonly rowKey: KeyTemplate<S>;

  constructor(definition: ModelDefinition<S>) {
    this.kind = definition.kind;
    this.schema = definition.schema;
    for (const name of Object.keys(definition.schema)) {
      validatePropertyName(name);
      if (name.startsWith('_')) throw new SchemaError(`${name}: names starting with _ are reserved for the toolkit`);
    }
    this.partitionKey = new KeyTemplate(definition.schema, definition.partitionKey);
    this.rowKey = new KeyTemplate(definition.schema, definition.rowKey);
  }

  keysOf(values: Partial<Infer<S>>): { partitionKey: string; rowKey: string } {
    return { partitionKey: this.partitionKey.encode(values), rowKey: this.rowKey.encode(values) };
  }

  /** The validated wire entity for these values (keys from the templates, every property typed). */
  toEntity(values: Infer<S>, operationId?: string, previous?: RawEntity): WireEntity {
    const keys = this.keysOf(values);
    const properties = toWireProperties(this.schema, values);
    properties[reserved.kind] = { value: this.kind, type: 'String' };
    if (operationId !== undefined)
      properties[reserved.operations] = { value: operationHistory(previous, operationId), type: 'String' };
    validateEntity(keys.partitionKey, keys.rowKey, properties);
    return { ...properties, ...keys };
  }

  /** Whether a raw row is of this kind (rows of several kinds can share a partition). */
  isKind(raw: RawEntity): boolean {
    return wireString(raw[reserved.kind]) === this.kind;
  }

  fromEntity(raw: RawEntity, select?: readonly string[]): Stored<Infer<S>> {
    if (select === undefined && !this.isKind(raw)) {
      throw new SchemaError(
        `row ${raw.partitionKey}/${raw.rowKey} is of kind ${String(wireString(raw[reserved.kind]))}, not ${this.kind}`,
      );
    }
    return this.decodeRow(raw, select);
  }

  /** Decodes the schema's properties of any row that holds them (an index row holds a copy). */
  decodeRow(raw: RawEntity, select?: readonly string[]): Stored<Infer<S>> {
    const values = fromWireProperties(this.schema, raw, select);
    return Object.assign(values, {
      partitionKey: raw.partitionKey,
      rowKey: raw.rowKey,
      etag: raw.etag ?? '',
      ...(raw.timestamp !== undefined ? { timestamp: new Date(wireString(raw.timestamp) ?? '') } : {}),
    });
  }
}

/** How many recent write ids a row remembers. */
export const operationHistoryLength = 32;

function operationsOf(raw: RawEntity | undefined): string[] {
  const text = raw && wireString(raw[reserved.operations]);
  return text ? text.split(' ') : [];
}

/** The history a write leaves: the row's earlier ids (bounded) plus its own. */
export function operationHistory(previous: RawEntity | undefined, operationId: string): string {
  return [...operationsOf(previous), operationId].slice(-operationHistoryLength).join(' ');
}

/**
 * Whether the write with this id produced or preceded the row's current state: true if it is
 * among the last `operationHistoryLength` writes.
 */
export function writtenBy(raw: RawEntity | undefined, operationId: string): boolean {
  return operationsOf(raw).includes(operationId);
}

/** A string property as the SDK returns it with or without type conversion. */
export function wireString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'value' in value) return String((value as { value: unknown }).value);
  return undefined;
}

export function defineModel<S extends Schema>(definition: ModelDefinition<S>): Model<S> {
  return new Model(definition);
}

export type ValuesOf<M> = M extends Model<infer S> ? Infer<S> : never;
