// POSIX access control enforced for bearer tokens through Debian's Python SDK
// (azure.storage.filedatalake, /usr/bin/python3) over HTTPS, on both engines: the root's ACL set
// with Shared Key, a user's directory and file (created, written, read through the Blob API's Get
// Blob), another user refused reading and renaming until an ACL lets them, renames needing w+x on
// both parents, and set, update and remove_access_control_recursive in batches, with a caller who
// owns only part of the tree.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { uniqueContainerName } from '../../helpers/blob.js';
import { alice, bob, mintToken, tokenLifetimeSeconds, writeTrustedKeys } from '../../helpers/datalake-acl.js';
import { hasOpenssl, makeTestCertificate } from '../../helpers/tls.js';
import {
  devAccount,
  devKey,
  makeTempDir,
  removeDir,
  serverEngines,
  startServer,
  type RunningServer,
} from '../../helpers/server.js';

const run = promisify(execFile);
const skip = hasOpenssl() ? false : 'openssl is not installed';

const pythonScript = `
import json, os
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.storage.filedatalake import DataLakeServiceClient
env = os.environ
url, ca, name, tokens = env['URL'], env['CA'], env['FS'], json.loads(env['TOKENS'])
ALICE, BOB = env['ALICE'], env['BOB']
class Token:
    def __init__(self, token):
        self.token = token
    def get_token(self, *scopes, **kwargs):
        return AccessToken(self.token, int(env['EXPIRES']))
shared_key = {"account_name": env['ACCOUNT'], "account_key": env['KEY']}
admin = DataLakeServiceClient(url, credential=shared_key, connection_verify=ca)
def fs_of(who):
    return DataLakeServiceClient(url, credential=Token(tokens[who]), connection_verify=ca).get_file_system_client(name)
out = {}
def code_of(action):
    try:
        action()
    except HttpResponseError as error:
        return [error.status_code, error.error_code]
    return None
fs = admin.create_file_system(name)
out["before_root_acl"] = code_of(lambda: fs_of("alice").create_directory("a"))
fs._get_root_directory_client().set_access_control(acl="user::rwx,group::r-x,other::--x,user:%s:rwx" % ALICE)
alices, bobs = fs_of("alice"), fs_of("bob")
alices.create_directory("a")
f = alices.get_file_client("a/f.txt")
f.upload_data(b"alice's", overwrite=True)
out["alice_reads"] = f.download_file().readall().decode()
out["owner"] = [f.get_access_control()["owner"], f.get_access_control()["permissions"]]
out["bob_reads"] = code_of(lambda: bobs.get_file_client("a/f.txt").download_file().readall())
out["bob_renames"] = code_of(lambda: bobs.get_file_client("a/f.txt").rename_file(name + "/g.txt"))
alices.get_directory_client("a").set_access_control(acl="user::rwx,group::r-x,other::---,user:%s:r-x" % BOB)
out["bob_still"] = code_of(lambda: bobs.get_file_client("a/f.txt").download_file().readall())
f.set_access_control(acl="user::rw-,group::---,other::---,user:%s:r--" % BOB)
out["bob_reads_now"] = bobs.get_file_client("a/f.txt").download_file().readall().decode()
out["bob_renames_out"] = code_of(lambda: bobs.get_file_client("a/f.txt").rename_file(name + "/g.txt"))
out["bob_deletes"] = code_of(lambda: bobs.get_file_client("a/f.txt").delete_file())
alices.create_directory("b", permissions="0755", umask="0000")
out["alice_renames_into_hers"] = code_of(lambda: alices.get_file_client("a/f.txt").rename_file(name + "/b/f.txt"))
out["renamed"] = alices.get_file_client("b/f.txt").download_file().readall().decode()
out["bob_renames_back"] = code_of(lambda: bobs.get_file_client("b/f.txt").rename_file(name + "/a/f.txt"))
for path in ["b/c", "b/c/d"]:
    alices.create_directory(path)
for path in ["b/c/1", "b/c/d/2"]:
    alices.create_file(path)
b = alices.get_directory_client("b")
def counts(result):
    c = result.counters
    return [c.directories_successful, c.files_successful, c.failure_count]
whole = "user::rwx,group::r-x,other::---,user:%s:r-x,default:user:%s:r-x" % (BOB, BOB)
out["set"] = counts(b.set_access_control_recursive(acl=whole, batch_size=2))
out["set_file_acl"] = alices.get_file_client("b/c/1").get_access_control()["acl"]
out["set_dir_acl"] = alices.get_directory_client("b/c").get_access_control()["acl"]
out["update"] = counts(b.update_access_control_recursive(acl="user:%s:rwx" % BOB, batch_size=3))
out["updated"] = alices.get_file_client("b/c/d/2").get_access_control()["acl"]
out["remove"] = counts(b.remove_access_control_recursive(acl="user:%s,default:user:%s" % (BOB, BOB)))
out["removed"] = alices.get_directory_client("b/c").get_access_control()["acl"]
# Bob owns nothing here: each path fails; the first stops the request unless continue_on_failure.
out["bob_stopped"] = counts(bobs.get_directory_client("b").update_access_control_recursive(acl="user:%s:rwx" % BOB))
bobs_b = bobs.get_directory_client("b")
out["bob_forced"] = counts(bobs_b.update_access_control_recursive(acl="user:%s:rwx" % BOB, continue_on_failure=True))
print(json.dumps(out))
`;

for (const { label, options } of serverEngines) {
  describe(`Data Lake ACLs through Debian's Python SDK (${label})`, { skip }, () => {
    let dir: string;
    let server: RunningServer;
    before(async () => {
      dir = makeTempDir('cerulean-dfsacl-py-');
      const { certFile, keyFile } = makeTestCertificate(dir);
      server = await startServer({
        ...options,
        args: ['--cert', certFile, '--key', keyFile, '--oauth-jwks', writeTrustedKeys(dir)],
      });
    });
    after(async () => {
      await server?.stop();
      removeDir(dir);
    });

    test('owners, named users, renames and the recursive ACL calls', async () => {
      const env = {
        ...process.env,
        URL: server.blobUrl!,
        CA: join(dir, 'cert.pem'),
        ACCOUNT: devAccount,
        KEY: devKey,
        FS: uniqueContainerName('pyacl'),
        TOKENS: JSON.stringify({ alice: mintToken(alice), bob: mintToken(bob) }),
        EXPIRES: String(Math.floor(Date.now() / 1000) + tokenLifetimeSeconds),
        ALICE: alice,
        BOB: bob,
      };
      const { stdout } = await run('/usr/bin/python3', ['-c', pythonScript], { env, timeout: 120_000 });
      const out = JSON.parse(stdout);
      const refused = [403, 'AuthorizationPermissionMismatch'];
      assert.deepEqual(out.before_root_acl, refused);
      assert.equal(out.alice_reads, "alice's");
      assert.deepEqual(out.owner, [alice, 'rw-r-----']);
      assert.deepEqual(out.bob_reads, refused);
      assert.deepEqual(out.bob_renames, refused);
      assert.deepEqual(out.bob_still, refused, 'x on a, nothing on the file');
      assert.equal(out.bob_reads_now, "alice's");
      assert.deepEqual(out.bob_renames_out, refused, 'no w on a');
      assert.deepEqual(out.bob_deletes, refused);
      assert.equal(out.alice_renames_into_hers, null);
      assert.equal(out.renamed, "alice's");
      assert.deepEqual(out.bob_renames_back, refused);
      assert.deepEqual(out.set, [3, 3, 0]);
      assert.equal(out.set_file_acl, `user::rwx,user:${bob}:r-x,group::r-x,other::---`);
      assert.equal(out.set_dir_acl, `user::rwx,user:${bob}:r-x,group::r-x,other::---,default:user:${bob}:r-x`);
      assert.deepEqual(out.update, [3, 3, 0]);
      assert.equal(out.updated, `user::rwx,user:${bob}:rwx,group::r-x,other::---`);
      assert.deepEqual(out.remove, [3, 3, 0]);
      assert.equal(out.removed, 'user::rwx,group::r-x,other::---');
      assert.deepEqual(out.bob_stopped, [0, 0, 1]);
      assert.deepEqual(out.bob_forced, [0, 0, 6]);
    });
  });
}
