// List Blobs over a store that counts what it hands out: a virtual folder counts as one result and
// is stepped over with one query, so listing past a folder of thousands of blobs reads a handful of
// rows, not the folder.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BlobCall } from '../../src/blob/operations/access.js';
import { encodeBlobState } from '../../src/blob/state/blob.js';
import { listBlobs } from '../../src/blob/operations/list-blobs.js';
import { parseXml, type XmlElement } from '../../src/wire/xml.js';
import type { BlobRecord, ListBlobsOptions, ListedBlob } from '../../src/storage/blob-store.js';

const state = encodeBlobState({
  blobType: 'BlockBlob',
  createdMs: 0,
  headers: {},
  metadata: [],
  lease: undefined,
  committedBlockCount: 0,
});

function recordOf(name: string): BlobRecord {
  return { container: 'c', name, snapshot: '', etag: '"0x1"', lastModifiedMs: 0, sizeBytes: 0, state };
}

/** The two store calls List Blobs makes, over sorted names, counting the rows it returns. */
function countingCall(names: string[], query: string): { call: BlobCall; rows: () => number } {
  const sorted = [...names].sort();
  let rows = 0;
  const blobs = {
    getContainer: async () => ({ name: 'c', etag: '"0x1"', lastModifiedMs: 0, state: '{}' }),
    listBlobs: async (_account: string, _container: string, options: ListBlobsOptions): Promise<ListedBlob[]> => {
      const from = options.from?.name ?? '';
      const page = sorted
        .filter((name) => name.startsWith(options.prefix) && name >= from)
        .slice(0, options.limit)
        .map((name) => ({ kind: 'blob' as const, record: recordOf(name) }));
      rows += page.length;
      return page;
    },
  };
  const call = {
    services: { blobs, clock: { nowMs: () => 0 } },
    account: 'devstoreaccount1',
    query: new URLSearchParams(query),
    baseUrl: 'http://127.0.0.1:10000/devstoreaccount1',
  } as unknown as BlobCall;
  return { call, rows: () => rows };
}

function names(root: XmlElement): string[] {
  const blobs = root.children.find((child) => child.name === 'Blobs')!;
  return blobs.children.map((entry) => `${entry.name}:${entry.children.find((c) => c.name === 'Name')!.text}`);
}

describe('List Blobs steps over folders', () => {
  const wide = Array.from({ length: 5000 }, (_, i) => `wide/${String(i).padStart(5, '0')}`);
  const all = ['a', ...wide, 'b/1', 'b/2', 'z'];

  test('a folder is one result; the rows read stay a handful', async () => {
    const { call, rows } = countingCall(all, 'delimiter=/&maxresults=3');
    const reply = await listBlobs(call, 'c');
    const root = parseXml(String(reply.body));
    assert.deepEqual(names(root), ['Blob:a', 'BlobPrefix:b/', 'BlobPrefix:wide/']);
    assert.ok(rows() < 20, `read ${rows()} rows`);
    const marker = root.children.find((child) => child.name === 'NextMarker')!.text;
    const next = countingCall(all, `delimiter=/&maxresults=3&marker=${encodeURIComponent(marker)}`);
    const rest = parseXml(String((await listBlobs(next.call, 'c')).body));
    assert.deepEqual(names(rest), ['Blob:z']);
    assert.ok(next.rows() < 5, `read ${next.rows()} rows`);
  });

  test('without a delimiter the names are listed flat, a page at a time', async () => {
    const { call } = countingCall(all, 'prefix=wide/&maxresults=2');
    const root = parseXml(String((await listBlobs(call, 'c')).body));
    assert.deepEqual(names(root), ['Blob:wide/00000', 'Blob:wide/00001']);
  });
});
