// The compare-and-swap retry every blob and container write shares: a lost race is tried again,
// any other answer or error ends it, and contention that outlasts the bound is 503 ServerBusy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TableError } from '../../src/errors.js';
import { casAttemptsMax } from '../../src/blob/blob-limits.js';
import { raced, retryWhileRaced } from '../../src/blob/cas-retry.js';

test('a lost race is read and decided again; the first other answer is the result', async () => {
  let attempts = 0;
  const answer = await retryWhileRaced('busy', async () => (++attempts < 3 ? raced : 'written'));
  assert.equal(answer, 'written');
  assert.equal(attempts, 3);
});

test('an error an attempt throws ends the retries at once', async () => {
  let attempts = 0;
  await assert.rejects(
    retryWhileRaced('busy', async () => {
      attempts++;
      throw new TableError('ConditionNotMet');
    }),
    (error: unknown) => error instanceof TableError && error.code === 'ConditionNotMet',
  );
  assert.equal(attempts, 1);
});

test('losing every race up to the bound is 503 ServerBusy with the operation message', async () => {
  let attempts = 0;
  await assert.rejects(
    retryWhileRaced('The blob kept changing.', async () => {
      attempts++;
      return raced;
    }),
    (error: unknown) =>
      error instanceof TableError &&
      error.code === 'ServerBusy' &&
      error.status === 503 &&
      error.message === 'The blob kept changing.',
  );
  assert.equal(attempts, casAttemptsMax);
});
