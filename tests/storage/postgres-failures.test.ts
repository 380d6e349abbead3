// What a PostgreSQL failure answers (src/storage/postgres/failures.ts), without a database: a
// write whose connection failed once it was sent has an unknown outcome (500 InternalError, never
// the 503 that has a client retry it); one the driver refused to send, or the database refused,
// did nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { azureError, sentWriteFailure, WriteOutcomeUnknown } from '../../src/storage/postgres/failures.js';

function failure(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

function answer(error: unknown): string | undefined {
  const mapped = azureError(error);
  return mapped instanceof StorageError ? `${mapped.status} ${mapped.code}` : undefined;
}

describe('PostgreSQL failures', () => {
  test('a sent write whose connection failed: unknown outcome, 500 InternalError', () => {
    for (const lost of [
      failure('Connection terminated unexpectedly'),
      failure('read ECONNRESET', 'ECONNRESET'),
      failure('terminating connection due to administrator command', '57P01'),
      failure('Query read timeout'),
    ]) {
      const sent = sentWriteFailure(lost);
      assert.ok(sent instanceof WriteOutcomeUnknown, lost.message);
      assert.equal(answer(sent), '500 InternalError', lost.message);
    }
  });

  test('a write that certainly did not happen: as the failure itself says', () => {
    const notSent = failure('Client has encountered a connection error and is not queryable');
    assert.equal(sentWriteFailure(notSent), notSent);
    assert.equal(answer(notSent), '503 ServerBusy');
    assert.equal(
      answer(sentWriteFailure(failure('canceling statement due to lock timeout', '55P03'))),
      '503 ServerBusy',
    );
    assert.equal(
      answer(sentWriteFailure(failure('canceling statement due to statement timeout', '57014'))),
      '500 OperationTimedOut',
    );
    assert.equal(answer(failure('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED')), '503 ServerBusy');
    assert.equal(answer(failure('timeout exceeded when trying to connect')), '503 ServerBusy');
    assert.equal(answer(failure('could not extend file: No space left on device', '53100')), '503 ServerBusy');
  });

  test("a value the database refuses is the request's: 400 InvalidInput", () => {
    assert.equal(answer(failure('invalid byte sequence for encoding "UTF8": 0x00', '22021')), '400 InvalidInput');
  });

  test('a read failing on a lost connection is 503: it changed nothing', () => {
    assert.equal(answer(failure('Connection terminated unexpectedly')), '503 ServerBusy');
  });
});
