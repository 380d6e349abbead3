// The compare-and-swap retry every blob and container write shares: a lost race is tried again,
// any other answer or error ends it, and contention that outlasts the bound is 503 ServerBusy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { casAttemptsMax } from '../../src/blob/limits.js';
import { raced, retryWhileRaced } from '../../src/blob/operations/cas-retry.js';

/** Runs the retry over `attempt` (given the attempt's number, from 1); the outcome and the attempts made. */
async function retried<T>(attempt: (made: number) => T | typeof raced): Promise<{ outcome: unknown; made: number }> {
  let made = 0;
  try {
    return { outcome: await retryWhileRaced('The blob kept changing.', async () => attempt(++made)), made };
  } catch (error) {
    return { outcome: error, made };
  }
}

test('a lost race is read and decided again; the first other answer is the result', async () => {
  assert.deepEqual(await retried((made) => (made < 3 ? raced : 'written')), { outcome: 'written', made: 3 });
});

test('an error an attempt throws ends the retries at once', async () => {
  const { outcome, made } = await retried(() => {
    throw new StorageError('ConditionNotMet');
  });
  assert.ok(outcome instanceof StorageError && outcome.code === 'ConditionNotMet');
  assert.equal(made, 1);
});

test('losing every race up to the bound is 503 ServerBusy with the operation message', async () => {
  const { outcome, made } = await retried(() => raced);
  assert.ok(outcome instanceof StorageError && outcome.code === 'ServerBusy' && outcome.status === 503);
  assert.equal(outcome.message, 'The blob kept changing.');
  assert.equal(made, casAttemptsMax);
});
