// The coalescer on its own (storage/postgres/coalescer.ts): which requests share a statement,
// how many statements run at once, and that a failed statement fails no request for another's
// sake. The statements here are functions that record what they were given; the database side
// is tested in postgres-groups.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { Coalescer } from '../../src/storage/postgres/coalescer.js';
import { isStatementFailure } from '../../src/storage/postgres/failures.js';

/** A statement that answers when told to: the groups it was given, and a way to finish each. */
function heldStatements<Item>() {
  const groups: { items: readonly Item[]; finish: (outcome?: Error) => void }[] = [];
  let running = 0;
  let runningMost = 0;
  const run = (items: readonly Item[]) =>
    new Promise<string[]>((resolve, reject) => {
      running++;
      runningMost = Math.max(runningMost, running);
      groups.push({
        items,
        finish: (error) => {
          running--;
          if (error) reject(error);
          else resolve(items.map((item) => `done ${String(item)}`));
        },
      });
    });
  return { groups, run, runningMost: () => runningMost };
}

test('an idle coalescer sends at once; requests meanwhile go together, at most itemsMax, at most runningMax statements at once', async () => {
  const statements = heldStatements<number>();
  const coalescer = new Coalescer<number, string>({ run: statements.run, runningMax: 2, itemsMax: 3 });
  const outcomes = Array.from({ length: 9 }, (_, item) => coalescer.submit(item));
  await turn();
  assert.deepEqual(
    statements.groups.map((group) => group.items),
    [[0], [1]],
  );
  statements.groups[0]!.finish();
  await turn();
  assert.deepEqual(
    statements.groups.map((group) => group.items),
    [[0], [1], [2, 3, 4]],
  );
  statements.groups[1]!.finish();
  statements.groups[2]!.finish();
  await turn();
  assert.deepEqual(statements.groups.map((group) => group.items).slice(3), [[5, 6, 7], [8]]);
  statements.groups[3]!.finish();
  statements.groups[4]!.finish();
  assert.deepEqual(
    await Promise.all(outcomes),
    Array.from({ length: 9 }, (_, item) => `done ${item}`),
  );
  assert.equal(statements.runningMost(), 2);
  assert.deepEqual([coalescer.statements, coalescer.items], [5, 9]);
});

test('items with one key never share a statement, and keep their order', async () => {
  const statements = heldStatements<string>();
  const coalescer = new Coalescer<string, string>({
    run: statements.run,
    runningMax: 1,
    itemsMax: 10,
    keyOf: (item) => item[0]!,
  });
  const outcomes = ['x', 'a1', 'a2', 'b1', 'a3', 'b2', 'c1'].map((item) => coalescer.submit(item));
  for (let group = 0; group < 4; group++) {
    await turn();
    statements.groups[group]!.finish();
  }
  await Promise.all(outcomes);
  assert.deepEqual(
    statements.groups.map((group) => group.items),
    [['x'], ['a1', 'b1', 'c1'], ['a2', 'b2'], ['a3']],
  );
});

test('a failed statement of many reruns each item alone: only the item that fails alone fails', async () => {
  const ran: number[][] = [];
  const coalescer = new Coalescer<number, number>({
    run: async (items) => {
      ran.push([...items]);
      await turn();
      if (items.includes(3)) throw new Error(`statement with 3`);
      return items.map((item) => item * 10);
    },
    runningMax: 1,
    itemsMax: 10,
  });
  const outcomes = await Promise.allSettled([1, 2, 3, 4, 5].map((item) => coalescer.submit(item)));
  assert.deepEqual(
    outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)),
    [10, 20, 'statement with 3', 40, 50],
  );
  // 1 alone; 2-5 together, which failed; then 2, 3, 4, 5 alone.
  assert.deepEqual(ran, [[1], [2, 3, 4, 5], [2], [3], [4], [5]]);
});

test('a statement that failed for all its items (rerunAlone says no) fails each of them at once, without reruns', async () => {
  let statements = 0;
  const coalescer = new Coalescer<number, number>({
    run: async () => {
      statements++;
      await turn();
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    },
    runningMax: 1,
    itemsMax: 10,
    rerunAlone: (error) => (error as { code?: string }).code !== 'ECONNREFUSED',
  });
  const outcomes = await Promise.allSettled([1, 2, 3, 4].map((item) => coalescer.submit(item)));
  assert.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['rejected', 'rejected', 'rejected', 'rejected'],
  );
  assert.equal(statements, 2, '1 alone, then 2-4 together; none again');
});

test('which database failures a group reruns alone: the statement refused, not the database out of reach', () => {
  const failure = (code: string, message = 'failed') => Object.assign(new Error(message), { code });
  for (const code of ['23503', '40P01', '40001', '55P03', '22P02'])
    assert.equal(isStatementFailure(failure(code)), true, code);
  for (const code of ['ECONNREFUSED', '57P01', '53300', '57014', '08006'])
    assert.equal(isStatementFailure(failure(code)), false, code);
  assert.equal(isStatementFailure(new Error('timeout exceeded when trying to connect')), false);
  assert.equal(isStatementFailure(new Error('store is closed')), false);
});
