// A directory rename under kill -9, on SQLite and PostgreSQL: a directory of a few thousand files
// is renamed back and forth, and the server gets SIGKILL a random moment after the rename was sent
// (within twice the time one rename takes: before, during or after its one transaction). After a
// restart on the same data every file is under the old name or every file under the new one, never
// some of each, and a rename that was acknowledged is there. SIGKILL ends the process, not the machine.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { blobSend, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const files = 4000;
const rounds = 6;
const putConcurrency = 32;

async function put(server: RunningServer, target: string, headers: Record<string, string> = {}): Promise<number> {
  return (await blobSend(server, { method: 'PUT', target, headers })).status;
}

async function populate(server: RunningServer, fs: string): Promise<void> {
  assert.equal(await put(server, `${fs}?resource=filesystem`), 201);
  assert.equal(await put(server, `${fs}/one?resource=directory`), 201);
  let next = 0;
  const worker = async () => {
    while (next < files) {
      const i = next++;
      assert.equal(await put(server, `${fs}/one/sub${i % 10}/f${i}`, { 'x-ms-blob-type': 'BlockBlob' }), 201);
    }
  };
  await Promise.all(Array.from({ length: putConcurrency }, worker));
}

/** Where the directory is: 'one' or 'two'; fails when its files are split between them. */
async function whereIs(server: RunningServer, fs: string): Promise<'one' | 'two'> {
  const counts = new Map<string, number>();
  for await (const blob of blobServiceClient(server).getContainerClient(fs).listBlobsFlat()) {
    const top = blob.name.split('/')[0]!;
    counts.set(top, (counts.get(top) ?? 0) + 1);
  }
  assert.equal(counts.size, 1, `every file under one name: ${JSON.stringify([...counts])}`);
  const [[top, count]] = [...counts] as [[string, number]];
  assert.equal(count, files + 1, 'the directory, its 10 subdirectories implied by names, and every file');
  assert.ok(top === 'one' || top === 'two');
  return top;
}

for (const engine of storeEngines) {
  describe(`Data Lake rename under kill -9 on ${engine.label}`, () => {
    test(`a directory of ${files} files is renamed all or nothing`, async (t) => {
      const data = await engine.data();
      let server = await startServer(data.options);
      try {
        const fs = uniqueContainerName('crash');
        await populate(server, fs);
        // One rename without a kill: how long one takes here; the kills come within twice that.
        const startedMs = Date.now();
        assert.equal(await put(server, `${fs}/two?mode=legacy`, { 'x-ms-rename-source': `/${fs}/one` }), 201);
        const killDelayMaxMs = 2 * (Date.now() - startedMs) + 5;
        t.diagnostic(`a rename of ${files} files took ${Date.now() - startedMs} ms`);
        let at: 'one' | 'two' = 'two';
        for (let round = 0; round < rounds; round++) {
          const to: 'one' | 'two' = at === 'one' ? 'two' : 'one';
          let acknowledged = false;
          const renaming = blobSend(server, {
            method: 'PUT',
            target: `${fs}/${to}?mode=legacy`,
            headers: { 'x-ms-rename-source': `/${fs}/${at}` },
          }).then(
            (reply) => (acknowledged = reply.status === 201),
            () => undefined,
          );
          const delayMs = Math.floor(Math.random() * killDelayMaxMs);
          await delay(delayMs);
          await server.kill9();
          await renaming;
          server = await startServer(data.options);
          const now = await whereIs(server, fs);
          if (acknowledged) assert.equal(now, to, 'an acknowledged rename is kept');
          t.diagnostic(
            `round ${round}: killed ${delayMs} ms after sending; ${acknowledged ? 'acknowledged, ' : ''}at ${now}`,
          );
          at = now;
        }
      } finally {
        await server.stop();
        await data.cleanup();
      }
    });
  });
}
