// Typed $filter expressions. Every literal is formatted from its schema type (never from user text
// spliced into the expression): strings are quoted with '' escaping, Int64 gets its L suffix,
// DateTime/Guid/Binary their typed forms. Property names are checked against the schema.
import type { EdmTypes } from '@azure/data-tables';
import type { Infer, Schema } from './schema.js';

/** A finished filter expression. */
export class Filter {
  constructor(readonly text: string) {}
  and(...others: Filter[]): Filter {
    return and(this, ...others);
  }
  or(...others: Filter[]): Filter {
    return or(this, ...others);
  }
  toString(): string {
    return this.text;
  }
}

export type Comparison = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
const comparisons = new Set<Comparison>(['eq', 'ne', 'gt', 'ge', 'lt', 'le']);

export class FilterError extends Error {
  override name = 'FilterError';
}

/** A literal of an EDM type in $filter syntax. */
export function literal(edm: EdmTypes, value: unknown): string {
  switch (edm) {
    case 'String':
      if (typeof value !== 'string') break;
      return `'${value.replaceAll("'", "''")}'`;
    case 'Int32':
      if (typeof value !== 'number' || !Number.isInteger(value)) break;
      return String(value);
    case 'Int64':
      if (typeof value !== 'bigint') break;
      return `${value}L`;
    case 'Double':
      if (typeof value !== 'number' || !Number.isFinite(value)) break;
      return Number.isInteger(value) ? `${value}.0` : String(value);
    case 'Boolean':
      if (typeof value !== 'boolean') break;
      return String(value);
    case 'DateTime':
      if (!(value instanceof Date) || Number.isNaN(value.getTime())) break;
      return `datetime'${value.toISOString()}'`;
    case 'Guid':
      if (typeof value !== 'string' || !/^[0-9a-fA-F-]{36}$/.test(value)) break;
      return `guid'${value}'`;
    case 'Binary':
      if (!(value instanceof Uint8Array)) break;
      return `X'${Buffer.from(value).toString('hex')}'`;
  }
  throw new FilterError(`${String(value)} is not a valid Edm.${edm} literal`);
}

function compare(property: string, op: Comparison, text: string): Filter {
  if (!comparisons.has(op)) throw new FilterError(`unknown comparison ${String(op)}`);
  return new Filter(`${property} ${op} ${text}`);
}

export function and(...filters: Filter[]): Filter {
  if (filters.length === 0) throw new FilterError('and() of nothing');
  return filters.length === 1 ? filters[0]! : new Filter(filters.map((f) => `(${f.text})`).join(' and '));
}

export function or(...filters: Filter[]): Filter {
  if (filters.length === 0) throw new FilterError('or() of nothing');
  return filters.length === 1 ? filters[0]! : new Filter(filters.map((f) => `(${f.text})`).join(' or '));
}

export function not(filter: Filter): Filter {
  return new Filter(`not (${filter.text})`);
}

/** Conditions on the keys (raw key text, e.g. from a KeyTemplate). */
export const keys = {
  partitionKey: (op: Comparison, key: string) => compare('PartitionKey', op, literal('String', key)),
  rowKey: (op: Comparison, key: string) => compare('RowKey', op, literal('String', key)),
  /** ge ≤ RowKey < lt, e.g. from KeyTemplate.range(). */
  rowKeyRange: (range: { ge: string; lt: string }) => and(keys.rowKey('ge', range.ge), keys.rowKey('lt', range.lt)),
  partitionKeyRange: (range: { ge: string; lt: string }) =>
    and(keys.partitionKey('ge', range.ge), keys.partitionKey('lt', range.lt)),
};

/** A filter builder bound to a schema: `where(schema).compare('salary', 'gt', 1000n)`. */
export function where<S extends Schema>(schema: S) {
  return {
    compare<K extends keyof S & string>(
      property: K,
      op: Comparison,
      value: NonNullable<Infer<S>[K & keyof Infer<S>]>,
    ): Filter {
      const fieldDef = schema[property];
      if (!fieldDef) throw new FilterError(`${property} is not in the schema`);
      return compare(property, op, literal(fieldDef.edm, value));
    },
    eq<K extends keyof S & string>(property: K, value: NonNullable<Infer<S>[K & keyof Infer<S>]>): Filter {
      return this.compare(property, 'eq', value);
    },
    ...keys,
  };
}
