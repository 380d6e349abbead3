// The query module's public face: $filter text in, a key-range plan and a compiled predicate out.
// Stages: lexer.ts → parser.ts → ast.ts → plan.ts (ranges) and evaluate.ts (predicate).
import { StorageError } from '../../errors.js';
import { printNode } from './ast.js';
import { compilePredicate, readEntityProperty, readTableProperty } from './evaluate.js';
import { parseFilter } from './parser.js';
import { planQuery, tableScan } from './plan.js';
import { storageConditions } from './pushdown.js';
import type { PropertyCondition } from '../../storage/table-store.js';
import type { QueryPlan } from './plan.js';
import { type Entity } from '../../domain/entity.js';

export type { QueryClass, QueryPlan } from './plan.js';
export { clipRanges, intersectRanges, printPlan } from './plan.js';

export interface CompiledEntityQuery {
  readonly plan: QueryPlan;
  /** A prefilter the store may apply while scanning (pushdown.ts). */
  readonly conditions: readonly PropertyCondition[];
  /** Full filter evaluation (always applied to rows read from the ranges); for no filter, always true. */
  readonly matches: (entity: Entity) => boolean;
}

const always = (): boolean => true;

const unfiltered: CompiledEntityQuery = { plan: tableScan, conditions: [], matches: always };

/**
 * Parses and compiles once. `filter` undefined or '' = no filter (table-scan class, one open range).
 * Throws StorageError.
 */
export function compileEntityQuery(filter: string | undefined): CompiledEntityQuery {
  // An empty $filter= is no filter (Azure REST: querying-tables-and-entities, unverified).
  if (filter === undefined || filter === '') return unfiltered;
  const tree = parseFilter(filter);
  return {
    plan: planQuery(tree),
    conditions: storageConditions(tree),
    matches: compilePredicate(tree, readEntityProperty),
  };
}

/** Query Tables: same grammar; the only property is TableName (a string). Throws StorageError. */
export function compileTableFilter(filter: string | undefined): (tableName: string) => boolean {
  if (filter === undefined || filter === '') return always;
  return compilePredicate(parseFilter(filter), readTableProperty);
}

/** Printed forms for tests and logs. */
export function printFilter(filter: string): string {
  return printNode(parseFilter(filter));
}

const supportedQueryOptions: ReadonlySet<string> = new Set(['$filter', '$select', '$top', '$format']);

/**
 * Other OData system query options ($orderby, $skip, $expand, $count, …) are not supported by the
 * Table service (Azure REST: querying-tables-and-entities): 400 InvalidQueryParameterValue (code unverified, the spec's
 * recommendation). Parameters without `$` are not OData options and are ignored
 * (docs/protocol-notes.md#unknown-input-is-ignored).
 */
export function rejectUnsupportedQueryOptions(parameterNames: Iterable<string>): void {
  for (const name of parameterNames) {
    if (name.startsWith('$') && !supportedQueryOptions.has(name)) {
      throw new StorageError('InvalidQueryParameterValue', `The query option ${name} is not supported.`);
    }
  }
}
