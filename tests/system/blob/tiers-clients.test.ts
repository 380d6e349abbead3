// Access tiers and append blob seal through Debian's Python SDK (azure.storage.blob, run with
// /usr/bin/python3: set_standard_blob_tier, seal_append_blob) and the Azure CLI (`az storage blob
// set-tier`, `show`, `list`), given only the connection string, on every engine. Rehydration takes
// an hour here (--blob-rehydrate-delay), so a rehydration these clients start stays pending.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { azBlob } from '../../helpers/az.js';
import { blobConnectionString, uniqueContainerName } from '../../helpers/blob.js';
import { makeTempDir, removeDir, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;
const rehydrateMs = 60 * 60 * 1000;

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient
from azure.core.exceptions import HttpResponseError
service = BlobServiceClient.from_connection_string(sys.argv[1])
container = service.create_container(sys.argv[2])
out = {}
def code_of(action):
    try:
        action()
    except HttpResponseError as error:
        return [error.status_code, error.error_code]
    return None
def tier_of(client):
    p = client.get_blob_properties()
    return [p.blob_tier, p.blob_tier_inferred, p.archive_status, p.rehydrate_priority]
blob = container.upload_blob("b.txt", b"hello")
out["new"] = tier_of(blob)
blob.set_standard_blob_tier("Cool")
out["cool"] = tier_of(blob)
blob.set_standard_blob_tier("Archive")
out["archived_read"] = code_of(lambda: blob.download_blob().readall())
blob.set_standard_blob_tier("Hot", rehydrate_priority="High")
out["rehydrating"] = tier_of(blob)
out["listed"] = [[b.name, b.blob_tier, b.archive_status] for b in container.list_blobs()]
log = container.get_blob_client("log")
log.create_append_blob()
log.append_block(b"one")
log.seal_append_blob()
out["sealed"] = log.get_blob_properties().is_append_blob_sealed
out["append_sealed"] = code_of(lambda: log.append_block(b"two"))
out["listed_sealed"] = [b.is_append_blob_sealed for b in container.list_blobs() if b.name == "log"]
print(json.dumps(out))
`;

let workDir: string;
before(() => {
  workDir = makeTempDir('cerulean-az-tiers-');
});
after(() => {
  if (workDir !== undefined) removeDir(workDir);
});

/** `az …` with the server's connection string and this file's configuration directory. */
const az = (server: RunningServer, ...args: string[]): Promise<any> => azBlob(join(workDir, 'config'), server, ...args);

for (const engine of serverEngines) {
  describe(`access tiers and seal through Python and the Azure CLI on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer({ ...engine.options, args: ['--blob-rehydrate-delay', String(rehydrateMs)] });
    });
    after(async () => {
      await server?.stop();
    });

    test("Debian's Python SDK: set_standard_blob_tier, archive, rehydrate, seal_append_blob", async () => {
      const name = uniqueContainerName('pyt');
      const args = ['-c', pythonScript, blobConnectionString(server), name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.new, ['Hot', true, null, null]);
      assert.deepEqual(out.cool, ['Cool', null, null, null]);
      assert.deepEqual(out.archived_read, [409, 'BlobArchived']);
      assert.deepEqual(out.rehydrating, ['Archive', null, 'rehydrate-pending-to-hot', 'High']);
      assert.deepEqual(out.listed, [['b.txt', 'Archive', 'rehydrate-pending-to-hot']]);
      assert.equal(out.sealed, true);
      assert.deepEqual(out.append_sealed, [409, 'BlobIsSealed']);
      assert.deepEqual(out.listed_sealed, [true]);
    });

    test('az storage blob set-tier, show, list', async () => {
      const container = uniqueContainerName('azt');
      const blob = ['--container-name', container, '--name', 'b.txt'];
      await az(server, 'storage', 'container', 'create', '--name', container);
      await az(server, 'storage', 'blob', 'upload', ...blob, '--data', 'hello');
      await az(server, 'storage', 'blob', 'set-tier', ...blob, '--tier', 'Cool');
      let shown = await az(server, 'storage', 'blob', 'show', ...blob);
      assert.equal(shown.properties.blobTier, 'Cool');
      await az(server, 'storage', 'blob', 'set-tier', ...blob, '--tier', 'Archive');
      await az(server, 'storage', 'blob', 'set-tier', ...blob, '--tier', 'Cool', '--rehydrate-priority', 'High');
      shown = await az(server, 'storage', 'blob', 'show', ...blob);
      assert.equal(shown.properties.blobTier, 'Archive');
      assert.equal(shown.properties.rehydrationStatus, 'rehydrate-pending-to-cool');
      const listed = await az(server, 'storage', 'blob', 'list', '--container-name', container);
      assert.deepEqual(
        listed.map((item: { name: string; properties: { blobTier: string } }) => [item.name, item.properties.blobTier]),
        [['b.txt', 'Archive']],
      );
    });
  });
}
