// The query builder's output: OData $filter text with a typed literal for every EDM type
// (Azure REST: querying-tables-and-entities), and the Timestamp presets.
import { invalidReason, dateTimeText, type EdmType } from './edm.js';

export const comparisons = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;
export type Comparison = (typeof comparisons)[number];

export interface Condition {
  /** How this condition joins the ones before it. */
  readonly join: 'and' | 'or';
  readonly property: string;
  readonly comparison: Comparison;
  readonly type: EdmType;
  readonly value: string;
}

/** The OData literal of `text` as `type`; throws with the reason when the value is not valid. */
export function literal(type: EdmType, text: string): string {
  const reason = invalidReason(type, text);
  if (reason !== undefined) throw new Error(`${text === '' ? '(empty)' : text} is not ${type}: ${reason}`);
  switch (type) {
    case 'Edm.String':
      return `'${text.replace(/'/g, "''")}'`;
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return text;
    case 'Edm.Int64':
      return `${text}L`;
    case 'Edm.Double':
      if (!Number.isFinite(Number(text))) throw new Error(`${text} cannot be compared in a filter`);
      return /[.eE]/.test(text) ? text : `${text}.0`;
    case 'Edm.DateTime':
      return `datetime'${text}'`;
    case 'Edm.Guid':
      return `guid'${text}'`;
    case 'Edm.Binary':
      return `X'${[...atob(text)].map((c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('')}'`;
  }
}

/** `a and b or c` as OData reads it: `and` binds tighter, so each run of `and`s is grouped. */
export function filterText(conditions: readonly Condition[]): string {
  const groups: string[][] = [];
  for (const condition of conditions) {
    const term = `${condition.property} ${condition.comparison} ${literal(condition.type, condition.value)}`;
    if (groups.length === 0 || condition.join === 'or') groups.push([term]);
    else groups[groups.length - 1]!.push(term);
  }
  const parts = groups.map((group) => group.join(' and '));
  return parts.length > 1
    ? parts.map((part) => (part.includes(' and ') ? `(${part})` : part)).join(' or ')
    : parts.join('');
}

export const timestampPresets = [
  { label: 'last hour', ms: 3_600_000 },
  { label: 'last day', ms: 86_400_000 },
  { label: 'last 7 days', ms: 7 * 86_400_000 },
] as const;

/** The condition of a Timestamp preset, relative to `nowMs`. */
export function timestampSince(ms: number, nowMs: number): Condition {
  return {
    join: 'and',
    property: 'Timestamp',
    comparison: 'ge',
    type: 'Edm.DateTime',
    value: dateTimeText(nowMs - ms),
  };
}
