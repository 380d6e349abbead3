// Blob index tags through Debian's Python SDK (azure.storage.blob, /usr/bin/python3: set_blob_tags,
// get_blob_tags, upload_blob(tags=), find_blobs_by_tags on the service and a container, if_tags_match_condition)
// and the Azure CLI (`az storage blob upload --tags`, `show`/`download`/`delete --tags-condition`; the
// installed az has no `storage blob tag` or `filter` commands), given only the connection string, on every engine.
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

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient
from azure.core.exceptions import HttpResponseError
service = BlobServiceClient.from_connection_string(sys.argv[1])
container = service.create_container(sys.argv[2])
run = sys.argv[2]
out = {}
def code_of(action):
    try:
        action()
    except HttpResponseError as error:
        return [error.status_code, error.error_code]
    return None
for i in range(5):
    container.upload_blob("b%d" % i, b"x", tags={"run": run, "n": str(i)})
blob = container.get_blob_client("b0")
blob.set_blob_tags({"run": run, "n": "0", "extra": "yes"})
out["tags"] = blob.get_blob_tags()
out["found"] = sorted(b.name for b in service.find_blobs_by_tags("\\"run\\" = '%s' AND \\"n\\" < '3'" % run))
pages = container.find_blobs_by_tags("run = '%s'" % run, results_per_page=2).by_page()
out["pages"] = [len(list(page)) for page in pages]
out["unmet"] = code_of(lambda: blob.download_blob(if_tags_match_condition="extra = 'no'").readall())
out["met"] = blob.download_blob(if_tags_match_condition="extra = 'yes'").readall().decode()
print(json.dumps(out))
`;

let workDir: string;
before(() => {
  workDir = makeTempDir('cerulean-az-tags-');
});
after(() => {
  if (workDir !== undefined) removeDir(workDir);
});

const az = (server: RunningServer, ...args: string[]): Promise<any> => azBlob(join(workDir, 'config'), server, ...args);

async function azStatus(server: RunningServer, ...args: string[]): Promise<string> {
  try {
    await az(server, ...args);
    return 'ok';
  } catch (error) {
    return String((error as { stderr?: string }).stderr ?? error);
  }
}

for (const engine of serverEngines) {
  describe(`blob index tags through Python and the Azure CLI on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test("Debian's Python SDK: set_blob_tags, get_blob_tags, find_blobs_by_tags, if_tags_match_condition", async () => {
      const name = uniqueContainerName('pyg');
      const args = ['-c', pythonScript, blobConnectionString(server), name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.tags, { run: name, n: '0', extra: 'yes' });
      assert.deepEqual(out.found, ['b0', 'b1', 'b2']);
      assert.deepEqual(out.pages, [2, 2, 1]);
      assert.deepEqual(out.unmet, [412, 'ConditionNotMet']);
      assert.equal(out.met, 'x');
    });

    test('az storage blob upload --tags; show, download, metadata update, delete --tags-condition', async () => {
      const container = uniqueContainerName('azg');
      const blob = ['--container-name', container, '--name', 'b.txt'];
      await az(server, 'storage', 'container', 'create', '--name', container);
      await az(server, 'storage', 'blob', 'upload', ...blob, '--data', 'hello', '--tags', 'stage=draft', 'team=a');
      const shown = await az(server, 'storage', 'blob', 'show', ...blob, '--tags-condition', `"stage" = 'draft'`);
      assert.equal(shown.tagCount, 2);
      const unmet = ['--tags-condition', `"stage" = 'done'`];
      assert.match(await azStatus(server, 'storage', 'blob', 'show', ...blob, ...unmet), /412|ConditionNotMet/);
      const update = ['storage', 'blob', 'metadata', 'update', ...blob, '--metadata', 'a=b', ...unmet];
      assert.match(await azStatus(server, ...update), /ConditionNotMet|412/);
      const download = ['storage', 'blob', 'download', ...blob, '--file', join(workDir, 'out.txt'), ...unmet];
      assert.match(await azStatus(server, ...download), /ConditionNotMet|412/);
      assert.match(await azStatus(server, 'storage', 'blob', 'delete', ...blob, ...unmet), /ConditionNotMet|412/);
      await az(server, 'storage', 'blob', 'delete', ...blob, '--tags-condition', `"team" = 'a'`);
      const listed = await az(server, 'storage', 'blob', 'list', '--container-name', container);
      assert.deepEqual(listed, []);
    });
  });
}
