// Atomic commits (TableStore.commit): a batch whose write k fails applies nothing and reports index k
// with the failure, for every kind of failure; the same batch without its failing write then
// applies (so the other writes were valid all along); commits running together fail or succeed
// independently of each other.
import assert from 'node:assert/strict';
import type { TableStore, TableInfo, Write, WriteFailure } from '../../../../src/storage/table-store.js';
import type { CaseContext, ConformanceCase } from '../suite.js';
import { absent, commitOk, del, edm, fillToBytes, merge, present, props, put, version } from '../support.js';
import { assertSameSnapshot, read, snapshot } from './seed.js';

const partition = 'g';

interface Prepared {
  readonly table: TableInfo;
  /** Versions of e4: the one it was first written with, and its current one. */
  readonly staleVersion: bigint;
}

/** e0…e5 (e4 written twice), plus what the failing write of `failure` needs. */
async function prepare(context: CaseContext, failure: WriteFailure): Promise<Prepared> {
  const { store } = context;
  const table = await context.table();
  const writes = [0, 1, 2, 3, 4, 5].map((i) =>
    put(partition, `e${i}`, props({ v: edm.int32(i), s: edm.string(`e${i}`) })),
  );
  const staleVersion = await commitOk(store, table, writes);
  await commitOk(store, table, [put(partition, 'e4', props({ v: edm.int32(40) }))]);
  if (failure === 'entityTooLarge') {
    await commitOk(store, table, [put(partition, 'big', fillToBytes(partition, 'big', props(), 1024 * 1024 - 10))]);
  }
  if (failure === 'tooManyProperties') {
    const wide = props(Object.fromEntries(Array.from({ length: 252 }, (_, i) => [`p${i}`, edm.int32(i)])));
    await commitOk(store, table, [put(partition, 'wide', wide)]);
  }
  return { table, staleVersion };
}

/** Writes that apply on their own: an insert, a replace at the current version, a merge, a delete. */
async function validWrites(store: TableStore, table: TableInfo): Promise<Write[]> {
  const e1 = await read(store, table, partition, 'e1');
  assert.ok(e1);
  return [
    put(partition, 'n1', props({ v: edm.string('new') }), absent),
    put(partition, 'e1', props({ v: edm.int64(11n) }), version(e1.timestamp)),
    merge(partition, 'e2', props({ w: edm.boolean(true) }), present),
    del(partition, 'e3'),
    merge(partition, 'n2', props({ v: edm.double(2.5) })),
  ];
}

/** The write that fails with `failure` in a prepared table. */
function failingWrite(failure: WriteFailure, prepared: Prepared): Write {
  switch (failure) {
    case 'exists':
      return put(partition, 'e4', props(), absent);
    case 'notFound':
      return merge(partition, 'missing', props({ v: edm.int32(1) }), present);
    case 'versionMismatch':
      return put(partition, 'e4', props({ v: edm.int32(41) }), version(prepared.staleVersion));
    case 'entityTooLarge':
      // 8 + 2·1 + 8 accounted bytes on top of 1 MiB − 10.
      return merge(partition, 'big', props({ z: edm.double(1.5) }));
    case 'tooManyProperties':
      return merge(partition, 'wide', props({ extra: edm.int32(1) }));
    case 'tableNotFound':
      throw new Error('tableNotFound has a case of its own');
  }
}

/** Write k fails: the commit reports k and `failure`, and nothing changed. */
async function assertFailsAtIndex(
  context: CaseContext,
  failure: WriteFailure,
  variant?: (prepared: Prepared) => Write,
): Promise<void> {
  for (const index of [0, 2, 5]) {
    const prepared = await prepare(context, failure);
    const { store } = context;
    const others = await validWrites(store, prepared.table);
    const failing = variant === undefined ? failingWrite(failure, prepared) : variant(prepared);
    const batch = [...others.slice(0, index), failing, ...others.slice(index)];
    const before = await snapshot(store, prepared.table);
    const result = await store.commit(prepared.table, batch);
    assert.deepEqual(result, { ok: false, index, failure }, `the failing write at index ${index}`);
    assertSameSnapshot(await snapshot(store, prepared.table), before, `after the failed commit (index ${index})`);
    await commitOk(store, prepared.table, others);
  }
}

function failureCase(failure: WriteFailure, how: string, variant?: (prepared: Prepared) => Write): ConformanceCase {
  return {
    name: `a batch whose write k fails (${failure}: ${how}) applies nothing and reports index k`,
    run: (context) => assertFailsAtIndex(context, failure, variant),
  };
}

export const commitCases: readonly ConformanceCase[] = [
  failureCase('exists', 'insert over an entity'),
  failureCase('notFound', 'merge if present on a missing entity'),
  failureCase('notFound', 'version condition on a missing entity', (p) =>
    put(partition, 'missing', props(), version(p.staleVersion)),
  ),
  failureCase('notFound', 'delete of a missing entity', () => del(partition, 'missing')),
  failureCase('versionMismatch', 'replace at an older version'),
  failureCase('entityTooLarge', 'merge past 1 MiB'),
  failureCase('tooManyProperties', 'merge past 252 properties'),
  {
    name: 'a commit to a missing table fails with tableNotFound at index 0 and creates nothing',
    async run({ store, account }) {
      const missing = { account: account(), name: 'nosuchtable' };
      const result = await store.commit(missing, [put('p', 'a'), put('p', 'b'), del('p', 'c')]);
      assert.deepEqual(result, { ok: false, index: 0, failure: 'tableNotFound' });
      assert.equal(await store.getTable(missing.account, missing.name), undefined, 'no table appeared');
      assert.equal(await store.getEntity(missing, 'p', 'a'), undefined);
    },
  },
  {
    name: 'commits running together succeed or fail independently of each other',
    async run({ store, table }) {
      const t = await table();
      const count = 20;
      const existing = await commitOk(
        store,
        t,
        Array.from({ length: count }, (_, i) => put(partition, `e${i}`, props({ v: edm.int32(i) }))),
      );
      const results = await Promise.all(
        Array.from({ length: count }, (_, i) => [
          store.commit(t, [put(partition, `e${i}`, props({ v: edm.int32(-1) }), absent)]),
          store.commit(t, [put(`q${i}`, 'a', props({ v: edm.int32(i) })), put(`q${i}`, 'b', props(), absent)]),
          store.commit(t, [put(`x${i}`, 'a', props()), put(`x${i}`, 'b', props(), present)]),
        ]).flat(),
      );
      for (let i = 0; i < count; i++) {
        const [conflict, pair, halfMissing] = results.slice(3 * i, 3 * i + 3);
        assert.deepEqual(conflict, { ok: false, index: 0, failure: 'exists' });
        assert.ok(pair?.ok, `commit ${i} of two inserts applied`);
        assert.deepEqual(halfMissing, { ok: false, index: 1, failure: 'notFound' });
        const entity = await read(store, t, partition, `e${i}`);
        assert.equal(entity?.timestamp, existing, `e${i} unchanged`);
        assert.equal((await read(store, t, `q${i}`, 'b'))?.timestamp, pair.timestamp, `q${i} written`);
        assert.equal(await read(store, t, `x${i}`, 'a'), undefined, `x${i}/a not written`);
      }
    },
  },
];
