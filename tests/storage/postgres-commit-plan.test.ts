// The decision part of a PostgreSQL transactional commit (src/storage/postgres/commit-plan.ts),
// without a database: which rows a batch inserts, updates and deletes given the stored versions
// its transaction locked, which write fails first and why, and the version the commit's
// Timestamp must follow.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../src/domain/edm.js';
import { customPropertiesMax } from '../../src/limits.js';
import { decodeKey, encodeKey, encodeProperties } from '../../src/storage/postgres/codec.js';
import { planCommit, storedKey, type StoredVersion } from '../../src/storage/postgres/commit-plan.js';
import type { Write } from '../../src/storage/table-store.js';

const int = (value: number): EdmValue => ({ type: 'Edm.Int32', value });

function put(rowKey: string, condition: Write['condition'] = { kind: 'none' }, value = 1): Write {
  return { partitionKey: 'p', rowKey, condition, action: { kind: 'put', properties: new Map([['v', int(value)]]) } };
}

function merge(
  rowKey: string,
  properties: [string, EdmValue][],
  condition: Write['condition'] = { kind: 'none' },
): Write {
  return { partitionKey: 'p', rowKey, condition, action: { kind: 'merge', properties: new Map(properties) } };
}

function remove(rowKey: string, condition: Write['condition'] = { kind: 'none' }): Write {
  return { partitionKey: 'p', rowKey, condition, action: { kind: 'delete' } };
}

/** Stored entities of partition 'p': row key, version, and properties (read only for merges). */
function stored(...entities: [string, bigint, Map<string, EdmValue>?][]): Map<string, StoredVersion> {
  const map = new Map<string, StoredVersion>();
  for (const [rowKey, ts, properties] of entities) {
    const encoded = properties === undefined ? undefined : encodeProperties(properties);
    map.set(storedKey(encodeKey('p'), encodeKey(rowKey)), { ts, doc: encoded?.doc ?? null, props: null });
  }
  return map;
}

const rowKeys = (rows: readonly { rk: Buffer }[]) => rows.map((row) => decodeKey(Buffer.from(row.rk)));

describe('PostgreSQL commit plan', () => {
  test('puts become inserts or updates by whether the entity is stored; deletes name stored entities', () => {
    const plan = planCommit(
      [put('new'), put('old', { kind: 'present' }), remove('gone')],
      stored(['old', 5n], ['gone', 9n]),
    );
    assert.ok(plan.ok);
    assert.deepEqual(rowKeys(plan.inserts), ['new']);
    assert.deepEqual(rowKeys(plan.updates), ['old']);
    assert.deepEqual(rowKeys(plan.deletes), ['gone']);
    assert.equal(plan.newestReplacedTs, 9n, 'the Timestamp follows every version the commit replaces');
    assert.deepEqual(plan.inserts[0]!.properties, encodeProperties(new Map([['v', int(1)]])));
  });

  test('the first write whose condition fails is the answer, with its index', () => {
    const entities = stored(['a', 3n]);
    assert.deepEqual(planCommit([put('x'), put('a', { kind: 'absent' })], entities), {
      ok: false,
      index: 1,
      failure: 'exists',
    });
    assert.deepEqual(planCommit([put('x', { kind: 'present' }), put('a', { kind: 'absent' })], entities), {
      ok: false,
      index: 0,
      failure: 'notFound',
    });
    const stale = put('a', { kind: 'version', timestamp: 2n });
    assert.deepEqual(planCommit([stale], entities), { ok: false, index: 0, failure: 'versionMismatch' });
    assert.ok(planCommit([put('a', { kind: 'version', timestamp: 3n })], entities).ok);
  });

  test('an unconditional delete of an absent entity fails notFound', () => {
    assert.deepEqual(planCommit([put('x'), remove('missing')], stored()), { ok: false, index: 1, failure: 'notFound' });
  });

  test('a merge into a stored entity keeps its members and order; into nothing it is an insert', () => {
    const current = new Map([
      ['b', int(1)],
      ['a', int(2)],
    ]);
    const plan = planCommit(
      [
        merge('m', [
          ['c', int(3)],
          ['a', int(9)],
        ]),
        merge('n', [['z', int(0)]]),
      ],
      stored(['m', 7n, current]),
    );
    assert.ok(plan.ok);
    assert.deepEqual(rowKeys(plan.updates), ['m']);
    const merged = new Map([
      ['b', int(1)],
      ['a', int(9)],
      ['c', int(3)],
    ]);
    assert.deepEqual(plan.updates[0]!.properties, encodeProperties(merged));
    assert.deepEqual(rowKeys(plan.inserts), ['n']);
  });

  test('a merge that would pass the property limit fails tooManyProperties', () => {
    const full = new Map(
      Array.from({ length: customPropertiesMax }, (_, i) => [`p${i}`, int(i)] as [string, EdmValue]),
    );
    const plan = planCommit([merge('m', [['extra', int(1)]])], stored(['m', 1n, full]));
    assert.deepEqual(plan, { ok: false, index: 0, failure: 'tooManyProperties' });
  });
});
