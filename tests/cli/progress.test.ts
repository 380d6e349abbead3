// The transfer progress line of the blob commands and copy: what it says (count, bytes, rate, time
// left), live on a terminal and as plain lines otherwise. Pure: a fake stream, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeTransfer, formatBytes, startTransferProgress } from '../../src/cli/progress.js';

test('bytes in binary units, one decimal', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(64 * 1024 * 1000), '62.5 MiB');
});

test('a line names the count against its total, the bytes, the rate and the time left by bytes', () => {
  const line = describeTransfer(
    { items: 250, bytes: 16 * 1024 * 1024 },
    { items: 1000, bytes: 64 * 1024 * 1024 },
    2000,
    'files',
  );
  assert.equal(line, '250/1,000 files, 16.0 MiB, 8.0 MiB/s, 6 s left');
  assert.equal(describeTransfer({ items: 3, bytes: 0 }, {}, 1000, 'blobs'), '3 blobs, 0 B, 0 B/s');
  assert.equal(describeTransfer({ items: 0, bytes: 0 }, { items: 10 }, 1000, 'files'), '0/10 files, 0 B, 0 B/s');
});

function fakeStream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const stream = { isTTY, text: '', write: (chunk: string) => ((stream.text += chunk), true) };
  return stream as unknown as NodeJS.WriteStream & { text: string };
}

test('on a terminal the line is redrawn in place and cleared at the end; otherwise nothing but plain lines', () => {
  const tty = fakeStream(true);
  const progress = startTransferProgress('upload', 'files', { items: 2, bytes: 10 }, tty);
  progress.add(1, 5);
  const summary = progress.finish();
  assert.match(tty.text, /^\rupload: 0\/2 files, 0 B, 0 B\/s\x1b\[K/);
  assert.ok(tty.text.endsWith('\r\x1b[K'));
  assert.match(summary, /^1 files, 5 bytes in [\d.]+ s \([\d.]+ (B|KiB)\/s\)$/);
  const plain = fakeStream(false);
  const quiet = startTransferProgress('upload', 'files', { items: 2 }, plain);
  quiet.add(2, 10);
  quiet.finish();
  assert.equal(plain.text, ''); // a line every 5 s: none in a moment
});
