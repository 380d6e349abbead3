// Conditions the store may evaluate while it scans, so that a table scan on a property filter
// does not wake JavaScript for every row. They are a prefilter only: the compiled predicate
// still decides every row the store returns, so a condition must never reject a row the
// predicate would accept (Azure REST: querying-tables-and-entities semantics), and may keep rows it rejects.
import type { EdmValue } from '../../domain/edm.js';
import type { PropertyCondition } from '../../storage/table-store.js';
import type { ComparisonOperator, FilterNode } from './ast.js';

/**
 * The top-level `and` terms that compare a custom property with a number (Int32, Int64, finite
 * Double), a string, a Boolean or a DateTime (but for `ne`), or Timestamp with a DateTime. A
 * store compares numbers with stored Int32, Int64 and Double values (numeric promotion) and the
 * others with stored values of their own type; a row of any other type can never match,
 * so the store may keep or drop it.
 */
export function storageConditions(filter: FilterNode): PropertyCondition[] {
  const terms = filter.kind === 'and' ? filter.operands : [filter];
  const conditions: PropertyCondition[] = [];
  for (const term of terms) {
    if (term.kind !== 'comparison' || term.property === 'PartitionKey' || term.property === 'RowKey') continue;
    const condition = conditionOf(term.property, term.operator, term.literal);
    if (condition !== undefined) conditions.push(condition);
  }
  return conditions;
}

function conditionOf(property: string, operator: ComparisonOperator, literal: EdmValue): PropertyCondition | undefined {
  if (property === 'Timestamp') {
    return literal.type === 'Edm.DateTime' ? { kind: 'timestamp', operator, value: literal.value } : undefined;
  }
  switch (literal.type) {
    case 'Edm.Int32':
    case 'Edm.Int64':
      return { kind: 'number', property, operator, value: literal.value };
    case 'Edm.Double':
      return Number.isFinite(literal.value) ? { kind: 'number', property, operator, value: literal.value } : undefined;
    case 'Edm.String':
      // Stores may order strings by UTF-8 bytes; that agrees with UTF-16 code-unit order
      // whenever the literal has no character at or above U+D800.
      return /^[\u0000-\ud7ff]*$/.test(literal.value)
        ? { kind: 'string', property, operator, value: literal.value }
        : undefined;
    case 'Edm.Boolean':
      return { kind: 'boolean', property, operator, value: literal.value };
    case 'Edm.DateTime':
      // `ne` would keep nearly every row: not worth a store's time.
      return operator === 'ne' ? undefined : { kind: 'dateTime', property, operator, value: literal.value };
    default:
      return undefined;
  }
}
