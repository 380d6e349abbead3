// The $filter syntax tree (Azure REST: querying-tables-and-entities) and its printed form. The printed form is valid
// filter
// text again, fully parenthesized, so tests can state expected trees as text and round-trip them.
import { formatDateTimeTicks, formatFiniteDouble } from '../../domain/edm.js';
import type { EdmValue } from '../../domain/edm.js';

export type ComparisonOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

export const comparisonOperators: readonly ComparisonOperator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

export type FilterNode =
  | { readonly kind: 'and'; readonly operands: readonly FilterNode[] }
  | { readonly kind: 'or'; readonly operands: readonly FilterNode[] }
  | { readonly kind: 'not'; readonly operand: FilterNode }
  /**
   * Always property first: the parser mirrors `5 lt Age` into `Age gt 5`, and a bare Boolean
   * property `Flag` becomes `Flag eq true`.
   */
  | {
      readonly kind: 'comparison';
      readonly property: string;
      readonly operator: ComparisonOperator;
      readonly literal: EdmValue;
    }
  /** The literals `true` / `false` used as a whole expression. */
  | { readonly kind: 'constant'; readonly value: boolean };

/** A literal in the OData form the parser reads back to the same typed value. */
export function printLiteral(literal: EdmValue): string {
  switch (literal.type) {
    case 'Edm.String':
      return `'${literal.value.replace(/'/g, "''")}'`;
    case 'Edm.Int32':
      return String(literal.value);
    case 'Edm.Int64':
      return `${literal.value}L`;
    case 'Edm.Double':
      return Object.is(literal.value, -0) ? '-0.0' : formatFiniteDouble(literal.value);
    case 'Edm.Boolean':
      return String(literal.value);
    case 'Edm.DateTime':
      return `datetime'${formatDateTimeTicks(literal.value)}'`;
    case 'Edm.Guid':
      return `guid'${literal.value}'`;
    case 'Edm.Binary':
      return `X'${literal.value.toString('hex')}'`;
    default: {
      const unreachable: never = literal;
      throw new Error(`unknown literal ${String(unreachable)}`);
    }
  }
}

/**
 * Fully parenthesized filter text: every and/or group in parentheses, `not` always followed by one.
 * `literal` prints the literals (their filter text by default; `() => '?'` gives a filter's shape).
 */
export function printNode(node: FilterNode, literal: (value: EdmValue) => string = printLiteral): string {
  switch (node.kind) {
    case 'and':
    case 'or':
      return `(${node.operands.map((operand) => printNode(operand, literal)).join(` ${node.kind} `)})`;
    case 'not': {
      const operand = printNode(node.operand, literal);
      return node.operand.kind === 'and' || node.operand.kind === 'or' ? `not ${operand}` : `not (${operand})`;
    }
    case 'comparison':
      return `${node.property} ${node.operator} ${literal(node.literal)}`;
    case 'constant':
      return String(node.value);
    default: {
      const unreachable: never = node;
      throw new Error(`unknown filter node ${String(unreachable)}`);
    }
  }
}
