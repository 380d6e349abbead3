// A recursive directory delete under kill -9, on SQLite and PostgreSQL: directories of a thousand
// files each are deleted with recursive=true, and the server gets SIGKILL a random moment after the
// delete was sent (within twice the time one delete takes: before, during or after its one
// transaction). After a restart on the same data the directory is there whole or gone whole, never
// in part, and a delete that was acknowledged is kept. SIGKILL ends the process, not the machine.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const filesPerDirectory = 1000;
const rounds = 5;
const putConcurrency = 32;

async function put(server: RunningServer, target: string, headers: Record<string, string> = {}): Promise<number> {
  return (await blobSend(server, { method: 'PUT', target, headers })).status;
}

/** Directories d0 … d{rounds} (one more for the timing), each with its files in 10 subdirectories. */
async function populate(server: RunningServer, fs: string): Promise<void> {
  assert.equal(await put(server, `${fs}?resource=filesystem`), 201);
  const names: string[] = [];
  for (let d = 0; d <= rounds; d++) {
    assert.equal(await put(server, `${fs}/d${d}?resource=directory`), 201);
    for (let i = 0; i < filesPerDirectory; i++) names.push(`d${d}/sub${i % 10}/f${i}`);
  }
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]!;
      assert.equal(await put(server, `${fs}/${name}`, { 'x-ms-blob-type': 'BlockBlob' }), 201);
    }
  };
  await Promise.all(Array.from({ length: putConcurrency }, worker));
}

/** How many blobs are named `directory` or under it: all of them (the directory and its files) or none. */
async function countOf(server: RunningServer, fs: string, directory: string): Promise<number> {
  let count = 0;
  for await (const blob of blobServiceClient(server).getContainerClient(fs).listBlobsFlat({ prefix: directory })) {
    if (blob.name === directory || blob.name.startsWith(`${directory}/`)) count++;
  }
  assert.ok(count === 0 || count === filesPerDirectory + 1, `${directory} whole or gone: ${count} blobs`);
  return count;
}

const deleteDirectory = (server: RunningServer, fs: string, directory: string) =>
  blobSend(server, { method: 'DELETE', target: `${fs}/${directory}?recursive=true` });

for (const engine of storeEngines) {
  describe(`Data Lake recursive delete under kill -9 on ${engine.label}`, () => {
    test(`a directory of ${filesPerDirectory} files is deleted all or nothing`, async (t) => {
      const data = await engine.data();
      let server = await startServer(data.options);
      try {
        const fs = uniqueContainerName('delcrash');
        await populate(server, fs);
        const startedMs = Date.now();
        assert.equal((await deleteDirectory(server, fs, `d${rounds}`)).status, 200);
        const killDelayMaxMs = 2 * (Date.now() - startedMs) + 5;
        t.diagnostic(`a delete of ${filesPerDirectory} files took ${Date.now() - startedMs} ms`);
        for (let round = 0; round < rounds; round++) {
          let acknowledged = false;
          const deleting = deleteDirectory(server, fs, `d${round}`).then(
            (reply) => (acknowledged = reply.status === 200),
            () => undefined,
          );
          const delayMs = Math.floor(Math.random() * killDelayMaxMs);
          await delay(delayMs);
          await server.kill9();
          await deleting;
          server = await startServer(data.options);
          const left = await countOf(server, fs, `d${round}`);
          if (acknowledged) assert.equal(left, 0, 'an acknowledged delete is kept');
          t.diagnostic(`round ${round}: killed ${delayMs} ms after sending; ${acknowledged ? 'acknowledged, ' : ''}${left} left`);
        }
      } finally {
        await server.stop();
        await data.cleanup();
      }
    });
  });
}
