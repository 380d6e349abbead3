import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import { checkQueueName, metadataFromHeaders, sameMetadata } from '../../src/queue/names.js';

function refused(run: () => unknown, code: ErrorCode): void {
  assert.throws(run, (error: unknown) => error instanceof StorageError && error.code === code);
}

describe('queue names (naming-queues-and-metadata)', () => {
  test('lower-case letters, digits and single inner hyphens, 3 to 63 characters', () => {
    for (const name of ['abc', 'a-b-c', '123', 'q1-2x', 'a'.repeat(63)]) checkQueueName(name);
  });
  test('a name of the wrong length is OutOfRangeInput', () => {
    refused(() => checkQueueName('ab'), 'OutOfRangeInput');
    refused(() => checkQueueName('a'.repeat(64)), 'OutOfRangeInput');
  });
  test('other bad names are InvalidResourceName', () => {
    for (const name of ['Abc', '-abc', 'abc-', 'a--bc', 'ab_c', 'ab.c', 'abç', '']) {
      refused(() => checkQueueName(name), 'InvalidResourceName');
    }
  });
});

describe('queue metadata headers', () => {
  test('names keep their case as sent; other headers are ignored', () => {
    const metadata = metadataFromHeaders(['Host', 'x', 'x-ms-meta-Color', ' blue ', 'X-MS-META-_n2', '']);
    assert.deepEqual(
      [...metadata],
      [
        ['Color', 'blue'],
        ['_n2', ''],
      ],
    );
  });
  test('a name that is no C# identifier, or repeated in another case, is InvalidMetadata', () => {
    refused(() => metadataFromHeaders(['x-ms-meta-1abc', 'v']), 'InvalidMetadata');
    refused(() => metadataFromHeaders(['x-ms-meta-a-b', 'v']), 'InvalidMetadata');
    refused(() => metadataFromHeaders(['x-ms-meta-A', 'v', 'x-ms-meta-a', 'w']), 'InvalidMetadata');
  });
  test('more than 8 KiB of names and values is MetadataTooLarge', () => {
    metadataFromHeaders(['x-ms-meta-a', 'v'.repeat(8 * 1024 - 1)]);
    refused(() => metadataFromHeaders(['x-ms-meta-a', 'v'.repeat(8 * 1024)]), 'MetadataTooLarge');
  });
  test('same metadata: names compare without case, values exactly', () => {
    assert.ok(sameMetadata(new Map([['A', '1']]), new Map([['a', '1']])));
    assert.ok(!sameMetadata(new Map([['a', '1']]), new Map([['a', '2']])));
    assert.ok(!sameMetadata(new Map([['a', '1']]), new Map()));
  });
});
