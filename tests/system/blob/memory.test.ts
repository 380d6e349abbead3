// The Blob service's memory over many large uploads, against a real server on SQLite: bodies hashed
// on the digest thread (src/blob/content/digests.ts) come back from it, so the server's resident memory
// after 20 Put Blob of 32 MiB is what it was after the first two, give or take its heap's slack,
// not 640 MiB more (as when pieces were shared memory the digest thread's heap kept alive).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const mib = 1024 * 1024;

function residentBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(match !== null, 'Linux reports VmRSS');
  return Number(match[1]) * 1024;
}

describe('blob uploads and the memory they leave', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.stop();
  });

  test('20 Put Blob of 32 MiB leave the resident memory of the first two, within 192 MiB', async () => {
    const container = uniqueContainerName();
    assert.equal((await blobSend(server, { method: 'PUT', target: `${container}?restype=container` })).status, 201);
    const body = randomBytes(32 * mib);
    const put = async (index: number) => {
      const target = `${container}/b${index % 3}`;
      const reply = await blobSend(server, { method: 'PUT', target, headers: { 'x-ms-blob-type': 'BlockBlob' }, body });
      assert.equal(reply.status, 201, reply.text);
    };
    for (let index = 0; index < 2; index++) await put(index);
    const settledBytes = residentBytes(server.process.pid!);
    for (let index = 2; index < 20; index++) await put(index);
    const grownBytes = residentBytes(server.process.pid!) - settledBytes;
    assert.ok(grownBytes < 192 * mib, `resident memory grew by ${(grownBytes / mib).toFixed(0)} MiB`);
  });
});
