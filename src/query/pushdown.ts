// Conditions the store may evaluate while it scans, so that a table scan on a property filter
// does not wake JavaScript for every row. They are a prefilter only: the compiled predicate
// still decides every row the store returns, so a condition must never reject a row the
// predicate would accept (query.md §3.3 semantics), and may keep rows it rejects.
import type { PropertyCondition } from '../storage/store.js';
import type { FilterNode } from './ast.js';

/** Key and system properties are served by the key ranges and the predicate, not by conditions. */
const systemProperties: ReadonlySet<string> = new Set(['PartitionKey', 'RowKey', 'Timestamp']);

/**
 * The top-level `and` terms that compare a custom property with a number (Int32, Int64, finite
 * Double) or a string. A store compares them only against stored values of the same JSON kind
 * (numbers with numbers, strings with strings) and keeps every other row, which covers the
 * numeric promotion between Int32, Int64 and Double and every type mismatch (§3.3).
 */
export function storageConditions(filter: FilterNode): PropertyCondition[] {
  const terms = filter.kind === 'and' ? filter.operands : [filter];
  const conditions: PropertyCondition[] = [];
  for (const term of terms) {
    if (term.kind !== 'comparison' || systemProperties.has(term.property)) continue;
    const { literal } = term;
    switch (literal.type) {
      case 'Edm.Int32':
      case 'Edm.Int64':
        conditions.push({ property: term.property, operator: term.operator, value: literal.value });
        break;
      case 'Edm.Double':
        if (Number.isFinite(literal.value)) {
          conditions.push({ property: term.property, operator: term.operator, value: literal.value });
        }
        break;
      case 'Edm.String':
        // Stores may order strings by UTF-8 bytes; that agrees with UTF-16 code-unit order
        // whenever the literal has no character at or above U+D800.
        if (/^[\u0000-\ud7ff]*$/.test(literal.value)) {
          conditions.push({ property: term.property, operator: term.operator, value: literal.value });
        }
        break;
      default:
        break;
    }
  }
  return conditions;
}
