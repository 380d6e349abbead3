import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { integerParam, requiredParam } from '../../src/queue/params.js';

const code = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as StorageError).code;
  }
  return 'none';
};

describe('queue integer query parameters', () => {
  const range = { min: 1, max: 32 };
  test('absent: the fallback; in range: the value', () => {
    assert.equal(integerParam(new URLSearchParams(''), 'numofmessages', range, 1), 1);
    assert.equal(integerParam(new URLSearchParams('numofmessages=32'), 'numofmessages', range, 1), 32);
  });
  test('not an integer: InvalidQueryParameterValue; out of range: OutOfRangeQueryParameterValue', () => {
    for (const text of ['', 'x', '1.5', '0x10', '99999999999', ' 1']) {
      const query = new URLSearchParams({ numofmessages: text });
      assert.equal(
        code(() => integerParam(query, 'numofmessages', range, 1)),
        'InvalidQueryParameterValue',
        text,
      );
    }
    for (const text of ['0', '33', '-1']) {
      const query = new URLSearchParams({ numofmessages: text });
      assert.equal(
        code(() => integerParam(query, 'numofmessages', range, 1)),
        'OutOfRangeQueryParameterValue',
        text,
      );
    }
  });
  test('a required parameter that is missing: MissingRequiredQueryParameter', () => {
    assert.equal(
      code(() => requiredParam(new URLSearchParams(''), 'popreceipt')),
      'MissingRequiredQueryParameter',
    );
  });
});
