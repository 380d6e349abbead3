// What both engines' findBlobsByTags share (blob-store.ts, "Blob index tags"): the WHERE terms of a
// query over the tag rows `t` (columns account, key, value, container, name), written so an index on
// (account, key, value, container, name) seeks straight to the first row: an equality on the value
// is `=`, so that the container and the place after the marker are seeks too (a range of values
// reads its range, then filters by container).
import type { TagQuery } from './blob-store.js';

/**
 * `bind` takes a value and answers its placeholder in the engine's syntax. `filterOnly` writes a
 * column so that the engine's planner checks it on each index entry rather than seeking by it
 * (SQLite: `+column`): a range's container. SQLite otherwise takes the container's equality for a
 * constant, drops it from the ORDER BY, no longer sees that the index walks (value, container,
 * name) in order, and sorts all rows of each value before the LIMIT (docs/performance.md, "Find
 * Blobs by Tags as the container grows").
 */
export function tagQueryTerms(
  account: string,
  query: TagQuery,
  bind: (value: string) => string,
  filterOnly: (column: string) => string = (column) => column,
): string[] | 'none' {
  const terms = [`t.account = ${bind(account)}`, `t.key = ${bind(query.key)}`];
  const { lower, upper, after, container } = query;
  const equal =
    lower !== undefined && upper !== undefined && lower.inclusive && upper.inclusive && lower.value === upper.value;
  if (equal) terms.push(`t.value = ${bind(lower.value)}`);
  else {
    if (lower !== undefined) terms.push(`t.value ${lower.inclusive ? '>=' : '>'} ${bind(lower.value)}`);
    if (upper !== undefined) terms.push(`t.value ${upper.inclusive ? '<=' : '<'} ${bind(upper.value)}`);
  }
  if (container !== undefined) terms.push(`${equal ? 't.container' : filterOnly('t.container')} = ${bind(container)}`);
  if (after === undefined) return terms;
  if (!equal) {
    terms.push(
      `(t.value, t.container, t.name) > (${bind(after.value)}, ${bind(after.container)}, ${bind(after.name)})`,
    );
    return terms;
  }
  // One value: the order is (container, name) within it.
  if (after.value < lower.value) return terms;
  if (after.value > lower.value) return 'none';
  if (container === undefined) {
    terms.push(`(t.container, t.name) > (${bind(after.container)}, ${bind(after.name)})`);
  } else if (after.container === container) {
    terms.push(`t.name > ${bind(after.name)}`);
  } else if (after.container > container) {
    return 'none';
  }
  return terms;
}
