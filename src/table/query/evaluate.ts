// Compiles a filter tree once into a tree of closures with the typed semantics of Azure REST:
// querying-tables-and-entities.
// Every comparison is "order the stored value against the literal, then ask the operator table";
// the ordering is a number: negative / 0 / positive, NaN for unordered (Double NaN), and
// undefined when the two are not comparable at all (missing property, different EDM types).
import type { EdmValue } from '../../domain/edm.js';
import type { ComparisonOperator, FilterNode } from './ast.js';
import { type Entity } from '../../domain/entity.js';

export type Predicate<Row> = (row: Row) => boolean;

/** How to read one named property from a row; the reader answers undefined when the row lacks it. */
export type PropertyReaders<Row> = (property: string) => (row: Row) => EdmValue | undefined;

type Ordering = (stored: EdmValue) => number | undefined;

/**
 * The one operator table. An unordered comparison (NaN) holds only for `ne`, as in IEEE 754:
 * "NaN is never equal to anything" (Azure REST: querying-tables-and-entities, unverified).
 */
const operatorHolds: Readonly<Record<ComparisonOperator, (ordering: number) => boolean>> = {
  eq: (ordering) => ordering === 0,
  ne: (ordering) => ordering !== 0,
  gt: (ordering) => ordering > 0,
  ge: (ordering) => ordering >= 0,
  lt: (ordering) => ordering < 0,
  le: (ordering) => ordering <= 0,
};

export function compilePredicate<Row>(node: FilterNode, readerFor: PropertyReaders<Row>): Predicate<Row> {
  switch (node.kind) {
    case 'and': {
      const operands = node.operands.map((operand) => compilePredicate(operand, readerFor));
      return (row) => {
        for (const operand of operands) if (!operand(row)) return false;
        return true;
      };
    }
    case 'or': {
      const operands = node.operands.map((operand) => compilePredicate(operand, readerFor));
      return (row) => {
        for (const operand of operands) if (operand(row)) return true;
        return false;
      };
    }
    case 'not': {
      // Two-valued logic: `not` of a comparison on a missing property is true (unverified).
      const operand = compilePredicate(node.operand, readerFor);
      return (row) => !operand(row);
    }
    case 'comparison': {
      const read = readerFor(node.property);
      const order = orderingAgainst(node.literal);
      const holds = operatorHolds[node.operator];
      return (row) => {
        const stored = read(row);
        if (stored === undefined) return false; // missing property: no match, even for `ne` (unverified)
        const ordering = order(stored);
        return ordering !== undefined && holds(ordering);
      };
    }
    case 'constant': {
      const value = node.value;
      return () => value;
    }
    default: {
      const unreachable: never = node;
      throw new Error(`unknown filter node ${String(unreachable)}`);
    }
  }
}

/**
 * Orders a stored value against the literal. Different EDM types never match, except that
 * Int32, Int64 and Double compare by exact numeric value (Azure REST: querying-tables-and-entities recommendation).
 */
function orderingAgainst(literal: EdmValue): Ordering {
  switch (literal.type) {
    case 'Edm.String': {
      const value = literal.value; // ordinal, by UTF-16 code units
      return (stored) => (stored.type === 'Edm.String' ? compareOrdered(stored.value, value) : undefined);
    }
    case 'Edm.Guid': {
      const value = literal.value; // both sides lower-case canonical text; order unverified
      return (stored) => (stored.type === 'Edm.Guid' ? compareOrdered(stored.value, value) : undefined);
    }
    case 'Edm.DateTime': {
      const value = literal.value; // 100 ns ticks
      return (stored) => (stored.type === 'Edm.DateTime' ? compareOrdered(stored.value, value) : undefined);
    }
    case 'Edm.Boolean': {
      const value = Number(literal.value); // false < true
      return (stored) => (stored.type === 'Edm.Boolean' ? compareOrdered(Number(stored.value), value) : undefined);
    }
    case 'Edm.Binary': {
      const value = literal.value; // byte-wise, a prefix first (unverified)
      return (stored) => (stored.type === 'Edm.Binary' ? Buffer.compare(stored.value, value) : undefined);
    }
    case 'Edm.Int32':
    case 'Edm.Int64':
    case 'Edm.Double': {
      const value = literal.value;
      return (stored) =>
        stored.type === 'Edm.Int32' || stored.type === 'Edm.Int64' || stored.type === 'Edm.Double'
          ? compareNumbers(stored.value, value)
          : undefined;
    }
    default: {
      const unreachable: never = literal;
      throw new Error(`unknown literal ${String(unreachable)}`);
    }
  }
}

function compareOrdered<T extends string | number | bigint>(a: T, b: T): number {
  if (a < b) return -1;
  if (a > b) return 1;
  return a === b ? 0 : NaN;
}

/** Exact comparison of Int32 (number), Int64 (bigint) and Double (number) values: no rounding. */
function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === typeof b) return compareOrdered(a, b);
  return typeof a === 'number' ? compareDoubleToInteger(a, b as bigint) : -compareDoubleToInteger(b as number, a);
}

function compareDoubleToInteger(double: number, integer: bigint): number {
  if (Number.isNaN(double)) return NaN;
  if (!Number.isFinite(double)) return double > 0 ? 1 : -1;
  const floor = Math.floor(double);
  const floorOrdering = compareOrdered(BigInt(floor), integer);
  if (floorOrdering !== 0) return floorOrdering;
  return double === floor ? 0 : 1;
}

const noProperty = (): undefined => undefined;

/** Entity properties: the system properties by name, then the custom ones. */
export const readEntityProperty: PropertyReaders<Entity> = (property) => {
  switch (property) {
    case 'PartitionKey':
      return (entity) => ({ type: 'Edm.String', value: entity.partitionKey });
    case 'RowKey':
      return (entity) => ({ type: 'Edm.String', value: entity.rowKey });
    case 'Timestamp':
      return (entity) => ({ type: 'Edm.DateTime', value: entity.timestamp });
    default:
      return (entity) => entity.properties.get(property);
  }
};

/**
 * Query Tables: the only property is TableName, compared as stored (Azure REST: querying-tables-and-entities,
 * unverified).
 */
export const readTableProperty: PropertyReaders<string> = (property) =>
  property === 'TableName' ? (tableName) => ({ type: 'Edm.String', value: tableName }) : noProperty;
