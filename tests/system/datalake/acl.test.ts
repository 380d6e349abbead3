// POSIX access control enforced for bearer tokens (data-lake-storage-access-control), through the
// official JavaScript SDK (@azure/storage-file-datalake) over HTTPS (the SDK's bearer policy needs
// it) on both engines: traverse, read, write, create, delete, list and rename permissions, owning
// user, named users and groups, the mask, other, the sticky bit, who may set access control,
// ownership and default ACL inheritance of new paths, and Set Access Control Recursive with pages
// and failures. Shared Key is the superuser and sets the stage.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TokenCredential } from '@azure/core-auth';
import {
  DataLakeServiceClient,
  newPipeline,
  StorageSharedKeyCredential,
  type DataLakeFileSystemClient,
  type PathAccessControlItem,
} from '@azure/storage-file-datalake';
import { hasOpenssl, makeTestCertificate, trustingCertificate } from '../../helpers/tls.js';
import { alice, bob, mintToken, team, writeTrustedKeys } from '../../helpers/datalake-acl.js';
import { uniqueContainerName } from '../../helpers/blob.js';
import {
  devAccount,
  devKey,
  makeTempDir,
  removeDir,
  serverEngines,
  startServer,
  type RunningServer,
} from '../../helpers/server.js';

const skip = hasOpenssl() ? false : 'openssl is not installed';

const tokensOf = (oid: string, groups: readonly string[] = []): TokenCredential => ({
  async getToken() {
    return { token: mintToken(oid, groups), expiresOnTimestamp: Date.now() + 600_000 };
  },
});

/** `[default:]type:id:rwx,…` as the SDK's items. */
function items(text: string): PathAccessControlItem[] {
  return text.split(',').map((entry) => {
    const parts = entry.split(':');
    const defaultScope = parts[0] === 'default';
    const [type, id, perms] = defaultScope ? parts.slice(1) : parts;
    return {
      defaultScope,
      accessControlType: type as PathAccessControlItem['accessControlType'],
      entityId: id!,
      permissions: { read: perms![0] === 'r', write: perms![1] === 'w', execute: perms![2] === 'x' },
    };
  });
}

/** The status and error code of a failed call; undefined when it succeeded. */
async function failure(action: Promise<unknown>): Promise<[number, string] | undefined> {
  try {
    await action;
    return undefined;
  } catch (error) {
    // A HEAD's refusal has no body: its code is the x-ms-error-code header (details.errorCode).
    const { statusCode, code, details } = error as {
      statusCode: number;
      code?: string;
      details?: { errorCode?: string };
    };
    return [statusCode, code ?? details?.errorCode ?? ''];
  }
}

const refused = [403, 'AuthorizationPermissionMismatch'];

for (const { label, options } of serverEngines) {
  describe(`Data Lake ACLs for bearer tokens (${label})`, { skip }, () => {
    let dir: string;
    let server: RunningServer;
    let certPem: string;
    const service = (credential: TokenCredential | StorageSharedKeyCredential) =>
      new DataLakeServiceClient(
        server.blobUrl!,
        trustingCertificate(newPipeline(credential, { retryOptions: { maxTries: 1 } }), certPem),
      );
    let admin: DataLakeServiceClient;
    const as = (oid: string, groups: readonly string[] = []) => service(tokensOf(oid, groups));

    before(async () => {
      dir = makeTempDir('cerulean-dfsacl-');
      const { certFile, keyFile, certPem: pem } = makeTestCertificate(dir);
      certPem = pem;
      server = await startServer({
        ...options,
        args: ['--cert', certFile, '--key', keyFile, '--oauth-jwks', writeTrustedKeys(dir)],
      });
      admin = service(new StorageSharedKeyCredential(devAccount, devKey));
    });
    after(async () => {
      await server?.stop();
      removeDir(dir);
    });

    async function newFilesystem(rootAcl: string): Promise<DataLakeFileSystemClient> {
      const fs = admin.getFileSystemClient(uniqueContainerName('acl'));
      await fs.create();
      await fs.getDirectoryClient('').setAccessControl(items(rootAcl));
      return fs;
    }
    const fsAs = (fs: DataLakeFileSystemClient, oid: string, groups: readonly string[] = []) =>
      as(oid, groups).getFileSystemClient(fs.name);

    test('the root: traverse and create need x and w+x; a new path is the caller’s, its group the parent’s', async () => {
      const fs = admin.getFileSystemClient(uniqueContainerName('acl'));
      await fs.create();
      const root = await fs.getDirectoryClient('').getAccessControl();
      assert.deepEqual([root.owner, root.group, root.permissions?.owner.write], ['$superuser', '$superuser', true]);
      assert.deepEqual(await failure(fsAs(fs, alice).getDirectoryClient('a').create()), refused);
      await fs.getDirectoryClient('').setAccessControl(items(`user::rwx,group::r-x,other::--x,user:${alice}:rwx`));
      await fsAs(fs, alice).getDirectoryClient('a').create();
      const made = await fs.getDirectoryClient('a').getAccessControl();
      assert.deepEqual([made.owner, made.group], [alice, '$superuser']);
      assert.equal(made.acl.map((item) => item.accessControlType).join(), 'user,group,other');
      // Bob is other on the root (--x) and on a (---): a's status, not what is in it.
      await fsAs(fs, alice).getFileClient('a/f').create();
      assert.equal((await fsAs(fs, bob).getDirectoryClient('a').getAccessControl()).owner, alice);
      assert.deepEqual(await failure(fsAs(fs, bob).getFileClient('a/f').getAccessControl()), refused);
      assert.deepEqual(await failure(fsAs(fs, bob).getDirectoryClient('b').create()), refused);
      assert.deepEqual(await failure(fsAs(fs, bob).listPaths().next()), refused);
      // A file system a bearer caller creates has a root of its own.
      const own = as(alice).getFileSystemClient(uniqueContainerName('own'));
      await own.create();
      const ownRoot = await own.getDirectoryClient('').getAccessControl();
      assert.deepEqual([ownRoot.owner, ownRoot.group], [alice, alice]);
      await own.getDirectoryClient('x/y').create();
    });

    test('named users, groups and the mask; write, list and who may set access control', async () => {
      const fs = await newFilesystem('user::rwx,group::r-x,other::--x');
      await fs.getDirectoryClient('a').create();
      await fs.getDirectoryClient('a').setAccessControl(items(`user::rwx,group::r-x,other::---,user:${alice}:rwx`));
      const file = fsAs(fs, alice).getFileClient('a/f.txt');
      await file.create();
      await file.append('hello', 0, 5);
      await file.flush(5);
      assert.equal((await file.getAccessControl()).owner, alice);
      const bobs = fsAs(fs, bob, [team]);
      // Bob: nothing on a, then r-x through a named entry: he lists, he does not write.
      assert.deepEqual(await failure(bobs.listPaths({ path: 'a' }).next()), refused);
      await fs
        .getDirectoryClient('a')
        .setAccessControl(items(`user::rwx,group::r-x,other::---,user:${alice}:rwx,user:${bob}:r-x`));
      assert.equal((await bobs.listPaths({ path: 'a' }).next()).value?.name, 'a/f.txt');
      assert.deepEqual(await failure(bobs.getFileClient('a/g.txt').create()), refused);
      assert.deepEqual(await failure(bobs.getFileClient('a/f.txt').append('x', 5, 1)), refused);
      // His team gets rwx: a group entry gives him what his named entry has not? No: a named user entry wins.
      await fs
        .getDirectoryClient('a')
        .setAccessControl(items(`user::rwx,group::r-x,other::---,user:${alice}:rwx,group:${team}:rwx`));
      await bobs.getFileClient('a/g.txt').create();
      assert.deepEqual(await failure(fsAs(fs, bob).getFileClient('a/h.txt').create()), refused, 'not in the team');
      // The mask limits named groups.
      await fs
        .getDirectoryClient('a')
        .setAccessControl(items(`user::rwx,group::r-x,other::---,user:${alice}:rwx,group:${team}:rwx,mask::r-x`));
      assert.deepEqual(await failure(bobs.getFileClient('a/h.txt').create()), refused, 'masked');
      // Only the owner sets access control; only the superuser gives a path away.
      assert.deepEqual(
        await failure(bobs.getFileClient('a/g.txt').setPermissions(permissions('rwxrwxrwx'))),
        undefined,
      );
      assert.deepEqual(await failure(file.setAccessControl(items('user::rw-,group::---,other::---'))), undefined);
      assert.deepEqual(
        await failure(bobs.getFileClient('a/f.txt').setAccessControl(items('user::rw-,group::---,other::rw-'))),
        refused,
      );
      assert.deepEqual(
        await failure(file.setAccessControl(items('user::rw-,group::---,other::---'), { owner: bob })),
        refused,
      );
      assert.deepEqual(
        await failure(file.setAccessControl(items('user::rw-,group::---,other::---'), { group: team })),
        refused,
      );
      assert.deepEqual(
        await failure(
          fs.getFileClient('a/f.txt').setAccessControl(items('user::rw-,group::---,other::---'), { owner: bob }),
        ),
        undefined,
      );
    });

    test('delete needs w+x on the parent; the sticky bit keeps others’ children', async () => {
      const fs = await newFilesystem('user::rwx,group::rwx,other::rwx');
      await fsAs(fs, alice).getDirectoryClient('shared').create({ permissions: '1777', umask: '0000' });
      await fsAs(fs, alice).getFileClient('shared/alice.txt').create();
      await fsAs(fs, bob).getFileClient('shared/bob.txt').create();
      const bobs = fsAs(fs, bob);
      assert.deepEqual(await failure(bobs.getFileClient('shared/alice.txt').delete()), refused);
      assert.deepEqual(await failure(bobs.getDirectoryClient('shared').delete(true)), refused, 'not his directory');
      await bobs.getFileClient('shared/bob.txt').delete();
      // Alice owns the directory: she may delete Bob's child too.
      await fsAs(fs, bob).getFileClient('shared/bob2.txt').create();
      await fsAs(fs, alice).getFileClient('shared/bob2.txt').delete();
      // Without w on the parent: no delete (renames: the Python SDK's test).
      await fsAs(fs, alice).getDirectoryClient('closed').create({ permissions: '0755', umask: '0000' });
      await fsAs(fs, alice).getFileClient('closed/f').create({ permissions: '0666', umask: '0000' });
      assert.deepEqual(await failure(bobs.getFileClient('closed/f').delete()), refused);
      // Creating a directory that exists does not take it over.
      await bobs.getDirectoryClient('closed').create();
      assert.equal((await fs.getDirectoryClient('closed').getAccessControl()).owner, alice);
      await fsAs(fs, alice).getFileClient('closed/f').delete();
    });

    test('default ACLs: a new file’s access ACL, a new directory’s both, limited by the mode', async () => {
      const fs = await newFilesystem('user::rwx,group::r-x,other::--x');
      await fs.getDirectoryClient('d').create();
      await fs
        .getDirectoryClient('d')
        .setAccessControl(
          items(
            `user::rwx,group::r-x,other::--x,user:${alice}:rwx,default:user::rwx,default:group::r-x,default:other::---,default:user:${alice}:rwx,default:user:${bob}:r-x,default:mask::rwx`,
          ),
        );
      await fsAs(fs, alice).getFileClient('d/file').create();
      const file = await fs.getFileClient('d/file').getAccessControl();
      assert.equal(file.owner, alice);
      assert.equal(aclText(file.acl), `user::rw-,user:${alice}:rwx,user:${bob}:r-x,group::r-x,mask::rw-,other::---`);
      await fsAs(fs, alice).getDirectoryClient('d/sub').create();
      const sub = await fs.getDirectoryClient('d/sub').getAccessControl();
      assert.equal(
        aclText(sub.acl),
        `user::rwx,user:${alice}:rwx,user:${bob}:r-x,group::r-x,mask::rwx,other::---,` +
          `default:user::rwx,default:user:${alice}:rwx,default:user:${bob}:r-x,default:group::r-x,default:mask::rwx,default:other::---`,
      );
      // Bob may read what the inherited entry gives him (r-x, masked to r-x on the directory).
      await fs
        .getDirectoryClient('d')
        .setAccessControl(items(`user::rwx,group::r-x,other::--x,default:user:${bob}:r-x`));
      assert.equal((await fsAs(fs, bob).listPaths({ path: 'd/sub' }).next()).done, true);
    });

    test('Set Access Control Recursive: set, modify and remove in pages; failures stop it unless forced', async () => {
      const fs = await newFilesystem('user::rwx,group::r-x,other::--x');
      const tree = fs.getDirectoryClient('t');
      await tree.create();
      for (const name of ['t/1', 't/2', 't/s', 't/s/3']) {
        if (name === 't/s') await fs.getDirectoryClient(name).create();
        else await fs.getFileClient(name).create();
      }
      const pages: number[] = [];
      const modified = await tree.updateAccessControlRecursive(items(`user:${alice}:rwx`), {
        batchSize: 2,
        onProgress: (progress) =>
          pages.push(progress.batchCounters.changedFilesCount + progress.batchCounters.changedDirectoriesCount),
      });
      assert.deepEqual(modified.counters, { changedDirectoriesCount: 2, changedFilesCount: 3, failedChangesCount: 0 });
      assert.deepEqual(pages, [2, 2, 1]);
      const deep = (await fs.getFileClient('t/s/3').getAccessControl()).acl;
      assert.equal(aclText(deep), `user::rw-,user:${alice}:rwx,group::r--,other::---`);
      const removed = await tree.removeAccessControlRecursive([
        { defaultScope: false, accessControlType: 'user', entityId: alice },
      ]);
      assert.equal(removed.counters.changedFilesCount, 3);
      assert.equal(aclText((await fs.getFileClient('t/1').getAccessControl()).acl), 'user::rw-,group::r--,other::---');
      const set = await tree.setAccessControlRecursive(items('user::rwx,group::---,other::---,default:user::rwx'));
      assert.deepEqual(set.counters, { changedDirectoriesCount: 2, changedFilesCount: 3, failedChangesCount: 0 });
      assert.equal(
        (await fs.getFileClient('t/2').getAccessControl()).acl.some((item) => item.defaultScope),
        false,
      );
      // Alice owns only t/2 and may traverse: the others fail; without continueOnFailure the first stops it.
      await tree.setAccessControl(items(`user::rwx,group::---,other::--x`));
      await fs.getFileClient('t/2').setAccessControl(items('user::rwx,group::---,other::---'), { owner: alice });
      const stopped = await fsAs(fs, alice)
        .getDirectoryClient('t')
        .updateAccessControlRecursive(items(`user:${bob}:r--`));
      assert.equal(stopped.counters.failedChangesCount, 1);
      assert.equal(stopped.counters.changedFilesCount, 0);
      const forced = await fsAs(fs, alice)
        .getDirectoryClient('t')
        .updateAccessControlRecursive(items(`user:${bob}:r--`), { continueOnFailure: true });
      assert.deepEqual(forced.counters, { changedDirectoriesCount: 0, changedFilesCount: 1, failedChangesCount: 4 });
      assert.ok(aclText((await fs.getFileClient('t/2').getAccessControl()).acl).includes(`user:${bob}:r--`));
    });
  });
}

function permissions(symbols: string) {
  const role = (text: string) => ({ read: text[0] === 'r', write: text[1] === 'w', execute: text[2] === 'x' });
  return {
    owner: role(symbols.slice(0, 3)),
    group: role(symbols.slice(3, 6)),
    other: role(symbols.slice(6, 9)),
    stickyBit: false,
    extendedAcls: false,
  };
}

function aclText(acl: readonly PathAccessControlItem[]): string {
  return acl
    .map((item) => {
      const p = item.permissions;
      const perms = `${p.read ? 'r' : '-'}${p.write ? 'w' : '-'}${p.execute ? 'x' : '-'}`;
      return `${item.defaultScope ? 'default:' : ''}${item.accessControlType}:${item.entityId}:${perms}`;
    })
    .join(',');
}
