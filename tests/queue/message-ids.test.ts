import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newMessageId } from '../../src/queue/message-ids.js';

const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a message id is a version 7 GUID whose first 48 bits are the milliseconds', () => {
  const nowMs = Date.UTC(2026, 10, 26, 12, 0, 0, 123);
  const id = newMessageId(nowMs);
  assert.match(id, guid);
  assert.equal(parseInt(id.slice(0, 8) + id.slice(9, 13), 16), nowMs);
});

test('ids of later milliseconds sort after earlier ones, and ids of one millisecond differ', () => {
  const nowMs = Date.UTC(2026, 10, 26, 12, 0, 0);
  const same = new Set(Array.from({ length: 1000 }, () => newMessageId(nowMs)));
  assert.equal(same.size, 1000);
  assert.ok(newMessageId(nowMs) < newMessageId(nowMs + 1));
  assert.ok(newMessageId(0xffff_ffff) < newMessageId(0x1_0000_0000), 'the time is zero-padded, not shortened');
});
