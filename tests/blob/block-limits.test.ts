// The block count limits, over a fake store that already holds as many blocks as allowed (too many
// to make through a real server in a test): the next Put Block or Append Block is 409
// BlockCountExceedsLimit before a byte of its body is read.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BlobCall, BlobOf } from '../../src/blob/operations/access.js';
import { appendBlock } from '../../src/blob/operations/append.js';
import { putBlock } from '../../src/blob/operations/blocks.js';
import { encodeBlobState, type BlobType } from '../../src/blob/state/blob.js';
import { StorageError } from '../../src/errors.js';
import type { BlobRecord, Block } from '../../src/storage/blob-store.js';

const resource: BlobOf = { kind: 'blob', container: 'c', blob: 'b' };
const id = (n: number): string => Buffer.from(String(n).padStart(6, '0')).toString('base64');

function recordOf(blobType: BlobType, committedBlockCount: number): BlobRecord {
  const state = encodeBlobState({
    blobType,
    createdMs: 0,
    headers: {},
    metadata: [],
    lease: undefined,
    committedBlockCount,
  });
  return {
    container: 'c',
    name: 'b',
    snapshot: '',
    etag: '"0x1"',
    lastModifiedMs: 0,
    sizeBytes: committedBlockCount,
    state,
  };
}

/** A call over a store holding `record` and `staged`; reading the body fails the test. */
function callOver(record: BlobRecord | undefined, staged: Block[], query: string): BlobCall {
  const blobs = {
    getContainer: async () => ({ name: 'c', etag: '"0x1"', lastModifiedMs: 0, state: '{}' }),
    getBlob: async () => record,
    getBlocks: async () => ({ committed: [], staged }),
    blockSummary: async (_account: string, _container: string, _name: string, blockId: string) => ({
      stagedCount: staged.length,
      stagedHasId: staged.some((block) => block.blockId === blockId),
      sampleBlockId: staged[0]?.blockId,
    }),
    writeContent: async () => assert.fail('the body was read'),
  };
  return {
    services: { blobs, clock: { nowMs: () => 0 } },
    account: 'devstoreaccount1',
    query: new URLSearchParams(query),
    headers: { 'content-length': '1' },
    rawHeaders: [],
    body: Buffer.alloc(0),
    bodyStream: (async function* () {
      yield assert.fail('the body was read');
    })(),
  } as unknown as BlobCall;
}

const exceeded = (error: unknown) => error instanceof StorageError && error.code === 'BlockCountExceedsLimit';

describe('block count limits', () => {
  test('a 100,001st staged block is 409 BlockCountExceedsLimit; restaging one of the 100,000 is not refused for it', async () => {
    const staged = Array.from({ length: 100_000 }, (_, n) => ({
      blockId: id(n),
      content: { id: `x${n}`, sizeBytes: 1 },
    }));
    await assert.rejects(
      putBlock(callOver(undefined, staged, `blockid=${encodeURIComponent(id(100_000))}`), resource),
      exceeded,
    );
    await assert.rejects(
      putBlock(callOver(undefined, staged, `blockid=${encodeURIComponent(id(5))}`), resource),
      (error: unknown) => error instanceof assert.AssertionError && /the body was read/.test(error.message),
    );
  });

  test('a 50,001st appended block is 409 BlockCountExceedsLimit', async () => {
    await assert.rejects(
      appendBlock(callOver(recordOf('AppendBlob', 50_000), [], 'comp=appendblock'), resource),
      exceeded,
    );
  });
});
