// Query Entities through the real server (Azure REST: querying-tables-and-entities), written without src/table/query or
// src/table/wire so
// a wrong server cannot agree with a wrong test: typed test entities and their batch insertion, a
// test-side filter model with its own renderer and naive evaluator, pages with their
// continuation tokens and the x-cerulean-query-plan header.
import assert from 'node:assert/strict';
import type { TableClient, TableEntity, TransactionAction } from '@azure/data-tables';
import { describeResponse, devPath, send, type RawResponse } from './http.js';
import { isoTicks } from './odata.js';
import { inParallel } from './sdk.js';
import type { Random } from '../query/random.js';

// -- typed values and entities -------------------------------------------------------------------

export type TestValue =
  | { readonly type: 'Edm.String'; readonly value: string }
  | { readonly type: 'Edm.Int32'; readonly value: number }
  | { readonly type: 'Edm.Int64'; readonly value: bigint }
  | { readonly type: 'Edm.Double'; readonly value: number }
  | { readonly type: 'Edm.Boolean'; readonly value: boolean }
  /** 100 ns ticks since 1970-01-01T00:00:00Z. */
  | { readonly type: 'Edm.DateTime'; readonly value: bigint }
  /** Lower-case hyphenated text. */
  | { readonly type: 'Edm.Guid'; readonly value: string }
  | { readonly type: 'Edm.Binary'; readonly value: Buffer };

/** Short constructors: `edm.int64(2n ** 53n)`, `edm.dateTime('2019-07-10T19:00:00Z')`, `edm.binary('0102')`. */
export const edm = {
  string: (value: string): TestValue => ({ type: 'Edm.String', value }),
  int32: (value: number): TestValue => ({ type: 'Edm.Int32', value }),
  int64: (value: bigint): TestValue => ({ type: 'Edm.Int64', value }),
  double: (value: number): TestValue => ({ type: 'Edm.Double', value }),
  boolean: (value: boolean): TestValue => ({ type: 'Edm.Boolean', value }),
  dateTime: (iso: string): TestValue => ({ type: 'Edm.DateTime', value: isoTicks(iso) }),
  ticks: (value: bigint): TestValue => ({ type: 'Edm.DateTime', value }),
  guid: (text: string): TestValue => ({ type: 'Edm.Guid', value: text.toLowerCase() }),
  binary: (hex: string): TestValue => ({ type: 'Edm.Binary', value: Buffer.from(hex, 'hex') }),
};

export interface TestEntity {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly properties: Readonly<Record<string, TestValue>>;
}

export type Key = readonly [partitionKey: string, rowKey: string];

export const keyOf = (e: TestEntity): Key => [e.partitionKey, e.rowKey];

/**
 * Key order: PartitionKey then RowKey, ordinal over UTF-16 code units (Azure REST:
 * understanding-the-table-service-data-model).
 */
export function compareKeys(a: Key, b: Key): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return 0;
}

export const keyText = (key: Key): string => JSON.stringify(key);

const ticksPerSecond = 10_000_000n;

/** `yyyy-MM-ddTHH:mm:ss.fffffffZ`, always 7 fractional digits. */
function ticksIso(ticks: bigint): string {
  let seconds = ticks / ticksPerSecond;
  if (ticks % ticksPerSecond !== 0n && ticks < 0n) seconds -= 1n; // floor, for dates before 1970
  const fraction = ticks - seconds * ticksPerSecond;
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return `${whole}.${fraction.toString().padStart(7, '0')}Z`;
}

/** Double as text the service reads back exactly: NaN and infinities by name, integral values with `.0`. */
function doubleText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(value, -0)) return '-0.0';
  const text = String(value);
  return /[.e]/.test(text) ? text : `${text}.0`;
}

/** The SDK form of a value: `{ value, type }` objects go to the wire verbatim with their annotation. */
function sdkValue(value: TestValue): unknown {
  switch (value.type) {
    case 'Edm.String':
    case 'Edm.Boolean':
      return value.value;
    case 'Edm.Int32':
      return { value: String(value.value), type: 'Int32' };
    case 'Edm.Int64':
      return { value: value.value.toString(), type: 'Int64' };
    case 'Edm.Double':
      return { value: doubleText(value.value), type: 'Double' };
    case 'Edm.DateTime':
      return { value: ticksIso(value.value), type: 'DateTime' };
    case 'Edm.Guid':
      return { value: value.value, type: 'Guid' };
    case 'Edm.Binary':
      return { value: value.value.toString('base64'), type: 'Binary' };
    default: {
      const unreachable: never = value;
      throw new Error(`unknown value ${String(unreachable)}`);
    }
  }
}

function sdkEntity(entity: TestEntity): TableEntity<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(entity.properties)) out[name] = sdkValue(value);
  return { ...out, partitionKey: entity.partitionKey, rowKey: entity.rowKey };
}

const batchSizeMax = 100;

/** Inserts through 100-entity change sets (one partition each), `width` in flight. */
export async function insertEntities(client: TableClient, entities: readonly TestEntity[], width = 4): Promise<void> {
  const byPartition = new Map<string, TestEntity[]>();
  for (const entity of entities) {
    const group = byPartition.get(entity.partitionKey) ?? [];
    group.push(entity);
    byPartition.set(entity.partitionKey, group);
  }
  const batches: TestEntity[][] = [];
  for (const group of byPartition.values()) {
    for (let at = 0; at < group.length; at += batchSizeMax) batches.push(group.slice(at, at + batchSizeMax));
  }
  await inParallel(batches, width, (batch) =>
    client.submitTransaction(batch.map((entity): TransactionAction => ['create', sdkEntity(entity)])),
  );
}

// -- the test-side filter model ------------------------------------------------------------------

export type Operator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';

export const operators: readonly Operator[] = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'];

export type FilterExpr =
  | { readonly kind: 'cmp'; readonly property: string; readonly op: Operator; readonly literal: TestValue }
  | { readonly kind: 'and' | 'or'; readonly left: FilterExpr; readonly right: FilterExpr }
  | { readonly kind: 'not'; readonly operand: FilterExpr }
  | { readonly kind: 'const'; readonly value: boolean };

export function comparisonCount(filter: FilterExpr): number {
  switch (filter.kind) {
    case 'cmp':
      return 1;
    case 'and':
    case 'or':
      return comparisonCount(filter.left) + comparisonCount(filter.right);
    case 'not':
      return comparisonCount(filter.operand);
    case 'const':
      return 0;
  }
}

/** `a op b` read from the other side: `5 lt n` is `n gt 5`. */
const mirrored: Readonly<Record<Operator, Operator>> = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' };

/** Binding strength (Azure REST: querying-tables-and-entities): comparison > not > and > or. */
function precedence(filter: FilterExpr): number {
  return filter.kind === 'or' ? 1 : filter.kind === 'and' ? 2 : filter.kind === 'not' ? 3 : 4;
}

/**
 * Filter text. Without `random`, one canonical form; with it, the equivalent forms Azure REST:
 * querying-tables-and-entities allows
 * vary: literal on the left, redundant parentheses, `not(…)`, exponent and upper-case literal
 * forms, `binary'…'`, shorter DateTime fractions.
 */
export function renderFilter(filter: FilterExpr, random?: Random): string {
  const maybe = (p: number) => random?.chance(p) ?? false;
  const wrap = (child: FilterExpr, parent: number) => {
    const text = renderFilter(child, random);
    return precedence(child) < parent || maybe(0.15) ? `(${text})` : text;
  };
  switch (filter.kind) {
    case 'cmp': {
      const literal = renderLiteral(filter.literal, random);
      return maybe(0.25)
        ? `${literal} ${mirrored[filter.op]} ${filter.property}`
        : `${filter.property} ${filter.op} ${literal}`;
    }
    case 'and':
    case 'or':
      return `${wrap(filter.left, precedence(filter))} ${filter.kind} ${wrap(filter.right, precedence(filter))}`;
    case 'not': {
      const operand = renderFilter(filter.operand, random);
      if (precedence(filter.operand) < 3 || maybe(0.3)) return maybe(0.5) ? `not(${operand})` : `not (${operand})`;
      return `not ${operand}`;
    }
    case 'const':
      return String(filter.value);
  }
}

/**
 * A literal in one of the forms of Azure REST: querying-tables-and-entities. Doubles must be finite (no literal for
 * NaN/∞).
 */
function renderLiteral(literal: TestValue, random?: Random): string {
  const maybe = (p: number) => random?.chance(p) ?? false;
  switch (literal.type) {
    case 'Edm.String':
      return `'${literal.value.replaceAll("'", "''")}'`;
    case 'Edm.Int32':
      return String(literal.value);
    case 'Edm.Int64':
      return `${literal.value}L`;
    case 'Edm.Double': {
      assert.ok(Number.isFinite(literal.value), 'no filter literal exists for NaN or infinities');
      if (maybe(0.3)) {
        const exponent = literal.value.toExponential(); // shortest digits that read back exactly
        return maybe(0.5) ? exponent.toUpperCase() : exponent;
      }
      return doubleText(literal.value);
    }
    case 'Edm.Boolean':
      return String(literal.value);
    case 'Edm.DateTime':
      return `datetime'${shortenFraction(ticksIso(literal.value), random)}'`;
    case 'Edm.Guid':
      return `guid'${maybe(0.3) ? literal.value.toUpperCase() : literal.value}'`;
    case 'Edm.Binary': {
      const hex = literal.value.toString('hex');
      return `${maybe(0.3) ? 'binary' : 'X'}'${maybe(0.3) ? hex.toUpperCase() : hex}'`;
    }
  }
}

/**
 * The 0, 3 or 6 fractional-digit forms clients send (Azure REST: querying-tables-and-entities) when they say the same
 * instant.
 */
function shortenFraction(iso7: string, random?: Random): string {
  if (random === undefined) return iso7;
  const fraction = iso7.slice(20, 27);
  const lengths = [0, 3, 6].filter((n) => /^0*$/.test(fraction.slice(n)));
  if (lengths.length === 0 || random.chance(0.4)) return iso7;
  const n = random.pick(lengths);
  return `${iso7.slice(0, 19)}${n === 0 ? '' : `.${fraction.slice(0, n)}`}Z`;
}

/**
 * The naive evaluator (Azure REST: querying-tables-and-entities recommendations): a missing property or different EDM
 * types
 * never match, for every operator; Int32, Int64 and Double compare by exact numeric value; NaN
 * is unordered (equal to nothing, so only `ne` holds); `not` is two-valued.
 */
export function evaluateFilter(filter: FilterExpr, entity: TestEntity): boolean {
  switch (filter.kind) {
    case 'cmp': {
      const stored = propertyOf(entity, filter.property);
      if (stored === undefined) return false;
      const ordering = compareValues(stored, filter.literal);
      if (ordering === undefined) return false;
      if (Number.isNaN(ordering)) return filter.op === 'ne';
      return operatorHolds(filter.op, ordering);
    }
    case 'and':
      return evaluateFilter(filter.left, entity) && evaluateFilter(filter.right, entity);
    case 'or':
      return evaluateFilter(filter.left, entity) || evaluateFilter(filter.right, entity);
    case 'not':
      return !evaluateFilter(filter.operand, entity);
    case 'const':
      return filter.value;
  }
}

function operatorHolds(op: Operator, ordering: number): boolean {
  switch (op) {
    case 'eq':
      return ordering === 0;
    case 'ne':
      return ordering !== 0;
    case 'gt':
      return ordering > 0;
    case 'ge':
      return ordering >= 0;
    case 'lt':
      return ordering < 0;
    case 'le':
      return ordering <= 0;
  }
}

function propertyOf(entity: TestEntity, name: string): TestValue | undefined {
  if (name === 'PartitionKey') return edm.string(entity.partitionKey);
  if (name === 'RowKey') return edm.string(entity.rowKey);
  assert.notEqual(name, 'Timestamp', 'the naive evaluator does not know server Timestamps');
  return Object.hasOwn(entity.properties, name) ? entity.properties[name] : undefined;
}

const sign = (difference: number): number => (difference < 0 ? -1 : difference > 0 ? 1 : 0);

function order<T extends string | bigint>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -1 / 0 / 1, NaN when unordered, undefined when the two cannot be compared. */
function compareValues(stored: TestValue, literal: TestValue): number | undefined {
  const a = numericOf(stored);
  const b = numericOf(literal);
  if (a !== undefined && b !== undefined) return compareNumeric(a, b);
  if (stored.type !== literal.type) return undefined;
  switch (stored.type) {
    case 'Edm.String':
      return order(stored.value, literal.value as string);
    case 'Edm.Guid':
      return order(stored.value.toLowerCase(), (literal.value as string).toLowerCase());
    case 'Edm.DateTime':
      return order(stored.value, literal.value as bigint);
    case 'Edm.Boolean':
      return sign(Number(stored.value) - Number(literal.value));
    case 'Edm.Binary':
      return sign(Buffer.compare(stored.value, literal.value as Buffer));
    default:
      throw new Error(`not reached: ${stored.type}`);
  }
}

type Numeric = { readonly integer: bigint } | { readonly double: number };

function numericOf(value: TestValue): Numeric | undefined {
  if (value.type === 'Edm.Int32') return { integer: BigInt(value.value) };
  if (value.type === 'Edm.Int64') return { integer: value.value };
  if (value.type === 'Edm.Double') return { double: value.value };
  return undefined;
}

const exactIntegerMax = 2n ** 53n;

function compareNumeric(a: Numeric, b: Numeric): number {
  if ('integer' in a && 'integer' in b) return order(a.integer, b.integer);
  if ('double' in a && 'double' in b) {
    return a.double < b.double ? -1 : a.double > b.double ? 1 : a.double === b.double ? 0 : NaN;
  }
  if ('double' in a) return doubleVersusInteger(a.double, (b as { integer: bigint }).integer);
  return -doubleVersusInteger((b as { double: number }).double, a.integer);
}

/** Exact: no rounding of the integer to a double (Azure REST: querying-tables-and-entities, Azurite#2385). */
function doubleVersusInteger(double: number, integer: bigint): number {
  if (Number.isNaN(double)) return NaN;
  if (!Number.isFinite(double)) return double > 0 ? 1 : -1;
  const magnitude = integer < 0n ? -integer : integer;
  if (magnitude <= exactIntegerMax) {
    const exact = Number(integer);
    return double < exact ? -1 : double > exact ? 1 : 0;
  }
  // |integer| > 2^53: a double that large is an integer; a smaller one lies on the integer's near side.
  if (Math.abs(double) >= 2 ** 53) return order(BigInt(double), integer);
  return integer > 0n ? -1 : 1;
}

// -- pages over HTTP -----------------------------------------------------------------------------

export type QueryParams = Readonly<Record<string, string | number | undefined>>;

/**
 * `?a=…&b=…` with every value percent-encoded as the SDKs do (Azure REST: querying-tables-and-entities); undefined
 * values dropped.
 */
export function queryString(params: QueryParams): string {
  const pairs = Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value))}`);
  return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
}

export function queryEntities(port: number, table: string, params: QueryParams = {}): Promise<RawResponse> {
  return send(port, { method: 'GET', path: devPath(`${table}()${queryString(params)}`) });
}

export interface QueryPlanHeader {
  readonly queryClass: string;
  readonly scanned: number;
  readonly returned: number;
}

const planHeaderShape = /^(point|range|partition-scan|multi-range|table-scan); scanned=(\d+); returned=(\d+)$/;

/** `x-cerulean-query-plan: <class>; scanned=<n>; returned=<m>`. */
function parsePlanHeader(res: RawResponse): QueryPlanHeader {
  const text = res.headers['x-cerulean-query-plan'];
  const match = typeof text === 'string' ? planHeaderShape.exec(text) : null;
  assert.ok(match !== null, `x-cerulean-query-plan header: ${String(text)}`);
  return { queryClass: match[1]!, scanned: Number(match[2]), returned: Number(match[3]) };
}

/** The continuation query parameters of a page, exactly as the next request repeats them. */
export interface Continuation {
  readonly NextPartitionKey: string;
  readonly NextRowKey?: string;
}

export interface EntityPage {
  readonly response: RawResponse;
  readonly entities: ReadonlyArray<Record<string, any>>;
  readonly keys: readonly Key[];
  readonly continuation: Continuation | undefined;
  /** The key the continuation names (the first one not yet returned). */
  readonly resumeKey: readonly [string, string | undefined] | undefined;
  readonly plan: QueryPlanHeader;
}

/** One page; asserts 200, a well-formed plan header and well-formed continuation headers. */
export async function fetchEntityPage(port: number, table: string, params: QueryParams = {}): Promise<EntityPage> {
  const response = await queryEntities(port, table, params);
  assert.equal(response.status, 200, `${queryString(params)}: ${describeResponse(response)}`);
  const entities: Array<Record<string, any>> = response.json().value;
  const plan = parsePlanHeader(response);
  assert.equal(plan.returned, entities.length, 'returned= counts the entities of the page');
  const nextPk = response.headers['x-ms-continuation-nextpartitionkey'] as string | undefined;
  const nextRk = response.headers['x-ms-continuation-nextrowkey'] as string | undefined;
  assert.notEqual(
    nextPk,
    '',
    'continuation headers are absent, never empty (docs/protocol-notes.md#continuation-headers)',
  );
  assert.notEqual(
    nextRk,
    '',
    'continuation headers are absent, never empty (docs/protocol-notes.md#continuation-headers)',
  );
  if (nextRk !== undefined) assert.ok(nextPk !== undefined, 'NextRowKey never comes without NextPartitionKey');
  return {
    response,
    entities,
    keys: entities.map((e): Key => [e.PartitionKey, e.RowKey]),
    continuation:
      nextPk === undefined
        ? undefined
        : { NextPartitionKey: nextPk, ...(nextRk === undefined ? {} : { NextRowKey: nextRk }) },
    resumeKey:
      nextPk === undefined ? undefined : [decodeToken(nextPk), nextRk === undefined ? undefined : decodeToken(nextRk)],
    plan,
  };
}

/** Follows continuations to the end, repeating the original options on every request. */
export async function fetchAllPages(
  port: number,
  table: string,
  params: QueryParams = {},
  pagesMax = 20_000,
): Promise<EntityPage[]> {
  const pages: EntityPage[] = [];
  let continuation: Continuation | undefined;
  do {
    const page = await fetchEntityPage(port, table, { ...params, ...continuation });
    pages.push(page);
    assert.ok(pages.length <= pagesMax, `more than ${pagesMax} pages for ${queryString(params)}`);
    continuation = page.continuation;
  } while (continuation !== undefined);
  return pages;
}

/**
 * The key inside a token of the service's shape (Azure REST: query-timeout-and-pagination): `1!<length>!<payload>`,
 * payload
 * base64 of the UTF-8 key with `-` for padding; `.`/`_` or `+`/`/` for the two unverified digits.
 */
function decodeToken(token: string): string {
  const match = /^1!(\d+)!(.*)$/.exec(token);
  assert.ok(match !== null && Number(match[1]) === match[2]!.length, `token shape: ${token}`);
  const base64 = match[2]!
    .replace(/-+$/, (pad) => '='.repeat(pad.length))
    .replaceAll('.', '+')
    .replaceAll('_', '/');
  return Buffer.from(base64, 'base64').toString('utf8');
}
