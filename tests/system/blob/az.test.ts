// The Blob service through the Azure CLI (`az storage container …`, `az storage blob …`) given only
// the connection string with the server's blob endpoint, on SQLite and on PostgreSQL; its
// configuration in a temp dir, no telemetry.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { azEnv } from '../../helpers/az.js';
import { blobConnectionString, uniqueContainerName } from '../../helpers/blob.js';
import { makeTempDir, removeDir, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

let workDir: string;
before(() => {
  workDir = makeTempDir('cerulean-az-');
});
after(() => {
  if (workDir !== undefined) removeDir(workDir);
});

/** `az …` with the server's connection string; its JSON output parsed (undefined when it prints nothing). */
async function az(server: RunningServer, ...args: string[]): Promise<any> {
  const env = azEnv(join(workDir, 'config'));
  const { stdout } = await run(
    'az',
    [...args, '--connection-string', blobConnectionString(server), '--output', 'json'],
    {
      env,
      timeout: commandTimeoutMs,
    },
  );
  return stdout.trim() === '' ? undefined : JSON.parse(stdout);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

for (const engine of serverEngines)
  describe(`the Azure CLI on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test('az storage container create/list/delete, az storage blob upload/show/list/download/delete', async () => {
      const container = uniqueContainerName('az');
      const content = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 13 + 5) % 256));
      const source = join(workDir, `source-${engine.label}.bin`);
      writeFileSync(source, content);
      assert.equal((await az(server, 'storage', 'container', 'create', '--name', container)).created, true);
      const containers = await az(server, 'storage', 'container', 'list', '--prefix', container);
      assert.deepEqual(
        containers.map((listed: { name: string }) => listed.name),
        [container],
      );
      const blob = ['--container-name', container];
      await az(server, 'storage', 'blob', 'upload', ...blob, '--name', 'dir/data.bin', '--file', source);
      await az(
        server,
        'storage',
        'blob',
        'upload',
        ...blob,
        '--name',
        'top.txt',
        '--data',
        'top',
        '--content-type',
        'text/plain',
      );
      const shown = await az(server, 'storage', 'blob', 'show', ...blob, '--name', 'dir/data.bin');
      assert.equal(shown.properties.contentLength, content.length);
      assert.equal(shown.properties.blobType, 'BlockBlob');
      const topShown = await az(server, 'storage', 'blob', 'show', ...blob, '--name', 'top.txt');
      assert.equal(topShown.properties.contentSettings.contentType, 'text/plain');
      const listed = await az(server, 'storage', 'blob', 'list', ...blob);
      assert.deepEqual(listed.map((item: { name: string }) => item.name).sort(), ['dir/data.bin', 'top.txt']);
      const underDir = await az(server, 'storage', 'blob', 'list', ...blob, '--prefix', 'dir/');
      assert.deepEqual(
        underDir.map((item: { name: string }) => item.name),
        ['dir/data.bin'],
      );
      const target = join(workDir, `downloaded-${engine.label}.bin`);
      await az(server, 'storage', 'blob', 'download', ...blob, '--name', 'dir/data.bin', '--file', target);
      assert.equal(sha256(readFileSync(target)), sha256(content), 'the download is byte-exact');
      await az(server, 'storage', 'blob', 'delete', ...blob, '--name', 'dir/data.bin');
      const left = await az(server, 'storage', 'blob', 'list', ...blob);
      assert.deepEqual(
        left.map((item: { name: string }) => item.name),
        ['top.txt'],
      );
      assert.equal((await az(server, 'storage', 'container', 'delete', '--name', container)).deleted, true);
      assert.deepEqual(await az(server, 'storage', 'container', 'list', '--prefix', container), []);
    });
  });
