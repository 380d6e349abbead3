// The Blob service through Debian's Python SDK (azure.storage.blob, run with /usr/bin/python3),
// given only the connection string with the server's blob endpoint: containers, a single-shot and a
// multi-block upload, ranged downloads, listing with prefix and delimiter, properties and metadata,
// blob and container leases, deletes. On SQLite, and on PostgreSQL when the test cluster runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { blobConnectionString, uniqueContainerName } from '../../helpers/blob.js';
import { type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

// Uploads above 64 KiB go as 32 KiB blocks and a block list: 200,000 bytes are 7 blocks.
const pythonScript = `
import hashlib, json, sys
from azure.storage.blob import BlobServiceClient, ContentSettings
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
service = BlobServiceClient.from_connection_string(
    sys.argv[1], max_single_put_size=64 * 1024, max_block_size=32 * 1024)
name = sys.argv[2]
out = {}
def code_of(action):
    try:
        action()
    except HttpResponseError as error:
        return [error.status_code, error.error_code]
    return None
container = service.create_container(name, metadata={"origin": "python"})
out["conflict"] = code_of(lambda: service.create_container(name))
data = bytes((i * 7 + 3) % 251 for i in range(200_000))
big = container.get_blob_client("dir/big.bin")
big.upload_blob(data, metadata={"kind": "big"}, content_settings=ContentSettings(content_type="application/x-test"))
out["blocks"] = len(big.get_block_list("committed")[0])
out["whole"] = hashlib.sha256(big.download_blob().readall()).hexdigest() == hashlib.sha256(data).hexdigest()
out["range"] = big.download_blob(offset=1000, length=5000).readall() == data[1000:6000]
out["tail"] = big.download_blob(offset=199_990).readall() == data[199_990:]
out["chunked"] = b"".join(big.download_blob(max_concurrency=1).chunks()) == data
container.upload_blob("dir/sub/small.txt", b"hello")
container.upload_blob("top.txt", b"top")
container.upload_blob("dir/other.txt", b"x")
out["exists"] = code_of(lambda: container.upload_blob("top.txt", b"again"))
# Sorted: the SDK puts a page's prefixes before its blobs, whatever order the service sent.
out["walk_root"] = sorted(item.name for item in container.walk_blobs(delimiter="/"))
out["walk_dir"] = sorted(item.name for item in container.walk_blobs(name_starts_with="dir/", delimiter="/"))
out["list_prefix"] = [blob.name for blob in container.list_blobs(name_starts_with="dir/")]
props = big.get_blob_properties()
out["properties"] = [props.size, props.content_settings.content_type, props.metadata, str(props.blob_type)]
big.set_blob_metadata({"changed": "yes"})
big.set_http_headers(ContentSettings(content_type="text/plain", cache_control="no-cache"))
props = big.get_blob_properties()
out["changed"] = [props.metadata, props.content_settings.content_type, props.content_settings.cache_control]
lease = big.acquire_lease(lease_duration=15)
out["lease_state"] = [big.get_blob_properties().lease.state, big.get_blob_properties().lease.status]
out["leased_write"] = code_of(lambda: big.upload_blob(b"no", overwrite=True))
out["leased_delete"] = code_of(lambda: big.delete_blob())
out["second_lease"] = code_of(lambda: big.acquire_lease(lease_duration=15))
big.upload_blob(b"replaced", overwrite=True, lease=lease)
out["replaced"] = big.download_blob().readall().decode()
lease.renew()
lease.release()
big.delete_blob()
out["deleted"] = code_of(lambda: big.download_blob().readall())
out["listed_after_delete"] = sorted(blob.name for blob in container.list_blobs())
container_lease = container.acquire_lease(lease_duration=-1)
out["leased_container_delete"] = code_of(lambda: service.delete_container(name))
service.delete_container(name, lease=container_lease)
out["containers_after"] = [c.name for c in service.list_containers(name_starts_with=name)]
print(json.dumps(out))
`;

for (const engine of serverEngines) {
  describe(`Debian's Python SDK, blobs on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test('containers, multi-block upload, ranges, walk_blobs, properties, metadata, leases, deletes', async () => {
      const name = uniqueContainerName('py');
      const { stdout } = await run('/usr/bin/python3', ['-c', pythonScript, blobConnectionString(server), name], {
        timeout: commandTimeoutMs,
      });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.conflict, [409, 'ContainerAlreadyExists']);
      assert.equal(out.blocks, 7, 'the upload went as 7 blocks of at most 32 KiB');
      assert.deepEqual([out.whole, out.range, out.tail, out.chunked], [true, true, true, true]);
      assert.deepEqual(out.exists, [409, 'BlobAlreadyExists']);
      assert.deepEqual(out.walk_root, ['dir/', 'top.txt']);
      assert.deepEqual(out.walk_dir, ['dir/big.bin', 'dir/other.txt', 'dir/sub/']);
      assert.deepEqual(out.list_prefix, ['dir/big.bin', 'dir/other.txt', 'dir/sub/small.txt']);
      assert.deepEqual(out.properties, [200_000, 'application/x-test', { kind: 'big' }, 'BlobType.BLOCKBLOB']);
      assert.deepEqual(out.changed, [{ changed: 'yes' }, 'text/plain', 'no-cache']);
      assert.deepEqual(out.lease_state, ['leased', 'locked']);
      assert.deepEqual(out.leased_write, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.leased_delete, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.second_lease, [409, 'LeaseAlreadyPresent']);
      assert.equal(out.replaced, 'replaced');
      assert.deepEqual(out.deleted, [404, 'BlobNotFound']);
      assert.deepEqual(out.listed_after_delete, ['dir/other.txt', 'dir/sub/small.txt', 'top.txt']);
      assert.deepEqual(out.leased_container_delete, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.containers_after, []);
    });
  });
}
