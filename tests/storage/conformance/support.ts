// What the TableStore conformance suite, the model test and the fault test share: how an engine under
// test is handed over, values and writes in short form, key order and range membership written
// independently of src/ (so a wrong engine cannot agree with a wrong test), exact comparison of
// entities, and a scan walked to its end with the step invariants checked on the way.
import assert from 'node:assert/strict';
import type { EdmValue } from '../../../src/domain/edm.js';
import type { Entity, Properties } from '../../../src/domain/entity.js';
import type { KeyBound, KeyRange } from '../../../src/domain/keys.js';
import { encodeMinimalProperties, minimalJsonOf } from '../../../src/table/wire/odata.js';
import type {
  PropertyCondition,
  TableStore,
  TableInfo,
  Write,
  WriteCondition,
} from '../../../src/storage/table-store.js';

/** An engine handed to the suites: a fresh, empty store and how to dispose of it. */
export interface StoreUnderTest {
  readonly store: TableStore;
  /** Closes the store and removes whatever it kept (a temp directory, a database). */
  close(): Promise<void>;
  /**
   * Closes the store and opens the same data again, for engines that keep data across opens; the
   * returned store replaces `store`. Absent for engines that keep nothing.
   */
  reopen?(): Promise<TableStore>;
}

/** Opens a fresh, empty store of the engine under test. */
export type StoreFactory = () => Promise<StoreUnderTest>;

// -- values and writes ----------------------------------------------------------------------------

export const edm = {
  string: (value: string): EdmValue => ({ type: 'Edm.String', value }),
  int32: (value: number): EdmValue => ({ type: 'Edm.Int32', value }),
  int64: (value: bigint): EdmValue => ({ type: 'Edm.Int64', value }),
  double: (value: number): EdmValue => ({ type: 'Edm.Double', value }),
  boolean: (value: boolean): EdmValue => ({ type: 'Edm.Boolean', value }),
  dateTime: (ticks: bigint): EdmValue => ({ type: 'Edm.DateTime', value: ticks }),
  guid: (value: string): EdmValue => ({ type: 'Edm.Guid', value }),
  binary: (value: Buffer): EdmValue => ({ type: 'Edm.Binary', value }),
};

export function props(record: Readonly<Record<string, EdmValue>> = {}): Properties {
  return new Map(Object.entries(record));
}

export const none: WriteCondition = { kind: 'none' };
export const absent: WriteCondition = { kind: 'absent' };
export const present: WriteCondition = { kind: 'present' };
export const version = (timestamp: bigint): WriteCondition => ({ kind: 'version', timestamp });

export function put(partitionKey: string, rowKey: string, properties: Properties = props(), condition = none): Write {
  return { partitionKey, rowKey, condition, action: { kind: 'put', properties } };
}

export function merge(partitionKey: string, rowKey: string, properties: Properties, condition = none): Write {
  return { partitionKey, rowKey, condition, action: { kind: 'merge', properties } };
}

export function del(partitionKey: string, rowKey: string, condition = none): Write {
  return { partitionKey, rowKey, condition, action: { kind: 'delete' } };
}

/** Commits and asserts success; returns the commit Timestamp. */
export async function commitOk(store: TableStore, table: TableInfo, writes: readonly Write[]): Promise<bigint> {
  const result = await store.commit(table, writes);
  assert.ok(result.ok, `commit failed: ${show(result)}`);
  return result.timestamp;
}

// -- keys and ranges (Azure REST: understanding-the-table-service-data-model), independent of src/
// -----------------------------------------

export interface Keys {
  readonly partitionKey: string;
  readonly rowKey: string;
}

/** UTF-16 code-unit order, written out unit by unit rather than trusting `<` alone. */
export function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const difference = a.charCodeAt(i) - b.charCodeAt(i);
    if (difference !== 0) return difference < 0 ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

export function compareKeys(a: Keys, b: Keys): number {
  return compareText(a.partitionKey, b.partitionKey) || compareText(a.rowKey, b.rowKey);
}

/** Whether `keys` lies inside `range`; a bound without a RowKey is on the PartitionKey alone. */
export function inRange(keys: Keys, { lower, upper }: KeyRange): boolean {
  const side = (bound: KeyBound): number =>
    bound.rowKey === undefined
      ? compareText(keys.partitionKey, bound.partitionKey)
      : compareKeys(keys, { partitionKey: bound.partitionKey, rowKey: bound.rowKey });
  if (lower !== undefined && !(side(lower) > 0 || (lower.inclusive && side(lower) === 0))) return false;
  if (upper !== undefined && !(side(upper) < 0 || (upper.inclusive && side(upper) === 0))) return false;
  return true;
}

/** Whether `keys` lies strictly before the exclusive or inclusive bound `next` (rows already returned). */
function beforeBound(keys: Keys, next: KeyBound): boolean {
  return !inRange(keys, { lower: next });
}

export function keyText({ partitionKey, rowKey }: Keys): string {
  return JSON.stringify([partitionKey, rowKey]);
}

export function rangeText(range: KeyRange): string {
  const bound = (b: KeyBound | undefined, open: string) =>
    b === undefined
      ? open
      : `${b.inclusive ? 'incl' : 'excl'} ${JSON.stringify(b.rowKey === undefined ? [b.partitionKey] : [b.partitionKey, b.rowKey])}`;
  return `[${bound(range.lower, '-inf')} .. ${bound(range.upper, '+inf')}]`;
}

// -- entities compared exactly ---------------------------------------------------------------------

export function valueText(value: EdmValue): string {
  switch (value.type) {
    case 'Edm.Binary':
      return `Binary(${value.value.length}:${value.value.subarray(0, 16).toString('hex')}…)`;
    case 'Edm.Double':
      return `Double(${Object.is(value.value, -0) ? '-0' : String(value.value)})`;
    case 'Edm.String':
      return `String(${value.value.length}:${JSON.stringify(value.value.slice(0, 40))})`;
    default:
      return `${value.type.slice(4)}(${String(value.value)})`;
  }
}

function sameValue(a: EdmValue, b: EdmValue): boolean {
  if (a.type !== b.type) return false;
  if (a.type === 'Edm.Binary') return a.value.equals(b.value as Buffer);
  return Object.is(a.value, b.value);
}

export function propertiesText(properties: Properties): string {
  return [...properties].map(([name, value]) => `${name}=${valueText(value)}`).join(', ');
}

/** Same names in the same order (the client's, Entity.properties), each the same type and value. */
export function assertSameProperties(actual: Properties, expected: Properties, what: string): void {
  const same =
    actual.size === expected.size &&
    [...actual].every(([name, value], i) => {
      const [expectedName, expectedValue] = [...expected][i]!;
      return name === expectedName && sameValue(value, expectedValue);
    });
  if (!same)
    assert.fail(`${what}: properties\n  actual   ${propertiesText(actual)}\n  expected ${propertiesText(expected)}`);
}

/** What every entity a store hands out must satisfy whatever the operation. */
export function checkEntity(entity: Entity): Entity {
  assert.equal(typeof entity.timestamp, 'bigint', 'Timestamp is bigint ticks');
  if (entity.json !== undefined) {
    assert.equal(
      minimalJsonOf(entity.json),
      encodeMinimalProperties(entity.properties),
      `json of ${keyText(entity)} gives the minimal encoding`,
    );
  }
  return entity;
}

// -- scans ------------------------------------------------------------------------------------------

export interface ScanWalk {
  readonly entities: Entity[];
  readonly steps: number;
  readonly examined: number;
  readonly bytes: number;
}

/**
 * Every step of a scan from the range's start to its end: rows in key order, inside the range, at
 * most `limit` per step, each step's rows before its `next` (exclusive), every row once.
 */
export async function walk(
  store: TableStore,
  table: TableInfo,
  range: KeyRange,
  limit = 1000,
  conditions: readonly PropertyCondition[] = [],
  stepsMax = 100_000,
): Promise<ScanWalk> {
  const entities: Entity[] = [];
  let current = range;
  let examined = 0;
  let bytes = 0;
  for (let steps = 1; ; steps++) {
    assert.ok(steps <= stepsMax, `a scan of ${rangeText(range)} ends within ${stepsMax} steps`);
    const step = await store.scan(table, current, { conditions, limit });
    assert.ok(
      step.entities.length <= limit,
      `a step returns at most limit=${limit} entities (got ${step.entities.length})`,
    );
    assert.ok(
      Number.isInteger(step.examined) && step.examined >= step.entities.length,
      `examined ${step.examined} >= returned ${step.entities.length}`,
    );
    assert.ok(Number.isFinite(step.bytes) && step.bytes >= 0, 'bytes is a count');
    for (const entity of step.entities) {
      checkEntity(entity);
      assert.ok(inRange(entity, range), `${keyText(entity)} lies inside ${rangeText(range)}`);
      const previous = entities.at(-1);
      if (previous !== undefined)
        assert.ok(compareKeys(previous, entity) < 0, `key order: ${keyText(previous)} before ${keyText(entity)}`);
      entities.push(entity);
    }
    examined += step.examined;
    bytes += step.bytes;
    if (step.next === undefined) return { entities, steps, examined, bytes };
    const last = step.entities.at(-1);
    if (last !== undefined)
      assert.ok(beforeBound(last, step.next), `the step's last row ${keyText(last)} lies before its next bound`);
    current = { ...current, lower: step.next };
  }
}

/** Keys of a walk as text, for deepEqual with a message that shows them. */
export function keysOf(entities: readonly Keys[]): string[] {
  return entities.map(keyText);
}

// -- entity size by Azure REST: understanding-the-table-service-data-model, written out here (not src/domain's)
// ---------------------------

export function accountedBytes(partitionKey: string, rowKey: string, properties: Properties): number {
  let bytes = 4 + 2 * partitionKey.length + 2 * rowKey.length;
  for (const [name, value] of properties) {
    bytes += 8 + 2 * name.length;
    if (value.type === 'Edm.String') bytes += 2 * value.value.length + 4;
    else if (value.type === 'Edm.Binary') bytes += value.value.length + 4;
    else
      bytes += { 'Edm.Guid': 16, 'Edm.DateTime': 8, 'Edm.Double': 8, 'Edm.Int64': 8, 'Edm.Int32': 4, 'Edm.Boolean': 1 }[
        value.type
      ];
  }
  return bytes;
}

/** Deterministic bytes that do not compress (an engine's byte count must see them all). */
export function noiseBytes(length: number, seed = 1): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return bytes;
}

/**
 * `base` plus Binary filler properties `f00`, `f01`… so that the entity's accounted size is exactly
 * `targetBytes`.
 */
export function fillToBytes(partitionKey: string, rowKey: string, base: Properties, targetBytes: number): Properties {
  const filled = new Map(base);
  const fillerCost = (length: number) => 8 + 2 * 3 + 4 + length;
  for (let i = 0; ; i++) {
    const remaining = targetBytes - accountedBytes(partitionKey, rowKey, filled);
    if (remaining === 0) return filled;
    assert.ok(remaining >= fillerCost(0) && i < 100, `cannot fill ${remaining} bytes`);
    let length = Math.min(64 * 1024, remaining - fillerCost(0));
    // Leave nothing smaller than one more filler can take.
    const left = remaining - fillerCost(length);
    if (left > 0 && left < fillerCost(0)) length -= fillerCost(0);
    filled.set(`f${String(i).padStart(2, '0')}`, edm.binary(noiseBytes(length, i + 1)));
  }
}

/** JSON text of anything a store returns, bigints included (for messages). */
export function show(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
}
