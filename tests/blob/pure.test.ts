// The Blob service's pure parts: conditions, the lease state machine over a clock, ranges,
// checksums while streaming, block ids and block list resolution, the block list XML.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import { parseBlockList, writeBlockList } from '../../src/blob/wire/block-list-xml.js';
import { checkBlockId, resolveBlockList } from '../../src/blob/state/block-lists.js';
import { checkedContent, offThreadBytesMin, type ContentSeen } from '../../src/blob/content/checksums.js';
import { Crc64 } from '../../src/blob/content/crc64.js';
import { leaseEtag, unquotedEtag, visibleEtag } from '../../src/blob/wire/etag.js';
import { evaluate, parseConditions } from '../../src/blob/wire/conditions.js';
import {
  applyLease,
  checkLeaseForWrite,
  leaseState,
  parseLeaseRequest,
  type StoredLease,
} from '../../src/blob/state/leases.js';
import { requestedRange, resolveRange } from '../../src/blob/wire/ranges.js';
import type { Block } from '../../src/storage/blob-store.js';

function refused(run: () => unknown, code: ErrorCode): void {
  assert.throws(run, (error: unknown) => error instanceof StorageError && error.code === code);
}

describe('conditional headers', () => {
  const current = { etag: '"0x8D1"', lastModifiedMs: Date.parse('Thu, 01 Jan 2026 10:00:00 GMT') + 400 };
  const verdict = (headers: Record<string, string>) => evaluate(parseConditions(headers), current);
  test('If-Match: the ETag, * or a list holds; another fails', () => {
    assert.equal(verdict({ 'if-match': '"0x8D1"' }), 'ok');
    assert.equal(verdict({ 'if-match': '*' }), 'ok');
    assert.equal(verdict({ 'if-match': '"0x1", "0x8D1"' }), 'ok');
    assert.equal(verdict({ 'if-match': '"0x8D2"' }), 'failed');
  });
  test('If-None-Match and If-Modified-Since: not modified; dates compare at whole seconds', () => {
    assert.equal(verdict({ 'if-none-match': '*' }), 'notModified');
    assert.equal(verdict({ 'if-none-match': '"0x8D2"' }), 'ok');
    assert.equal(verdict({ 'if-modified-since': 'Thu, 01 Jan 2026 10:00:00 GMT' }), 'notModified');
    assert.equal(verdict({ 'if-modified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' }), 'ok');
    assert.equal(verdict({ 'if-unmodified-since': 'Thu, 01 Jan 2026 10:00:00 GMT' }), 'ok');
    assert.equal(verdict({ 'if-unmodified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' }), 'failed');
    assert.equal(verdict({ 'if-modified-since': 'not a date' }), 'ok');
  });
  test('no current version: If-Match fails, If-None-Match holds', () => {
    assert.equal(evaluate(parseConditions({ 'if-match': '*' }), undefined), 'failed');
    assert.equal(evaluate(parseConditions({ 'if-none-match': '*' }), undefined), 'ok');
  });
  test('x-ms-source-if-* are read with their prefix', () => {
    const conditions = parseConditions({ 'x-ms-source-if-match': '"0x9"', 'if-match': '"0x8D1"' }, 'x-ms-source-');
    assert.deepEqual(conditions.ifMatch, ['"0x9"']);
  });
});

describe('lease actions keep the visible ETag', () => {
  test('each lease action stores a new token; clients see the same ETag; conditions match it', () => {
    const written = '"0x8DC1234567890AB"';
    const once = leaseEtag(written);
    const twice = leaseEtag(once);
    assert.equal(new Set([written, once, twice]).size, 3);
    assert.equal(visibleEtag(once), written);
    assert.equal(visibleEtag(twice), written);
    assert.equal(unquotedEtag(twice), '0x8DC1234567890AB');
    const record = { etag: twice, lastModifiedMs: 0 };
    assert.equal(evaluate(parseConditions({ 'if-match': written }), record), 'ok');
    assert.equal(evaluate(parseConditions({ 'if-none-match': written }), record), 'notModified');
    assert.equal(evaluate(parseConditions({ 'if-match': once }), record), 'failed');
  });
});

describe('leases over a clock', () => {
  const id = '11111111-2222-3333-4444-555555555555';
  const other = '99999999-2222-3333-4444-555555555555';
  const request = (headers: Record<string, string>) => parseLeaseRequest(headers);
  const t0 = 1_000_000;
  const acquired = applyLease(
    undefined,
    request({ 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '15', 'x-ms-proposed-lease-id': id }),
    t0,
    'blob',
  );
  test('acquire: 201, leased until its duration passes, then expired', () => {
    assert.equal(acquired.status, 201);
    assert.equal(acquired.leaseId, id);
    assert.equal(leaseState(acquired.lease, t0 + 14_999), 'leased');
    assert.equal(leaseState(acquired.lease, t0 + 15_000), 'expired');
  });
  test('another id cannot acquire, renew, change or release a lease in force', () => {
    const lease = acquired.lease;
    const as =
      (action: string, extra: Record<string, string> = {}) =>
      () =>
        applyLease(lease, request({ 'x-ms-lease-action': action, ...extra }), t0 + 1, 'blob');
    refused(as('acquire', { 'x-ms-lease-duration': '-1', 'x-ms-proposed-lease-id': other }), 'LeaseAlreadyPresent');
    refused(as('renew', { 'x-ms-lease-id': other }), 'LeaseIdMismatchWithLeaseOperation');
    refused(as('release', { 'x-ms-lease-id': other }), 'LeaseIdMismatchWithLeaseOperation');
    refused(
      as('change', { 'x-ms-lease-id': other, 'x-ms-proposed-lease-id': other.replace('9', '8') }),
      'LeaseIdMismatchWithLeaseOperation',
    );
  });
  test('break: breaking for the period, then broken; not renewable; release frees it', () => {
    const broken = applyLease(
      acquired.lease,
      request({ 'x-ms-lease-action': 'break', 'x-ms-lease-break-period': '5' }),
      t0,
      'blob',
    );
    assert.equal(broken.status, 202);
    assert.equal(broken.leaseTimeSeconds, 5);
    assert.equal(leaseState(broken.lease, t0 + 4_999), 'breaking');
    assert.equal(leaseState(broken.lease, t0 + 5_000), 'broken');
    refused(
      () => applyLease(broken.lease, request({ 'x-ms-lease-action': 'renew', 'x-ms-lease-id': id }), t0 + 1, 'blob'),
      'LeaseIsBrokenAndCannotBeRenewed',
    );
    refused(
      () =>
        applyLease(
          broken.lease,
          request({ 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '20', 'x-ms-proposed-lease-id': id }),
          t0 + 1,
          'blob',
        ),
      'LeaseIsBreakingAndCannotBeAcquired',
    );
    const again = applyLease(
      broken.lease,
      request({ 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '20' }),
      t0 + 6_000,
      'blob',
    );
    assert.equal(leaseState(again.lease, t0 + 6_001), 'leased');
    const released = applyLease(
      broken.lease,
      request({ 'x-ms-lease-action': 'release', 'x-ms-lease-id': id }),
      t0 + 1,
      'blob',
    );
    assert.equal(leaseState(released.lease, t0 + 1), 'available');
  });
  test('a break period longer than a fixed lease ends with the lease', () => {
    const broken = applyLease(
      acquired.lease,
      request({ 'x-ms-lease-action': 'break', 'x-ms-lease-break-period': '60' }),
      t0,
      'blob',
    );
    assert.equal(broken.leaseTimeSeconds, 15);
  });
  test('lease actions on no lease: 409 LeaseNotPresentWithLeaseOperation', () => {
    refused(
      () => applyLease(undefined, request({ 'x-ms-lease-action': 'break' }), t0, 'blob'),
      'LeaseNotPresentWithLeaseOperation',
    );
  });
  test('writes: the lease id is needed while leased, refused when there is none', () => {
    const lease: StoredLease = acquired.lease;
    refused(() => checkLeaseForWrite(lease, t0, undefined, 'blob'), 'LeaseIdMissing');
    refused(() => checkLeaseForWrite(lease, t0, other, 'blob'), 'LeaseIdMismatchWithBlobOperation');
    checkLeaseForWrite(lease, t0, id.toUpperCase(), 'blob');
    checkLeaseForWrite(lease, t0 + 15_000, undefined, 'blob');
    refused(() => checkLeaseForWrite(undefined, t0, id, 'blob'), 'LeaseNotPresentWithBlobOperation');
    refused(() => checkLeaseForWrite(undefined, t0, id, 'container'), 'LeaseNotPresentWithContainerOperation');
  });
  test('bad lease headers are 400', () => {
    refused(() => request({ 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '10' }), 'InvalidHeaderValue');
    refused(() => request({ 'x-ms-lease-action': 'steal' }), 'InvalidHeaderValue');
    refused(() => request({ 'x-ms-lease-action': 'renew' }), 'MissingRequiredHeader');
    refused(() => request({ 'x-ms-lease-action': 'renew', 'x-ms-lease-id': 'nope' }), 'InvalidHeaderValue');
  });
});

describe('ranges', () => {
  test('x-ms-range wins over Range; an unreadable Range is ignored, an unreadable x-ms-range refused', () => {
    assert.deepEqual(requestedRange({ range: 'bytes=0-9', 'x-ms-range': 'bytes=5-' }), { start: 5, end: undefined });
    assert.equal(requestedRange({ range: 'bytes=-5' }), undefined);
    refused(() => requestedRange({ 'x-ms-range': 'bytes=a-b' }), 'InvalidHeaderValue');
    refused(() => requestedRange({ range: 'bytes=9-3' }), 'InvalidRange');
  });
  test('resolved against the size: the end clamped, a start at the end unsatisfiable', () => {
    assert.deepEqual(resolveRange({ start: 2, end: 100 }, 10), { start: 2, endExclusive: 10 });
    assert.equal(resolveRange({ start: 10, end: undefined }, 10), 'unsatisfiable');
    assert.equal(resolveRange({ start: 0, end: 0 }, 0), 'unsatisfiable');
  });
});

async function drain(source: AsyncIterable<Buffer>): Promise<void> {
  for await (const chunk of source) void chunk;
}

describe('checksums', () => {
  test('CRC64 is Azure Storage\'s (CRC-64/NVME check value of "123456789")', () => {
    assert.equal(new Crc64().update(Buffer.from('123456789')).digest().readBigUInt64LE(), 0xae8b14860a799888n);
  });
  test('content is counted and hashed while it streams; a mismatch or excess throws at once', async () => {
    const parts = [Buffer.from('hello '), Buffer.from('world')];
    const md5 = createHash('md5').update('hello world').digest();
    const seen: ContentSeen = { sizeBytes: 0, md5: undefined };
    await drain(checkedContent(parts, { md5, sizeBytesMax: 100 }, seen));
    assert.equal(seen.sizeBytes, 11);
    assert.deepEqual(seen.md5, md5);
    await assert.rejects(
      drain(checkedContent(parts, { md5: Buffer.alloc(16), sizeBytesMax: 100 }, { sizeBytes: 0, md5: undefined })),
      (e: StorageError) => e.code === 'Md5Mismatch',
    );
    await assert.rejects(
      drain(checkedContent(parts, { crc64: Buffer.alloc(8), sizeBytesMax: 100 }, { sizeBytes: 0, md5: undefined })),
      (e: StorageError) => e.code === 'Crc64Mismatch',
    );
    await assert.rejects(
      drain(checkedContent(parts, { sizeBytesMax: 10 }, { sizeBytes: 0, md5: undefined })),
      (e: StorageError) => e.code === 'RequestBodyTooLarge',
    );
  });
  test('CRC64 is the same over any split of the bytes (8-byte steps and the single-byte tail)', () => {
    const bytes = randomBytes(1000);
    const whole = new Crc64().update(bytes).digest();
    for (const cut of [0, 1, 7, 8, 9, 500, 999, 1000]) {
      assert.deepEqual(
        new Crc64().update(bytes.subarray(0, cut)).update(bytes.subarray(cut)).digest(),
        whole,
        `cut ${cut}`,
      );
    }
  });
  test('a large body is hashed on the digest thread: the same digests and bytes, mismatches thrown', async () => {
    const bytes = randomBytes(offThreadBytesMin * 3 + 12_345);
    // Odd-sized chunks, so pieces are gathered across chunk boundaries.
    const chunks = Array.from({ length: Math.ceil(bytes.length / 40_000) }, (_, i) =>
      bytes.subarray(i * 40_000, (i + 1) * 40_000),
    );
    const md5 = createHash('md5').update(bytes).digest();
    const crc64 = new Crc64().update(bytes).digest();
    const options = { md5, crc64, sizeBytesMax: bytes.length, sizeBytesDeclared: bytes.length };
    const seen: ContentSeen = { sizeBytes: 0, md5: undefined };
    const out: Buffer[] = [];
    for await (const piece of checkedContent(chunks, options, seen)) out.push(piece);
    assert.ok(out.length >= 4, 'gathered into pieces of 256 KiB');
    assert.ok(
      chunks.every((chunk) => chunk.buffer.byteLength > 0),
      'the source keeps its chunks: pieces are copies',
    );
    assert.deepEqual(Buffer.concat(out), bytes);
    assert.deepEqual(seen.md5, md5);
    const fresh = (): ContentSeen => ({ sizeBytes: 0, md5: undefined });
    await assert.rejects(
      drain(checkedContent(chunks, { ...options, md5: Buffer.alloc(16) }, fresh())),
      (e: StorageError) => e.code === 'Md5Mismatch',
    );
    await assert.rejects(
      drain(checkedContent(chunks, { ...options, crc64: Buffer.alloc(8) }, fresh())),
      (e: StorageError) => e.code === 'Crc64Mismatch',
    );
    await assert.rejects(
      drain(checkedContent(chunks, { ...options, sizeBytesMax: offThreadBytesMin }, fresh())),
      (e: StorageError) => e.code === 'RequestBodyTooLarge',
    );
    // A body abandoned half way (the client went away) leaves the thread ready for the next.
    const abandoned = checkedContent(chunks, options, fresh());
    await abandoned.next();
    await abandoned.return();
    const again = fresh();
    await drain(checkedContent(chunks, options, again));
    assert.deepEqual(again.md5, md5);
  });
});

describe('block ids and block lists', () => {
  const block = (blockId: string, sizeBytes = 1): Block => ({ blockId, content: { id: blockId, sizeBytes } });
  const a = Buffer.from('aaaa').toString('base64');
  const b = Buffer.from('bbbb').toString('base64');
  test("base64 of 1 to 64 bytes, the same length as the blob's other blocks", () => {
    checkBlockId(a, b);
    refused(() => checkBlockId('not base64!', undefined), 'InvalidBlockId');
    refused(() => checkBlockId(Buffer.alloc(65).toString('base64'), undefined), 'InvalidBlockId');
    refused(() => checkBlockId(Buffer.from('ccc').toString('base64'), a), 'InvalidBlobOrBlock');
  });
  test('Committed, Uncommitted and Latest pick from the right list; an unknown block is InvalidBlockList', () => {
    const committed = [block(a, 1)];
    const staged = [block(a, 2), block(b, 3)];
    const sizes = (entries: Parameters<typeof resolveBlockList>[0]) =>
      resolveBlockList(entries, committed, staged).map((x) => x.content.sizeBytes);
    assert.deepEqual(
      sizes([
        { kind: 'Committed', blockId: a },
        { kind: 'Latest', blockId: a },
        { kind: 'Uncommitted', blockId: b },
      ]),
      [1, 2, 3],
    );
    refused(() => sizes([{ kind: 'Committed', blockId: b }]), 'InvalidBlockList');
  });
  test('the BlockList body: entries in order; anything else is InvalidXmlDocument', () => {
    const body = `<?xml version="1.0" encoding="utf-8"?>\n<BlockList>\n  <Latest>${a}</Latest><Committed>${b}</Committed>\n</BlockList>`;
    assert.deepEqual(parseBlockList(body), [
      { kind: 'Latest', blockId: a },
      { kind: 'Committed', blockId: b },
    ]);
    assert.deepEqual(parseBlockList('<BlockList />'), []);
    refused(() => parseBlockList('<BlockList><Latest>x</Latest>'), 'InvalidXmlDocument');
    refused(() => parseBlockList('<BlockList><Other>x</Other></BlockList>'), 'InvalidXmlDocument');
    refused(() => parseBlockList('not xml'), 'InvalidXmlDocument');
    assert.equal(
      writeBlockList([{ blockId: a, sizeBytes: 4 }], []),
      `<?xml version="1.0" encoding="utf-8"?><BlockList><CommittedBlocks><Block><Name>${a}</Name><Size>4</Size></Block></CommittedBlocks><UncommittedBlocks /></BlockList>`,
    );
  });
});
