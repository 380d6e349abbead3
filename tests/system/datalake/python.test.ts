// The Data Lake API through Debian's Python SDK (azure.storage.filedatalake 12.15, run with
// /usr/bin/python3) against the blob endpoint with the account key: file systems (create, list,
// properties, delete), directories with properties, files written by append and flush (invisible
// until flushed, read whole and by range), List Paths recursive, one level and paged, access
// control kept and answered, renames of a file and of a directory, recursive delete, and the Blob
// SDK on the same names both ways. On SQLite, and on PostgreSQL when the test cluster runs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { blobEndpoint, uniqueContainerName } from '../../helpers/blob.js';
import { devAccount, devKey, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

const pythonScript = `
import json, sys
from azure.storage.filedatalake import DataLakeServiceClient
from azure.storage.blob import BlobServiceClient
from azure.core.exceptions import HttpResponseError
url, account, key, name = sys.argv[1:5]
credential = {"account_name": account, "account_key": key}
service = DataLakeServiceClient(url, credential=credential)
blobs = BlobServiceClient(url, credential=credential).get_container_client(name)
out = {}
def code_of(action):
    try:
        action()
    except HttpResponseError as error:
        return [error.status_code, error.error_code]
    return None
fs = service.create_file_system(name, metadata={"team": "lake"})
out["fs_conflict"] = code_of(lambda: service.create_file_system(name))
out["fs_listed"] = [f.name for f in service.list_file_systems(name_starts_with=name)]
out["fs_metadata"] = fs.get_file_system_properties().metadata
directory = fs.create_directory("logs/2026", metadata={"kind": "day"})
out["dir_metadata"] = directory.get_directory_properties().metadata
f = directory.create_file("one.txt")
f.append_data(b"hello ", 0, 6)
f.append_data(b"world", 6, 5)
out["before_flush"] = f.download_file().readall().decode()
f.flush_data(11)
out["after_flush"] = f.download_file().readall().decode()
out["range"] = f.download_file(offset=2, length=3).readall().decode()
out["bad_flush"] = code_of(lambda: f.flush_data(20))
big = fs.get_file_client("logs/big.bin")
data = bytes((i * 7 + 3) % 251 for i in range(300_000))
big.upload_data(data, overwrite=True, chunk_size=64 * 1024)
out["big"] = big.download_file().readall() == data
out["recursive"] = [[p.name, bool(p.is_directory), p.content_length] for p in fs.get_paths()]
out["one_level"] = [[p.name, bool(p.is_directory)] for p in fs.get_paths(path="logs", recursive=False)]
pages = fs.get_paths(max_results=2).by_page()
out["pages"] = [[p.name for p in page] for page in pages]
acl = f.get_access_control()
out["access"] = [acl["owner"], acl["group"], acl["permissions"], acl["acl"]]
f.set_access_control(owner="alice", permissions="rwxr-----")
acl = f.get_access_control()
out["access_set"] = [acl["owner"], acl["group"], acl["permissions"]]
moved = f.rename_file(name + "/logs/renamed.txt")
out["renamed_file"] = moved.download_file().readall().decode()
out["old_file"] = code_of(lambda: f.download_file().readall())
directory.rename_directory(name + "/archive")
out["after_dir_rename"] = sorted(p.name for p in fs.get_paths())
blobs.upload_blob("from-blob/x.txt", b"via blob")
out["blob_in_paths"] = [[p.name, bool(p.is_directory)] for p in fs.get_paths(recursive=False)]
out["dfs_via_blob"] = blobs.download_blob("logs/renamed.txt").readall().decode()
out["blob_via_dfs"] = fs.get_file_client("from-blob/x.txt").download_file().readall().decode()
fs.get_directory_client("logs").delete_directory()
out["after_delete"] = sorted(p.name for p in fs.get_paths())
out["missing"] = code_of(lambda: fs.get_directory_client("nothing").rename_directory(name + "/else"))
service.delete_file_system(name)
out["fs_after_delete"] = [f.name for f in service.list_file_systems(name_starts_with=name)]
print(json.dumps(out))
`;

for (const engine of serverEngines) {
  describe(`Debian's Python SDK, Data Lake on ${engine.label}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(engine.options);
    });
    after(async () => {
      await server?.stop();
    });

    test('file systems, directories, append and flush, list paths, access control, renames, Blob interplay', async () => {
      const name = uniqueContainerName('lake');
      const args = ['-c', pythonScript, blobEndpoint(server), devAccount, devKey, name];
      const { stdout } = await run('/usr/bin/python3', args, { timeout: commandTimeoutMs });
      const out = JSON.parse(stdout);
      assert.deepEqual(out.fs_conflict, [409, 'ContainerAlreadyExists']);
      assert.deepEqual(out.fs_listed, [name]);
      assert.deepEqual(out.fs_metadata, { team: 'lake' });
      assert.deepEqual(out.dir_metadata, { kind: 'day', hdi_isfolder: 'true' });
      assert.equal(out.before_flush, '', 'appended data is invisible until flushed');
      assert.equal(out.after_flush, 'hello world');
      assert.equal(out.range, 'llo');
      assert.deepEqual(out.bad_flush, [400, 'InvalidFlushPosition']);
      assert.equal(out.big, true);
      assert.deepEqual(out.recursive, [
        ['logs', true, 0],
        ['logs/2026', true, 0],
        ['logs/2026/one.txt', false, 11],
        ['logs/big.bin', false, 300_000],
      ]);
      assert.deepEqual(out.one_level, [
        ['logs/2026', true],
        ['logs/big.bin', false],
      ]);
      assert.deepEqual(out.pages, [
        ['logs', 'logs/2026'],
        ['logs/2026/one.txt', 'logs/big.bin'],
      ]);
      assert.deepEqual(out.access, ['$superuser', '$superuser', 'rw-r-----', 'user::rw-,group::r--,other::---']);
      assert.deepEqual(out.access_set, ['alice', '$superuser', 'rwxr-----']);
      assert.equal(out.renamed_file, 'hello world');
      assert.deepEqual(out.old_file, [404, 'BlobNotFound']);
      assert.deepEqual(out.after_dir_rename, ['archive', 'logs', 'logs/big.bin', 'logs/renamed.txt']);
      assert.deepEqual(out.blob_in_paths, [
        ['archive', true],
        ['from-blob', true],
        ['logs', true],
      ]);
      assert.equal(out.dfs_via_blob, 'hello world');
      assert.equal(out.blob_via_dfs, 'via blob');
      // A recursive listing shows blobs, not the folders their names imply (docs/datalake.md).
      assert.deepEqual(out.after_delete, ['archive', 'from-blob/x.txt']);
      assert.deepEqual(out.missing, [404, 'SourcePathNotFound']);
      assert.deepEqual(out.fs_after_delete, []);
    });
  });
}
