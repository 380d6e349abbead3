// What the workload watch needs to know of a $filter: its shape (literals replaced by `?`, so that
// queries differing only in values group together and no user data is kept) and which key
// conditions it states at its top level.
import { shapeLengthMax } from '../../limits.js';
import { printNode, type FilterNode } from './ast.js';
import { parseFilter } from './parser.js';

export interface FilterFacts {
  /** E.g. `(PartitionKey eq ? and Status eq ?)`; `` for no filter. */
  readonly shape: string;
  /** The PartitionKey of a top-level `PartitionKey eq '…'`, if there is one. */
  readonly partitionKey: string | undefined;
  /** A top-level `RowKey eq '…'` is there. */
  readonly rowKeyEquality: boolean;
  /** Comparisons of properties other than the keys, anywhere in the filter. */
  readonly propertyConditions: number;
}

const noFilter: FilterFacts = { shape: '', partitionKey: undefined, rowKeyEquality: false, propertyConditions: 0 };

/** Facts of a filter the query engine accepted (so it parses). */
export function filterFacts(filter: string | undefined): FilterFacts {
  if (filter === undefined || filter === '') return noFilter;
  const tree = parseFilter(filter);
  const conjuncts = tree.kind === 'and' ? tree.operands : [tree];
  let partitionKey: string | undefined;
  let rowKeyEquality = false;
  for (const node of conjuncts) {
    if (node.kind !== 'comparison' || node.operator !== 'eq' || node.literal.type !== 'Edm.String') continue;
    if (node.property === 'PartitionKey') partitionKey = node.literal.value;
    if (node.property === 'RowKey') rowKeyEquality = true;
  }
  const shape = printNode(tree, () => '?');
  return {
    shape: shape.length > shapeLengthMax ? `${shape.slice(0, shapeLengthMax - 1)}…` : shape,
    partitionKey,
    rowKeyEquality,
    propertyConditions: propertyConditions(tree),
  };
}

function propertyConditions(node: FilterNode): number {
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.operands.reduce((sum, operand) => sum + propertyConditions(operand), 0);
    case 'not':
      return propertyConditions(node.operand);
    case 'comparison':
      return node.property === 'PartitionKey' || node.property === 'RowKey' ? 0 : 1;
    case 'constant':
      return 0;
  }
}
