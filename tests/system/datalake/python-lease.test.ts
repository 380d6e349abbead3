// Leases and flush options through Debian's Python SDK (azure.storage.filedatalake, run with
// /usr/bin/python3) against a real server, on both engines: DataLakeLeaseClient on a file and a
// directory, the lease checked on append, flush, set access control, rename and delete, the lease
// actions of append and flush, flush with retain_uncommitted_data, and a recursive directory delete.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { blobEndpoint, uniqueContainerName } from '../../helpers/blob.js';
import { devAccount, devKey, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

const pythonScript = `
import json, sys, uuid
from azure.storage.filedatalake import DataLakeServiceClient, DataLakeLeaseClient
from azure.core.exceptions import HttpResponseError
url, account, key, name = sys.argv[1:5]
service = DataLakeServiceClient(url, credential={"account_name": account, "account_key": key})
out = {}
def code_of(action):
    try:
        action()
    except HttpResponseError as error:
        return [error.status_code, error.error_code]
    return None
fs = service.create_file_system(name)
directory = fs.create_directory("d")
f = directory.create_file("f.txt")
lease = DataLakeLeaseClient(f)
lease.acquire(lease_duration=-1)
out["state"] = f.get_file_properties().lease.state
out["append_no_lease"] = code_of(lambda: f.append_data(b"hello", 0, 5))
f.append_data(b"hello", 0, 5, lease=lease)
out["flush_no_lease"] = code_of(lambda: f.flush_data(5))
f.flush_data(5, lease=lease)
out["acl_no_lease"] = code_of(lambda: f.set_access_control(permissions="rwx------"))
f.set_access_control(permissions="rwx------", lease=lease)
out["delete_no_lease"] = code_of(lambda: f.delete_file())
lease.change(str(uuid.uuid4()))
lease.renew()
lease.release()
out["released"] = f.get_file_properties().lease.state
mine = str(uuid.uuid4())
f.append_data(b" world", 5, 6, lease_action="acquire", lease=mine, lease_duration=15)
out["acquired_on_append"] = [f.get_file_properties().lease.state, f.get_file_properties().lease.duration]
f.flush_data(11, lease_action="release", lease=mine)
out["released_on_flush"] = f.get_file_properties().lease.state
f.append_data(b"abc", 11, 3)
f.append_data(b"def", 14, 3)
f.flush_data(14, retain_uncommitted_data=True)
out["retained_first"] = f.download_file().readall().decode()
f.flush_data(17)
out["retained_then"] = f.download_file().readall().decode()
dir_lease = DataLakeLeaseClient(directory)
dir_lease.acquire(lease_duration=15)
out["dir_delete_no_lease"] = code_of(lambda: directory.delete_directory())
dir_lease.break_lease(0)
for i in range(30):
    fs.create_file("d/many/f%02d.txt" % i)
directory.delete_directory()
out["after_delete"] = [p.name for p in fs.get_paths()]
print(json.dumps(out))
`;

for (const engine of serverEngines) {
  describe(`Debian's Python SDK, Data Lake leases on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test('DataLakeLeaseClient, leases on writes, lease actions, retained data, recursive delete', async () => {
      const name = uniqueContainerName('lease');
      const args = ['-c', pythonScript, blobEndpoint(server), devAccount, devKey, name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.equal(out.state, 'leased');
      assert.deepEqual(out.append_no_lease, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.flush_no_lease, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.acl_no_lease, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.delete_no_lease, [412, 'LeaseIdMissing']);
      assert.equal(out.released, 'available');
      assert.deepEqual(out.acquired_on_append, ['leased', 'fixed']);
      assert.equal(out.released_on_flush, 'available');
      assert.equal(out.retained_first, 'hello worldabc');
      assert.equal(out.retained_then, 'hello worldabcdef');
      assert.deepEqual(out.dir_delete_no_lease, [412, 'LeaseIdMissing']);
      assert.deepEqual(out.after_delete, []);
    });
  });
}
