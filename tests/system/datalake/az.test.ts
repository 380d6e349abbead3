// The Azure CLI's Data Lake commands (Debian's az 2.45, `az storage fs`) against the blob
// endpoint's connection string, on both engines: file system create, directory create, file
// upload and download, and list.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { azBlob } from '../../helpers/az.js';
import { uniqueContainerName } from '../../helpers/blob.js';
import { makeTempDir, removeDir, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

let dir: string;
before(() => {
  dir = makeTempDir('cerulean-az-dfs-');
});
after(() => {
  removeDir(dir);
});

for (const engine of serverEngines) {
  describe(`az storage fs on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test('fs create, directory create, file upload and download, file list', async () => {
      const fs = uniqueContainerName('azfs');
      const upload = join(dir, `${fs}.txt`);
      const download = join(dir, `${fs}-back.txt`);
      writeFileSync(upload, 'lines\nof text\n');
      await azBlob(dir, server, 'storage', 'fs', 'create', '--name', fs);
      await azBlob(dir, server, 'storage', 'fs', 'directory', 'create', '-f', fs, '-n', 'in/2026');
      await azBlob(dir, server, 'storage', 'fs', 'file', 'upload', '-f', fs, '-p', 'in/2026/a.txt', '-s', upload);
      await azBlob(dir, server, 'storage', 'fs', 'file', 'download', '-f', fs, '-p', 'in/2026/a.txt', '-d', download);
      assert.equal(readFileSync(download, 'utf8'), 'lines\nof text\n');
      const listed = (await azBlob(dir, server, 'storage', 'fs', 'file', 'list', '-f', fs)) as {
        name: string;
        isDirectory: boolean;
        contentLength: number;
      }[];
      assert.deepEqual(
        listed.map((path) => [path.name, path.isDirectory, path.contentLength]),
        [
          ['in', true, 0],
          ['in/2026', true, 0],
          ['in/2026/a.txt', false, 14],
        ],
      );
    });
  });
}
