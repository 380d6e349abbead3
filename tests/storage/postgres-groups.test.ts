// Requests that arrive together at the PostgreSQL engine go as one statement per kind
// (storage/postgres/coalescer.ts). On a real PostgreSQL: each request of a burst gets the outcome
// it would get alone (written, exists, version mismatch, no entity, no table), whatever shares its
// statement, and the database ends as the requests say; two stores (two processes) racing the
// same If-Match merges still let exactly one win. The burst must really have been grouped:
// fewer statements than requests.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EdmValue } from '../../src/domain/edm.js';
import type { PostgresStore } from '../../src/storage/postgres/postgres-store.js';
import type { TableCommit, Write } from '../../src/storage/table-store.js';
import { postgresUnavailable, twoStoresForSuite } from '../helpers/postgres.js';

const account = 'devstoreaccount1';

function int32(value: number): EdmValue {
  return { type: 'Edm.Int32', value };
}

function put(rowKey: string, value: number, condition: Write['condition']): Write {
  return { partitionKey: 'p', rowKey, condition, action: { kind: 'put', properties: new Map([['v', int32(value)]]) } };
}

function merge(rowKey: string, value: number, condition: Write['condition']): Write {
  return {
    partitionKey: 'p',
    rowKey,
    condition,
    action: { kind: 'merge', properties: new Map([['m', int32(value)]]) },
  };
}

/** What a commit answered, as a word: 'ok' or the failure. */
function outcome({ table, result }: TableCommit): string {
  if (table === undefined) return 'no table';
  return result.ok ? 'ok' : result.failure;
}

/** Stored before the burst: s0..s39 in both tables; their versions by `table/rowKey`. */
async function storeBeforeBurst(store: PostgresStore): Promise<Map<string, bigint>> {
  for (const name of ['GroupA', 'GroupB']) assert.equal(await store.createTable(account, name), 'created');
  const stored = new Map<string, bigint>();
  for (const name of ['GroupA', 'GroupB']) {
    for (let i = 0; i < 40; i++) {
      const { result } = await store.commitToTable(account, name, [put(`s${i}`, i, { kind: 'none' })]);
      assert.ok(result.ok);
      stored.set(`${name}/s${i}`, result.timestamp);
    }
  }
  return stored;
}

/** What the burst wrote to one table, read by the other store. */
async function checkBurstWrote(store: PostgresStore, name: string): Promise<void> {
  const value = async (rowKey: string) => {
    const entity = (await store.getTableEntity(account, name, 'p', rowKey))?.entity;
    return (
      entity &&
      JSON.stringify(Object.fromEntries([...entity.properties].map(([property, { value }]) => [property, value])))
    );
  };
  for (let i = 0; i < 10; i++) {
    assert.equal(await value(`n${i}`), `{"v":${i}}`);
    assert.equal(await value(`s${i}`), `{"v":${i}}`);
    assert.equal(await value(`s${10 + i}`), `{"v":${100 + i}}`);
    assert.equal(await value(`u${i}`), `{"v":${100 + i}}`);
    assert.equal(await value(`s${20 + i}`), `{"v":${20 + i},"m":${i}}`);
    assert.equal(await value(`s${30 + i}`), `{"v":${30 + i}}`);
    assert.equal(await value(`m${i}`), undefined);
  }
  assert.match((await value('twice'))!, /^\{"v":[123]\}$/);
  assert.match((await value('thrice'))!, /^\{"v":[012]\}$/);
}

describe('grouped statements on PostgreSQL', { skip: postgresUnavailable() }, () => {
  const stores = twoStoresForSuite();
  let first: PostgresStore;
  let second: PostgresStore;
  before(() => ({ first, second } = stores));

  test('a burst of reads, inserts, upserts and merges: each request gets its own outcome, in fewer statements', async () => {
    const stored = await storeBeforeBurst(first);
    const before = first.groupCounts();

    // Each entry: the request, and the outcome it must have (a set where a race decides).
    const requests: { run: () => Promise<string>; expect: readonly string[]; tag?: string }[] = [];
    const commit = (name: string, write: Write, ...expect: string[]) =>
      requests.push({ run: async () => outcome(await first.commitToTable(account, name, [write])), expect });
    const read = (name: string, rowKey: string, expect: string) =>
      requests.push({
        run: async () => {
          const found = await first.getTableEntity(account, name, 'p', rowKey);
          if (found === undefined) return 'no table';
          return `${found.table.name}:${found.entity === undefined ? 'none' : JSON.stringify(found.entity.properties.get('v'))}`;
        },
        expect: [expect],
      });
    for (const name of ['GroupA', 'groupb']) {
      const stored_ = (i: number) => stored.get(`${name === 'groupb' ? 'GroupB' : name}/s${i}`)!;
      for (let i = 0; i < 10; i++) {
        commit(name, put(`n${i}`, i, { kind: 'absent' }), 'ok'); // new: inserted
        commit(name, put(`s${i}`, i, { kind: 'absent' }), 'exists'); // stored: exists
        commit(name, put(`s${10 + i}`, 100 + i, { kind: 'none' }), 'ok'); // upsert over a stored one
        commit(name, put(`u${i}`, 100 + i, { kind: 'none' }), 'ok'); // upsert of a new one
        commit(name, merge(`s${20 + i}`, i, { kind: 'version', timestamp: stored_(20 + i) }), 'ok');
        commit(name, merge(`s${30 + i}`, i, { kind: 'version', timestamp: stored_(30 + i) - 1n }), 'versionMismatch');
        commit(name, merge(`m${i}`, i, { kind: 'version', timestamp: 1n }), 'notFound');
        read(name, `s${i}`, `${name === 'groupb' ? 'GroupB' : name}:${JSON.stringify(int32(i))}`);
        read(name, `x${i}`, `${name === 'groupb' ? 'GroupB' : name}:none`);
      }
      // The same new key inserted three times in one burst: one wins; upserted three times: all do.
      for (let i = 1; i <= 3; i++) {
        commit(name, put('twice', i, { kind: 'absent' }), 'ok', 'exists');
        requests.at(-1)!.tag = `${name.toLowerCase()}/twice`;
      }
      for (let i = 0; i < 3; i++) commit(name, put('thrice', i, { kind: 'none' }), 'ok');
    }
    for (let i = 0; i < 5; i++) {
      commit('Missing', put(`n${i}`, i, { kind: 'absent' }), 'no table');
      commit('Missing', put(`n${i}`, i, { kind: 'none' }), 'no table');
      commit('Missing', merge(`n${i}`, i, { kind: 'version', timestamp: 1n }), 'no table');
      read('Missing', `n${i}`, 'no table');
    }
    const outcomes = await Promise.all(requests.map((request) => request.run()));
    for (const [index, request] of requests.entries()) {
      assert.ok(
        request.expect.includes(outcomes[index]!),
        `request ${index}: ${outcomes[index]} not in ${request.expect.join('|')}`,
      );
    }
    for (const name of ['GroupA', 'GroupB']) {
      const twice = requests.filter(
        (request, index) => request.tag === `${name.toLowerCase()}/twice` && outcomes[index] === 'ok',
      );
      assert.equal(twice.length, 1, 'exactly one of the three inserts of one key wins');
      await checkBurstWrote(second, name);
    }
    const after_ = first.groupCounts();
    for (const kind of ['reads', 'inserts', 'upserts', 'merges'] as const) {
      const statements = after_[kind].statements - before[kind].statements;
      const items = after_[kind].items - before[kind].items;
      assert.ok(items >= 20, `${kind}: ${items} requests went through groups`);
      assert.ok(statements < items, `${kind}: ${items} requests in ${statements} statements: none was grouped`);
    }
  });

  test('two stores race If-Match merges and inserts of the same keys in bursts: exactly one wins each', async () => {
    assert.equal(await first.createTable(account, 'GroupRace'), 'created');
    const versions: bigint[] = [];
    for (let i = 0; i < 30; i++) {
      const { result } = await first.commitToTable(account, 'GroupRace', [put(`r${i}`, i, { kind: 'none' })]);
      assert.ok(result.ok);
      versions.push(result.timestamp);
    }
    for (let round = 0; round < 3; round++) {
      const merges = await Promise.all(
        [first, second, first, second].flatMap((store, contender) =>
          versions.map((version, i) =>
            store.commitToTable(account, 'GroupRace', [
              merge(`r${i}`, contender, { kind: 'version', timestamp: version }),
            ]),
          ),
        ),
      );
      const inserts = await Promise.all(
        [first, second, second, first].flatMap((store, contender) =>
          versions.map((_, i) =>
            store.commitToTable(account, 'GroupRace', [put(`new${round}-${i}`, contender, { kind: 'absent' })]),
          ),
        ),
      );
      for (let i = 0; i < versions.length; i++) {
        const mergeWinners = [0, 1, 2, 3]
          .map((contender) => merges[contender * versions.length + i]!)
          .filter((merged) => merged.result.ok);
        assert.equal(mergeWinners.length, 1, `round ${round}, r${i}: ${mergeWinners.length} merges won`);
        for (let contender = 0; contender < 4; contender++) {
          const merged = merges[contender * versions.length + i]!;
          if (!merged.result.ok) assert.equal(merged.result.failure, 'versionMismatch');
        }
        const insertOutcomes = [0, 1, 2, 3].map((contender) => outcome(inserts[contender * versions.length + i]!));
        assert.deepEqual(
          insertOutcomes.filter((word) => word === 'ok').length,
          1,
          `round ${round}, new${round}-${i}: ${insertOutcomes.join()}`,
        );
        assert.ok(insertOutcomes.every((word) => word === 'ok' || word === 'exists'));
        const winner = mergeWinners[0]!.result;
        assert.ok(winner.ok && winner.timestamp > versions[i]!, 'a merge moves the version forward');
        const read = await second.getTableEntity(account, 'GroupRace', 'p', `r${i}`);
        assert.equal(read?.entity?.timestamp, winner.timestamp);
        versions[i] = winner.timestamp;
      }
    }
  });
});
