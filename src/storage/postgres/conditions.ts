// Scan conditions (table-store.ts PropertyCondition) as SQL over the jsonb properties (codec.ts). They
// are a prefilter: a row that could satisfy the condition is never dropped; a row of a type the
// literal can never match may be kept; the query's predicate decides every row returned.
import { dateTimeTicksMax, dateTimeTicksMin, formatDateTimeTicks } from '../../domain/edm.js';
import type { ComparisonOperator, PropertyCondition } from '../table-store.js';

const sqlOperators: Record<ComparisonOperator, string> = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' };

/** Adds a parameter and returns its placeholder. */
export type Bind = (value: unknown) => string;

/** One condition as a boolean SQL expression over the columns `ts` and `props`. */
export function conditionSql(condition: PropertyCondition, bind: Bind): string {
  const op = sqlOperators[condition.operator];
  if (condition.kind === 'timestamp') return `ts ${op} ${bind(condition.value.toString())}::bigint`;
  // One parameter for the name, one for its annotation's, each bound where first used.
  let name: string | undefined;
  let annotationName: string | undefined;
  const value = () => `props -> ${(name ??= bind(condition.property))}::text`;
  const text = () => `props ->> ${(name ??= bind(condition.property))}::text`;
  const annotation = () => `props ->> ${(annotationName ??= bind(`${condition.property}@odata.type`))}::text`;
  switch (condition.kind) {
    case 'string': {
      // Byte order of UTF-8 agrees with UTF-16 order against a literal below U+D800 (pushdown.ts).
      // An escaped string (codec.ts) is an object: kept. PostgreSQL text cannot hold a literal
      // with U+0000: every unannotated string is kept, and the query's predicate decides.
      const test = condition.value.includes('\u0000')
        ? 'true'
        : `${text()} COLLATE "C" ${op} ${bind(condition.value)}::text`;
      return (
        `CASE jsonb_typeof(${value()}) WHEN 'string' THEN ${annotation()} IS NULL AND ${test} ` +
        `WHEN 'object' THEN true ELSE false END`
      );
    }
    case 'boolean':
      return `CASE jsonb_typeof(${value()}) WHEN 'boolean' THEN (${text()})::boolean ${op} ${bind(condition.value)}::boolean ELSE false END`;
    case 'dateTime':
      // Stored DateTimes are UTC ISO text with a variable fraction: compared as timestamps to the
      // microsecond, with a microsecond of margin for the 100 ns digit the predicate then checks.
      return `CASE WHEN ${annotation()} = 'Edm.DateTime' THEN ${dateTimeTest(condition.operator, condition.value, text(), bind)} ELSE false END`;
    case 'number':
      return numberSql(condition.operator, condition.value, value(), text(), annotation(), bind);
  }
}

/**
 * Int32 and finite Double are JSON numbers, compared as float8 (exact for both). An Int64 literal
 * not exactly a double is rounded, so strict operators widen and `ne` keeps every number. Int64
 * is an annotated string, compared exactly as numeric; NaN and ±Infinity Doubles are annotated
 * strings too, and are kept. Other strings cannot match a number.
 */
function numberSql(
  operator: ComparisonOperator,
  literal: number | bigint,
  value: string,
  text: string,
  annotation: string,
  bind: Bind,
): string {
  const asDouble = Number(literal);
  const exactDouble = typeof literal === 'number' || BigInt(asDouble) === literal;
  const doubleOperator = exactDouble
    ? operator
    : (({ gt: 'ge', lt: 'le' } as const)[operator as 'gt' | 'lt'] ?? operator);
  const doubleTest =
    !exactDouble && operator === 'ne'
      ? 'true'
      : `(${text})::float8 ${sqlOperators[doubleOperator]} ${bind(asDouble)}::float8`;
  // The literal's exact decimal value: a non-integral double has no integer within its rounding
  // interval, so its shortest text compares with every Int64 as the double does.
  const exact =
    typeof literal === 'bigint'
      ? literal.toString()
      : Number.isInteger(literal)
        ? BigInt(literal).toString()
        : String(literal);
  return (
    `CASE jsonb_typeof(${value}) WHEN 'number' THEN ${doubleTest} ` +
    `WHEN 'string' THEN CASE ${annotation} WHEN 'Edm.Int64' THEN (${text})::numeric ${sqlOperators[operator]} ${bind(exact)}::numeric ` +
    `WHEN 'Edm.Double' THEN true ELSE false END ELSE false END`
  );
}

const ticksPerMicrosecond = 10n;

function dateTimeTest(operator: ComparisonOperator, ticks: bigint, text: string, bind: Bind): string {
  const stored = `(${text})::timestamptz`;
  // Clamped to the DateTime range, which every stored value is in (PostgreSQL rounds both alike).
  const at = (offsetMicroseconds: bigint) => {
    const bound = ticks - (ticks % ticksPerMicrosecond) + offsetMicroseconds * ticksPerMicrosecond;
    const clamped = bound > dateTimeTicksMax ? dateTimeTicksMax : bound < dateTimeTicksMin ? dateTimeTicksMin : bound;
    return `${bind(formatDateTimeTicks(clamped))}::timestamptz`;
  };
  switch (operator) {
    case 'eq':
      return `${stored} BETWEEN ${at(-1n)} AND ${at(1n)}`;
    case 'gt':
    case 'ge':
      return `${stored} >= ${at(-1n)}`;
    case 'lt':
    case 'le':
      return `${stored} <= ${at(1n)}`;
    case 'ne':
      return `${stored} IS NOT NULL`;
  }
}
