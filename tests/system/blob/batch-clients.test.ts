// Blob Batch (https://learn.microsoft.com/rest/api/storageservices/blob-batch) through the other
// clients, on SQLite and on PostgreSQL: Debian's Python SDK (`ContainerClient.delete_blobs`, with
// the connection string's key and with a container SAS), the Azure CLI's `az storage blob
// delete-batch`, the JS SDK's setBlobsAccessTier, and how /_metrics counts a batch and its parts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BlobServiceClient } from '@azure/storage-blob';
import { blobNames, containerWith as made } from '../../helpers/blob-batch.js';
import { azEnv } from '../../helpers/az.js';
import { blobConnectionString, blobEndpoint, blobServiceClient, uniqueContainerName } from '../../helpers/blob.js';
import { sample, scrape } from '../../helpers/metrics.js';
import { makeTempDir, removeDir, serverEngines, startServer, type RunningServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

const pythonScript = `
import json, sys
from datetime import datetime, timedelta, timezone
from azure.storage.blob import BlobServiceClient, ContainerClient, ContainerSasPermissions, generate_container_sas
service = BlobServiceClient.from_connection_string(sys.argv[1])
name = sys.argv[2]
container = service.create_container(name)
for blob in ["a", "b", "c", "d", "e"]:
    container.upload_blob(blob, b"x")
out = {}
answers = container.delete_blobs("a", "b", "missing", raise_on_any_failure=False)
out["key"] = [answer.status_code for answer in answers]
sas = generate_container_sas(
    service.account_name, name, account_key=service.credential.account_key,
    permission=ContainerSasPermissions(delete=True), expiry=datetime.now(timezone.utc) + timedelta(hours=1))
with_sas = ContainerClient.from_container_url(container.url + "?" + sas)
out["sas"] = [answer.status_code for answer in with_sas.delete_blobs("c", "d")]
out["left"] = sorted(blob.name for blob in container.list_blobs())
print(json.dumps(out))
`;

for (const engine of serverEngines) {
  describe(`Blob Batch from other clients (${engine.label})`, () => {
    let server: RunningServer;
    let service: BlobServiceClient;
    let workDir: string;

    before(async () => {
      server = await startServer(engine.options);
      service = blobServiceClient(server);
      workDir = makeTempDir('cerulean-az-batch-');
    });

    after(async () => {
      await server?.stop();
      if (workDir !== undefined) removeDir(workDir);
    });

    const containerWith = (blobs: readonly string[]) => made(service, blobs);

    test("Debian's Python SDK: delete_blobs with the account key and with a container SAS", async () => {
      const name = uniqueContainerName('py');
      const { stdout } = await run('/usr/bin/python3', ['-c', pythonScript, blobConnectionString(server), name], {
        timeout: commandTimeoutMs,
      });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.key, [202, 202, 404]);
      assert.deepEqual(out.sas, [202, 202]);
      assert.deepEqual(out.left, ['e']);
    });

    test('az storage blob delete-batch deletes what its pattern names (it sends one Delete Blob each)', async () => {
      const container = await containerWith(['p/1', 'p/2', 'p/3', 'q/1']);
      const port = Number(new URL(blobEndpoint(server)).port);
      const before = await scrape(port);
      const env = azEnv(join(workDir, 'config'));
      const args = ['storage', 'blob', 'delete-batch', '--source', container.containerName, '--pattern', 'p/*'];
      await run('az', [...args, '--connection-string', blobConnectionString(server), '--output', 'json'], {
        env,
        timeout: commandTimeoutMs,
      });
      assert.deepEqual(await blobNames(container), ['q/1']);
      const after = await scrape(port);
      const count = (text: string, operation: string) =>
        sample(text, 'cerulean_requests_total', { operation, status: '202' }) ?? 0;
      // What this Azure CLI sends, measured: single deletes, no batch.
      assert.equal(count(after, 'DeleteBlob') - count(before, 'DeleteBlob'), 3);
      assert.equal(count(after, 'BlobBatch'), count(before, 'BlobBatch'));
    });

    test('/_metrics counts a batch once as BlobBatch and each part as its own operation', async () => {
      const container = await containerWith(['a', 'b', 'c']);
      const port = Number(new URL(blobEndpoint(server)).port);
      const before = await scrape(port);
      const parts = ['a', 'b', 'c', 'missing'].map((name) => container.getBlobClient(name));
      await container.getBlobBatchClient().deleteBlobs(parts);
      const after = await scrape(port);
      const delta = (operation: string, status: string) =>
        (sample(after, 'cerulean_requests_total', { operation, status }) ?? 0) -
        (sample(before, 'cerulean_requests_total', { operation, status }) ?? 0);
      assert.equal(delta('BlobBatch', '202'), 1);
      assert.equal(delta('DeleteBlob', '202'), 3);
      assert.equal(delta('DeleteBlob', '404'), 1);
    });

    test('BlobBatchClient.setBlobsAccessTier', async () => {
        const container = await containerWith(['a', 'b']);
        const parts = ['a', 'b'].map((name) => container.getBlobClient(name));
        const answer = await container.getBlobBatchClient().setBlobsAccessTier(parts, 'Cool');
        assert.deepEqual(
          answer.subResponses.map((part) => part.status),
          [200, 200],
        );
        for (const part of parts) assert.equal((await part.getProperties()).accessTier, 'Cool');
    });
  });
}
