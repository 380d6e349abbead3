// Write conditions, merges and their limits, and exact values (TableStore.commit, TableStore.getEntity,
// TableStore.scan): every condition against a present and a missing entity for every action; a merge
// keeps other properties and may change types; a merge may not grow an entity past 252 properties
// or 1 MiB by Azure REST: understanding-the-table-service-data-model accounting, while a put of exactly the limits
// passes; every EDM
// value comes back exactly, and json, when a store gives it, gives the minimal encoding.
import assert from 'node:assert/strict';
import type { Properties } from '../../../../src/domain/entity.js';
import { dateTimeTicksMax, dateTimeTicksMin, int64Max, int64Min } from '../../../../src/domain/edm.js';
import type {
  TableStore,
  TableInfo,
  Write,
  WriteCondition,
  WriteFailure,
} from '../../../../src/storage/table-store.js';
import type { ConformanceCase } from '../suite.js';
import {
  absent,
  accountedBytes,
  assertSameProperties,
  commitOk,
  del,
  edm,
  fillToBytes,
  merge,
  noiseBytes,
  none,
  present,
  props,
  put,
  show,
  version,
  walk,
} from '../support.js';
import { read } from './seed.js';

const MiB = 1024 * 1024;

// -- every condition × action × (present, missing) ------------------------------------------------

type ConditionName = 'none' | 'absent' | 'present' | 'current version' | 'older version';
type ActionName = 'put' | 'merge' | 'delete';

/** The contract's outcome, stated independently of src/storage/write.ts. */
function expectedOutcome(stored: boolean, condition: ConditionName, action: ActionName): WriteFailure | 'applied' {
  if (condition === 'absent' && stored) return 'exists';
  if (condition === 'present' && !stored) return 'notFound';
  if (condition === 'current version' || condition === 'older version') {
    if (!stored) return 'notFound';
    if (condition === 'older version') return 'versionMismatch';
  }
  if (action === 'delete' && !stored) return 'notFound';
  return 'applied';
}

const oldProperties = props({ a: edm.int32(1), b: edm.string('keep') });
const newProperties = props({ a: edm.string('one'), c: edm.boolean(false) });

/**
 * The entity 'e' written twice (an older and a current version), or written and deleted (both
 * versions then name an entity that is gone).
 */
async function entityIn(
  store: TableStore,
  table: TableInfo,
  stored: boolean,
): Promise<{ older: bigint; current: bigint }> {
  const older = await commitOk(store, table, [put('p', 'e', props({ a: edm.int32(0) }))]);
  const current = await commitOk(store, table, [put('p', 'e', oldProperties)]);
  if (!stored) await commitOk(store, table, [del('p', 'e')]);
  return { older, current };
}

function conditionCase(conditionName: ConditionName, actionName: ActionName): ConformanceCase {
  return {
    name: `condition ${conditionName} with ${actionName}, on a present and on a missing entity`,
    async run({ store, table }) {
      for (const stored of [true, false]) {
        const t = await table();
        const versions = await entityIn(store, t, stored);
        const condition: WriteCondition = {
          none,
          absent,
          present,
          'current version': version(versions.current),
          'older version': version(versions.older),
        }[conditionName];
        const write: Write =
          actionName === 'put'
            ? put('p', 'e', newProperties, condition)
            : actionName === 'merge'
              ? merge('p', 'e', newProperties, condition)
              : del('p', 'e', condition);
        const before = await read(store, t, 'p', 'e');
        const result = await store.commit(t, [write]);
        const expected = expectedOutcome(stored, conditionName, actionName);
        const what = `${actionName} if ${conditionName} on a ${stored ? 'present' : 'missing'} entity`;
        if (expected !== 'applied') {
          assert.deepEqual(result, { ok: false, index: 0, failure: expected }, what);
          const after = await read(store, t, 'p', 'e');
          assert.equal(after?.timestamp, before?.timestamp, `${what}: unchanged`);
          continue;
        }
        assert.ok(result.ok, `${what}: ${show(result)}`);
        const after = await read(store, t, 'p', 'e');
        if (actionName === 'delete') {
          assert.equal(after, undefined, `${what}: gone`);
          continue;
        }
        assert.equal(after?.timestamp, result.timestamp, `${what}: the new version`);
        const expectedProperties =
          actionName === 'merge' && stored
            ? props({ a: edm.string('one'), b: edm.string('keep'), c: edm.boolean(false) })
            : newProperties;
        assertSameProperties(after.properties, expectedProperties, what);
      }
    },
  };
}

const conditionCases = (['none', 'absent', 'present', 'current version', 'older version'] as const).flatMap((c) =>
  (['put', 'merge', 'delete'] as const).map((a) => conditionCase(c, a)),
);

// -- merges and limits ----------------------------------------------------------------------------

function wide(count: number, prefix = 'p'): Properties {
  return props(
    Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`${prefix}${String(i).padStart(3, '0')}`, edm.int32(i)]),
    ),
  );
}

/** The merge fails with `failure` at index 1 of a batch, and the entity keeps its version. */
async function assertMergeFails(
  store: TableStore,
  t: TableInfo,
  rowKey: string,
  incoming: Properties,
  failure: WriteFailure,
): Promise<void> {
  const before = await read(store, t, 'p', rowKey);
  const result = await store.commit(t, [put('p', 'other'), merge('p', rowKey, incoming)]);
  assert.deepEqual(result, { ok: false, index: 1, failure }, `merge of ${incoming.size} properties into ${rowKey}`);
  assert.equal((await read(store, t, 'p', rowKey))?.timestamp, before?.timestamp, 'unchanged');
  assert.equal(await read(store, t, 'p', 'other'), undefined, 'the batch applied nothing');
}

const mergeCases: readonly ConformanceCase[] = [
  {
    name: 'merge keeps other properties, overwrites names with new types, and keeps names that differ in case apart',
    async run({ store, table }) {
      const t = await table();
      await commitOk(store, t, [put('p', 'e', props({ a: edm.int32(1), b: edm.int64(2n), c: edm.string('c') }))]);
      await commitOk(store, t, [merge('p', 'e', props({ b: edm.string('two'), A: edm.double(1.5) }), present)]);
      const entity = await read(store, t, 'p', 'e');
      assert.ok(entity);
      assertSameProperties(
        entity.properties,
        props({ a: edm.int32(1), b: edm.string('two'), c: edm.string('c'), A: edm.double(1.5) }),
        'merged',
      );
      await commitOk(store, t, [merge('p', 'e', props())]);
      assertSameProperties(
        (await read(store, t, 'p', 'e'))!.properties,
        entity.properties,
        'an empty merge changes no property',
      );
    },
  },
  {
    name: 'property order: a put keeps the client order, a merge keeps places and appends new names',
    async run({ store, table }) {
      const t = await table();
      const order = props({ zeta: edm.int32(1), Alpha: edm.int32(2), mid: edm.int32(3), a: edm.int32(4) });
      await commitOk(store, t, [put('p', 'e', order)]);
      assert.deepEqual([...(await read(store, t, 'p', 'e'))!.properties.keys()], ['zeta', 'Alpha', 'mid', 'a']);
      await commitOk(store, t, [merge('p', 'e', props({ new: edm.int32(5), mid: edm.string('x'), B: edm.int32(6) }))]);
      assert.deepEqual(
        [...(await read(store, t, 'p', 'e'))!.properties.keys()],
        ['zeta', 'Alpha', 'mid', 'a', 'new', 'B'],
      );
      const scanned = (await walk(store, t, {})).entities[0];
      assert.deepEqual(
        [...scanned!.properties.keys()],
        ['zeta', 'Alpha', 'mid', 'a', 'new', 'B'],
        'a scan reads the same order',
      );
    },
  },
  {
    name: 'merge limit: up to 252 custom properties pass, a merge to 253 fails tooManyProperties',
    async run({ store, table }) {
      const t = await table();
      await commitOk(store, t, [put('p', 'full', wide(252)), put('p', 'almost', wide(250))]);
      assertSameProperties((await read(store, t, 'p', 'full'))!.properties, wide(252), 'a put of 252 properties');
      await commitOk(store, t, [merge('p', 'full', props({ p000: edm.string('overwritten') }))]);
      await commitOk(store, t, [
        merge('p', 'almost', props({ p000: edm.string('x'), q0: edm.int32(0), q1: edm.int32(1) })),
      ]);
      assert.equal((await read(store, t, 'p', 'almost'))!.properties.size, 252);
      await assertMergeFails(store, t, 'full', props({ extra: edm.int32(1) }), 'tooManyProperties');
      await assertMergeFails(store, t, 'almost', props({ extra: edm.int32(1) }), 'tooManyProperties');
    },
  },
  {
    name: 'merge limit: an entity of exactly 1 MiB passes, a merge one byte past it fails entityTooLarge',
    async run({ store, table }) {
      const t = await table();
      const exact = fillToBytes('p', 'exact', props({ n: edm.int32(1) }), MiB);
      assert.equal(accountedBytes('p', 'exact', exact), MiB);
      await commitOk(store, t, [put('p', 'exact', exact)]);
      assertSameProperties((await read(store, t, 'p', 'exact'))!.properties, exact, 'a put of exactly 1 MiB');
      // Same-size replacements keep it at 1 MiB: Int32 → Int32, and a Boolean (1) in place of … nothing more.
      await commitOk(store, t, [merge('p', 'exact', props({ n: edm.int32(2) }))]);
      await assertMergeFails(store, t, 'exact', props({ n: edm.int64(2n) }), 'entityTooLarge'); // 4 → 8 bytes
      await assertMergeFails(store, t, 'exact', props({ b: edm.boolean(true) }), 'entityTooLarge'); // 8 + 2 + 1 bytes

      const lessOne = fillToBytes('p', 'short', props(), MiB - 11);
      await commitOk(store, t, [put('p', 'short', lessOne)]);
      await commitOk(store, t, [merge('p', 'short', props({ b: edm.boolean(true) }))]); // exactly 1 MiB now
      assert.equal(accountedBytes('p', 'short', (await read(store, t, 'p', 'short'))!.properties), MiB);
    },
  },
  {
    name: 'merge limit counts the merged entity: replacing a large value with a small one passes',
    async run({ store, table }) {
      const t = await table();
      const exact = fillToBytes('p', 'e', props(), MiB);
      await commitOk(store, t, [put('p', 'e', exact)]);
      const firstFiller = [...exact.keys()][0]!;
      await commitOk(store, t, [
        merge('p', 'e', props({ [firstFiller]: edm.boolean(false), more: edm.binary(noiseBytes(1000)) })),
      ]);
      const merged = (await read(store, t, 'p', 'e'))!.properties;
      assert.deepEqual(merged.get(firstFiller), edm.boolean(false));
      assert.ok(accountedBytes('p', 'e', merged) < MiB);
    },
  },
];

// -- exact values -----------------------------------------------------------------------------------

/**
 * Every EDM type at its edges (Azure REST: payload-format-for-table-service-operations), and strings JSON and SQL get
 * wrong.
 */
function edgeValues(): Properties {
  return props({
    int32Min: edm.int32(-2147483648),
    int32Max: edm.int32(2147483647),
    int32Zero: edm.int32(0),
    int64Min: edm.int64(int64Min),
    int64Max: edm.int64(int64Max),
    int64Beyond53: edm.int64(2n ** 53n + 1n),
    int64Small: edm.int64(-1n),
    doubleNaN: edm.double(NaN),
    doubleInf: edm.double(Infinity),
    doubleNegInf: edm.double(-Infinity),
    doubleNegZero: edm.double(-0),
    doubleZero: edm.double(0),
    doubleIntegral: edm.double(3),
    doubleBig: edm.double(1e308),
    doubleMax: edm.double(Number.MAX_VALUE),
    doubleTiny: edm.double(5e-324),
    doubleNegTiny: edm.double(-5e-324),
    doubleFraction: edm.double(0.1),
    double2p53: edm.double(2 ** 53),
    boolTrue: edm.boolean(true),
    boolFalse: edm.boolean(false),
    dateMin: edm.dateTime(dateTimeTicksMin),
    dateMax: edm.dateTime(dateTimeTicksMax),
    dateEpochMinusTick: edm.dateTime(-1n),
    dateEpoch: edm.dateTime(0n),
    dateTick: edm.dateTime(17_040_672_001_234_567n),
    guid: edm.guid('c9da6455-213d-42c9-9a79-3e9149a57833'),
    guidZero: edm.guid('00000000-0000-0000-0000-000000000000'),
    binaryEmpty: edm.binary(Buffer.alloc(0)),
    binary64KiB: edm.binary(noiseBytes(64 * 1024, 3)),
    stringEmpty: edm.string(''),
    stringAstral: edm.string('\u{1f600} \u{10ffff}\ue000'),
    stringLoneSurrogates: edm.string('\ud800 \udfff'),
    stringControls: edm.string('\u0000\u0001\u001f\u007f\t\n\r'),
    stringJson: edm.string('"quoted" \\ back \u2028\u2029 </script>'),
    stringSql: edm.string("it's -- ; DROP TABLE entities; %_"),
    stringLooksTyped: edm.string('123'),
    stringLooksNaN: edm.string('NaN'),
    stringLooksAnnotated: edm.string('"Edm.Double"'),
    stringMax: edm.string(`${'s'.repeat(32 * 1024 - 2)}\u{1f600}`), // 32 Ki units
    ['n'.repeat(255)]: edm.string('a 255-unit name'),
    élan: edm.string('a non-ASCII name'),
    Case: edm.int32(1),
    case: edm.int32(2),
  });
}

/** Values whose minimal encoding is exact text: a store may splice it (Entity.json). */
function minimalValues(): Properties {
  return props({
    s: edm.string('\u{1f600}"\\\u2028\u0000'),
    i: edm.int32(-7),
    l: edm.int64(int64Min),
    d: edm.double(0.30000000000000004),
    e: edm.double(1.5e300),
    t: edm.dateTime(17_040_672_001_234_500n),
    g: edm.guid('c9da6455-213d-42c9-9a79-3e9149a57833'),
    b: edm.binary(Buffer.from([0, 255, 1])),
    f: edm.boolean(false),
  });
}

async function assertRoundTrips(
  store: TableStore,
  t: TableInfo,
  rowKey: string,
  properties: Properties,
): Promise<void> {
  await commitOk(store, t, [put('p', rowKey, properties)]);
  assertSameProperties((await read(store, t, 'p', rowKey))!.properties, properties, `getEntity ${rowKey}`);
  const only = {
    lower: { partitionKey: 'p', rowKey, inclusive: true },
    upper: { partitionKey: 'p', rowKey, inclusive: true },
  };
  // Unconditional and conditional scans may take different paths through an engine.
  for (const conditions of [[], [{ kind: 'timestamp', operator: 'ge', value: 0n } as const]]) {
    const [scanned] = (await walk(store, t, only, 10, conditions)).entities;
    assert.ok(scanned, `scan of ${rowKey} (${conditions.length} conditions)`);
    assertSameProperties(scanned.properties, properties, `scan of ${rowKey} (${conditions.length} conditions)`);
  }
}

const valueRoundTripCases: readonly ConformanceCase[] = [
  {
    name: 'every EDM value round-trips exactly (Int64 and DateTime extremes, NaN, ±Infinity, -0, 64 KiB Binary, astral and empty strings)',
    async run({ store, table }) {
      const t = await table();
      await assertRoundTrips(store, t, 'edges', edgeValues());
      await assertRoundTrips(store, t, 'empty', props());
      // Each alone too: a value must not depend on its neighbours.
      for (const [name, value] of edgeValues())
        await assertRoundTrips(store, t, `one-${name.slice(0, 40)}`, props({ [name]: value }));
    },
  },
  {
    name: 'json, where a store gives it, gives the minimal-metadata encoding of the properties',
    async run({ store, table }) {
      const t = await table();
      // read() and walk() check every entity they see (checkEntity); these are the hard cases.
      await assertRoundTrips(store, t, 'minimal', minimalValues());
      await assertRoundTrips(store, t, 'edges', edgeValues());
      await commitOk(store, t, [merge('p', 'minimal', props({ d2: edm.double(2), n: edm.double(NaN) }))]);
      await read(store, t, 'p', 'minimal');
      await walk(store, t, {});
    },
  },
];

export const valueCases: readonly ConformanceCase[] = [...conditionCases, ...mergeCases, ...valueRoundTripCases];
