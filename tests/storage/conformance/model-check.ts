// The model test (after TigerBeetle's auditor and SQLite's differential testing):
// seeded random command sequences run on the engine and on the model store, and every answer must
// agree. Timestamps are compared by their pattern, not their values: each engine commit timestamp
// is mapped to the model's for the same commit, and entities must carry corresponding versions.
//
// A failure names its seed; CERULEAN_MODEL_SEED=<seed> replays exactly that sequence.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EdmValue } from '../../../src/domain/edm.js';
import type { Entity, Properties } from '../../../src/domain/entity.js';
import type { KeyBound, KeyRange } from '../../../src/domain/keys.js';
import type {
  PropertyCondition,
  SettingKey,
  TableStore,
  TableInfo,
  Write,
  WriteCondition,
} from '../../../src/storage/table-store.js';
import { seededRandom, type Random } from '../../query/random.js';
import { ModelStore } from './model.js';
import { operators, randomCondition, randomValue, satisfies } from './random-values.js';
import {
  assertSameProperties,
  edm,
  fillToBytes,
  keysOf,
  keyText,
  noiseBytes,
  rangeText,
  show,
  walk,
  type StoreFactory,
  type StoreUnderTest,
} from './support.js';

export interface ModelCheckOptions {
  /** Random sequences per run (default 20). */
  readonly sequences?: number;
  /** Commands per sequence (default 200). */
  readonly commands?: number;
}

const seedVariable = 'CERULEAN_MODEL_SEED';

/** Registers the model test for one engine: one store, each sequence in accounts of its own. */
export function runModelCheck(engine: string, factory: StoreFactory, options: ModelCheckOptions = {}): void {
  const replay = process.env[seedVariable];
  const base = replay !== undefined ? Number(replay) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  const sequences = replay !== undefined ? 1 : (options.sequences ?? 20);
  const commands = options.commands ?? 200;
  describe(`model test: ${engine}`, () => {
    let subject: StoreUnderTest | undefined;
    before(async () => {
      subject = await factory();
    });
    after(async () => {
      await subject?.close();
    });
    test(`${sequences} random sequences of ${commands} commands agree with the model store`, async (t) => {
      t.diagnostic(`first seed ${base} (replay one sequence with ${seedVariable}=<seed>)`);
      for (let i = 0; i < sequences; i++) {
        const seed = (base + i) >>> 0;
        await runSequence(subject!.store, seed, commands);
      }
    });
  });
}

// -- one sequence -------------------------------------------------------------------------------------

const tableNames = ['Alpha', 'alpha', 'ALPHA', 'Beta', 'beta', 'Gamma'];
const partitionKeys = ['', 'a', 'b', '\u{1f600}', '\ue000'];
const rowKeys = ['', '1', '10', '2', 'x', '\uffff'];
const propertyNames = ['a', 'b', 'c', 'A', 'long'];

/** One sequence's view of both stores: its accounts, and every commit timestamp seen so far. */
class Sequence {
  readonly model = new ModelStore({ stepRowsMax: 3, stepExamineMax: 4 });
  /** Engine commit timestamp → the model's for the same commit. */
  readonly modelTimestamp = new Map<bigint, bigint>();
  /** Both timestamps of every commit so far, in commit order. */
  readonly versions: { readonly engine: bigint; readonly model: bigint }[] = [];
  readonly log: string[] = [];

  constructor(
    readonly engine: TableStore,
    readonly random: Random,
    readonly accounts: readonly string[],
  ) {}

  /** Records a pair of commit timestamps; the engine's must exceed every earlier one. */
  commitSeen(engine: bigint, model: bigint): void {
    const last = this.versions.at(-1);
    if (last !== undefined) assert.ok(engine > last.engine, `commit timestamps increase: ${engine} > ${last.engine}`);
    this.modelTimestamp.set(engine, model);
    this.versions.push({ engine, model });
  }

  /** Both stores hold the same entity, with corresponding versions. */
  assertSameEntity(engine: Entity | undefined, model: Entity | undefined, what: string): void {
    assert.equal(
      engine === undefined,
      model === undefined,
      `${what}: ${engine === undefined ? 'missing in the engine' : 'missing in the model'}`,
    );
    if (engine === undefined || model === undefined) return;
    assert.equal(keyText(engine), keyText(model), `${what}: keys`);
    assert.equal(
      this.modelTimestamp.get(engine.timestamp),
      model.timestamp,
      `${what}: version ${engine.timestamp} is the commit that wrote it`,
    );
    assertSameProperties(engine.properties, model.properties, what);
  }
}

async function runSequence(engine: TableStore, seed: number, commands: number): Promise<void> {
  const sequence = new Sequence(engine, seededRandom(seed), [`m${seed}a`, `m${seed}b`]);
  for (let i = 0; i < commands; i++) {
    try {
      await step(sequence);
    } catch (error) {
      const recent = sequence.log.slice(-8).join('\n    ');
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(
        `seed=${seed} (replay: ${seedVariable}=${seed}) failed at command ${i}:\n    ${recent}\n  ${message}`,
        { cause: error },
      );
    }
  }
}

async function step(s: Sequence): Promise<void> {
  const r = s.random.int(100);
  if (r < 6) return createTable(s);
  if (r < 9) return deleteTable(s);
  if (r < 13) return getTable(s);
  if (r < 17) return listTables(s);
  if (r < 62) return commit(s);
  if (r < 77) return getEntity(s);
  if (r < 92) return scan(s);
  return setting(s);
}

function someTable(s: Sequence): TableInfo {
  return { account: s.random.pick(s.accounts), name: s.random.pick(tableNames) };
}

async function createTable(s: Sequence): Promise<void> {
  const { account, name } = someTable(s);
  s.log.push(`createTable ${account} ${name}`);
  assert.equal(await s.engine.createTable(account, name), await s.model.createTable(account, name));
}

async function deleteTable(s: Sequence): Promise<void> {
  const { account, name } = someTable(s);
  s.log.push(`deleteTable ${account} ${name}`);
  assert.equal(await s.engine.deleteTable(account, name), await s.model.deleteTable(account, name));
}

async function getTable(s: Sequence): Promise<void> {
  const { account, name } = someTable(s);
  s.log.push(`getTable ${account} ${name}`);
  assert.deepEqual(await s.engine.getTable(account, name), await s.model.getTable(account, name));
}

async function listTables(s: Sequence): Promise<void> {
  const account = s.random.pick(s.accounts);
  const from = s.random.pick([undefined, '', 'a', 'alpha', 'b', 'beta', 'c', 'zz']);
  const limit = 1 + s.random.int(4);
  s.log.push(`listTables ${account} from ${String(from)} limit ${limit}`);
  assert.deepEqual(await s.engine.listTables(account, from, limit), await s.model.listTables(account, from, limit));
}

// -- commits ------------------------------------------------------------------------------------------

function randomProperties(s: Sequence): Properties {
  const { random } = s;
  const properties: Properties = new Map();
  if (random.chance(0.02)) {
    // Wide: a merge onto it may pass 252 properties.
    for (let i = 0; i < 249 + random.int(4); i++) properties.set(`w${i}`, edm.int32(i));
    return properties;
  }
  if (random.chance(0.01)) {
    // Heavy: a merge onto it may pass 1 MiB.
    return fillToBytes('', '', new Map(), 1024 * 1024 - 2048 - random.int(64));
  }
  for (let n = random.int(4); n > 0; n--) {
    const value: EdmValue =
      randomValue(random) ?? edm.string(noiseBytes(random.int(40), random.int(1000) + 1).toString('base64'));
    properties.set(random.pick(propertyNames), value);
  }
  return properties;
}

/** A condition; a version is mostly one the sequence has seen, sometimes one never issued. */
function randomWriteCondition(s: Sequence): { engine: WriteCondition; model: WriteCondition } {
  const { random } = s;
  const kind = random.pick(['none', 'none', 'absent', 'present', 'version', 'version'] as const);
  if (kind !== 'version') return { engine: { kind }, model: { kind } };
  const known =
    s.versions.length > 0 && random.chance(0.9) ? random.pick(s.versions.slice(-12)) : { engine: 1n, model: 1n };
  return { engine: { kind, timestamp: known.engine }, model: { kind, timestamp: known.model } };
}

async function commit(s: Sequence): Promise<void> {
  const { random } = s;
  const table = someTable(s);
  const partitionKey = random.pick(partitionKeys);
  const rows = shuffled(random, rowKeys).slice(0, random.chance(0.6) ? 1 : 2 + random.int(4));
  const engineWrites: Write[] = [];
  const modelWrites: Write[] = [];
  for (const rowKey of rows) {
    const condition = randomWriteCondition(s);
    const kind = random.pick(['put', 'put', 'merge', 'merge', 'delete'] as const);
    const action = kind === 'delete' ? ({ kind } as const) : { kind, properties: randomProperties(s) };
    engineWrites.push({ partitionKey, rowKey, condition: condition.engine, action });
    modelWrites.push({ partitionKey, rowKey, condition: condition.model, action });
  }
  s.log.push(
    `commit ${table.account} ${table.name} ${show(engineWrites.map((w) => [w.partitionKey, w.rowKey, w.condition, w.action.kind]))}`,
  );
  const engine = await s.engine.commit(table, engineWrites);
  const model = await s.model.commit(table, modelWrites);
  if (engine.ok && model.ok) {
    s.commitSeen(engine.timestamp, model.timestamp);
    return;
  }
  assert.deepEqual(engine, model, 'commit result');
}

function shuffled<T>(random: Random, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

// -- reads --------------------------------------------------------------------------------------------

async function getEntity(s: Sequence): Promise<void> {
  const table = someTable(s);
  const partitionKey = s.random.pick(partitionKeys);
  const rowKey = s.random.pick(rowKeys);
  s.log.push(`getEntity ${table.account} ${table.name} ${show([partitionKey, rowKey])}`);
  s.assertSameEntity(
    await s.engine.getEntity(table, partitionKey, rowKey),
    await s.model.getEntity(table, partitionKey, rowKey),
    'getEntity',
  );
}

function randomBound(s: Sequence): KeyBound | undefined {
  const { random } = s;
  if (random.chance(0.3)) return undefined;
  const partitionKey = random.pick([...partitionKeys, 'aa', '\uffff']);
  const inclusive = random.chance(0.5);
  return random.chance(0.5)
    ? { partitionKey, inclusive }
    : { partitionKey, rowKey: random.pick([...rowKeys, '0', '11']), inclusive };
}

/** Conditions for each side: the same, but a Timestamp literal is one commit's timestamp on each side. */
function randomConditions(s: Sequence): { engine: PropertyCondition[]; model: PropertyCondition[] } {
  const engine: PropertyCondition[] = [];
  const model: PropertyCondition[] = [];
  for (let n = s.random.chance(0.5) ? 0 : 1 + s.random.int(2); n > 0; n--) {
    if (s.versions.length > 0 && s.random.chance(0.2)) {
      const version = s.random.pick(s.versions);
      const operator = s.random.pick(operators);
      engine.push({ kind: 'timestamp', operator, value: version.engine });
      model.push({ kind: 'timestamp', operator, value: version.model });
      continue;
    }
    const condition = randomCondition(s.random, [], propertyNames);
    if (condition.kind === 'timestamp') continue;
    engine.push(condition);
    model.push(condition);
  }
  return { engine, model };
}

async function scan(s: Sequence): Promise<void> {
  const table = someTable(s);
  const lower = randomBound(s);
  const upper = randomBound(s);
  const range: KeyRange = { ...(lower && { lower }), ...(upper && { upper }) };
  const conditions = randomConditions(s);
  const limit = s.random.pick([1, 2, 5, 1000]);
  s.log.push(
    `scan ${table.account} ${table.name} ${rangeText(range)} limit ${limit} conditions ${show(conditions.engine)}`,
  );
  // Each side's rows that satisfy every condition: the store may keep more (a prefilter), never fewer.
  const exact = (rows: Entity[], cs: PropertyCondition[]) => rows.filter((row) => cs.every((c) => satisfies(row, c)));
  const engine = exact((await walk(s.engine, table, range, limit, conditions.engine)).entities, conditions.engine);
  const model = exact((await walk(s.model, table, range, limit, conditions.model)).entities, conditions.model);
  assert.deepEqual(keysOf(engine), keysOf(model), 'scan: the same rows');
  engine.forEach((row, i) => s.assertSameEntity(row, model[i], `scan row ${i}`));
}

// -- settings -----------------------------------------------------------------------------------------

async function setting(s: Sequence): Promise<void> {
  const { random } = s;
  const account = random.pick(s.accounts);
  const key: SettingKey = random.chance(0.5)
    ? { scope: 'account', name: random.pick(['cors', 'logging']) }
    : { scope: 'table', table: random.pick(tableNames) };
  if (random.chance(0.5)) {
    s.log.push(`getSetting ${account} ${show(key)}`);
    assert.equal(await s.engine.getSetting(account, key), await s.model.getSetting(account, key), 'getSetting');
    return;
  }
  const value = random.chance(0.25) ? undefined : `v${random.int(1000)}`;
  s.log.push(`putSettings ${account} ${show(key)} ${String(value)}`);
  const changes = [{ key, value }];
  assert.equal(
    await s.engine.putSettings(account, changes),
    await s.model.putSettings(account, changes),
    'putSettings',
  );
}
