// Page blobs through Debian's Python SDK (azure.storage.blob, run with /usr/bin/python3:
// create_page_blob, upload_page, clear_page, get_page_ranges, resize_blob, set_sequence_number,
// download) and the Azure CLI (`az storage blob upload --type page`, `show`, `download`), given
// only the connection string, on every engine.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
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
out = {}
disk = container.get_blob_client("disk.vhd")
disk.create_page_blob(4096, sequence_number=5)
disk.upload_page(b"a" * 1024, offset=512, length=1024)
disk.upload_page(b"b" * 512, offset=3072, length=512)
disk.clear_page(offset=1024, length=512)
pages, cleared = disk.get_page_ranges()
out["ranges"] = [[r["start"], r["end"]] for r in pages]
data = disk.download_blob().readall()
out["bytes"] = [data[0:512] == b"\\0" * 512, data[512:1024] == b"a" * 512, data[1024:1536] == b"\\0" * 512,
                data[1536:2048] == b"\\0" * 512, data[3072:3584] == b"b" * 512, len(data)]
props = disk.get_blob_properties()
out["props"] = [props.blob_type, props.size, props.page_blob_sequence_number]
disk.set_sequence_number("increment")
disk.resize_blob(2048)
props = disk.get_blob_properties()
out["after"] = [props.size, props.page_blob_sequence_number]
try:
    disk.upload_page(b"c" * 100, offset=0, length=100)
    out["misaligned"] = None
except (HttpResponseError, ValueError) as error:
    out["misaligned"] = type(error).__name__
print(json.dumps(out))
`;

let workDir: string;
before(() => {
  workDir = makeTempDir('cerulean-az-pages-');
});
after(() => {
  if (workDir !== undefined) removeDir(workDir);
});

const az = (server: RunningServer, ...args: string[]): Promise<any> => azBlob(join(workDir, 'config'), server, ...args);

for (const engine of serverEngines) {
  describe(`page blobs through Python and the Azure CLI on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test("Debian's Python SDK: create_page_blob, upload_page, clear_page, get_page_ranges, resize_blob", async () => {
      const name = uniqueContainerName('pyp');
      const { stdout } = await run('/usr/bin/python3', ['-c', pythonScript, blobConnectionString(server), name], {
        timeout: commandTimeoutMs,
      });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.ranges, [
        [512, 1023],
        [3072, 3583],
      ]);
      assert.deepEqual(out.bytes, [true, true, true, true, true, 4096]);
      assert.deepEqual(out.props, ['PageBlob', 4096, 5]);
      assert.deepEqual(out.after, [2048, 6]);
      assert.notEqual(out.misaligned, null);
    });

    test('az storage blob upload --type page, show, download', async () => {
      const container = uniqueContainerName('azp');
      const source = join(workDir, `${engine.label}-disk.vhd`);
      const target = join(workDir, `${engine.label}-back.vhd`);
      const data = Buffer.concat([randomBytes(8192), Buffer.alloc(8192), randomBytes(4096)]);
      writeFileSync(source, data);
      const blob = ['--container-name', container, '--name', 'disk.vhd'];
      await az(server, 'storage', 'container', 'create', '--name', container);
      await az(server, 'storage', 'blob', 'upload', ...blob, '--file', source, '--type', 'page');
      const shown = await az(server, 'storage', 'blob', 'show', ...blob);
      assert.equal(shown.properties.blobType, 'PageBlob');
      assert.equal(shown.properties.contentLength, data.length);
      await az(server, 'storage', 'blob', 'download', ...blob, '--file', target);
      assert.ok(readFileSync(target).equals(data), 'the page blob downloads as uploaded');
    });
  });
}
