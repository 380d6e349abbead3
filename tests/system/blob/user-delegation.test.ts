// Get User Delegation Key and user delegation SAS through the JS SDK against a real HTTPS server
// (the SDK's bearer policy needs HTTPS), on both engines: a key for a bearer token, a SAS signed
// with it reads, writes and lists; Shared Key and SAS may not ask for a key; a key or SAS out of
// its time is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TokenCredential } from '@azure/core-auth';
import {
  AnonymousCredential,
  BlobSASPermissions,
  BlobServiceClient,
  ContainerClient,
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  newPipeline,
  StorageSharedKeyCredential,
  type UserDelegationKey,
} from '@azure/storage-blob';
import { hasOpenssl, makeTestCertificate, trustingCertificate } from '../../helpers/tls.js';
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
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
const objectId = '4f1c6f3a-8c0e-4b8e-9d6a-0a1b2c3d4e5f';
const tenantId = '72f988bf-86f1-41af-91ab-2d7cd011db47';

/** A TokenCredential handing out JWTs for a user (oid, tid), signed by the key the server trusts. */
const tokens: TokenCredential = {
  async getToken() {
    const now = Math.floor(Date.now() / 1000);
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const claims = { aud: 'https://storage.azure.com', iss: 'https://issuer.example/', exp: now + 600, nbf: now };
    const input = `${part({ alg: 'RS256', kid: 'k' })}.${part({ ...claims, oid: objectId, tid: tenantId })}`;
    const token = `${input}.${sign('sha256', Buffer.from(input), signing.privateKey).toString('base64url')}`;
    return { token, expiresOnTimestamp: (now + 600) * 1000 };
  },
};

const hourMs = 3600_000;

// Debian's Python SDK (/usr/bin/python3): a key for a bearer token, a blob SAS signed with it, a read.
const pythonScript = `
import os, datetime
from azure.core.credentials import AccessToken
from azure.storage.blob import BlobClient, BlobSasPermissions, BlobServiceClient, generate_blob_sas
class Token:
    def get_token(self, *scopes, **kwargs):
        return AccessToken(os.environ['TOKEN'], int(os.environ['EXPIRES']))
url, ca = os.environ['URL'], os.environ['CA']
service = BlobServiceClient(url, credential=Token(), connection_verify=ca)
now = datetime.datetime.now(datetime.timezone.utc)
key = service.get_user_delegation_key(now - datetime.timedelta(minutes=1), now + datetime.timedelta(hours=1))
print(key.signed_oid)
sas = generate_blob_sas(account_name=os.environ['ACCOUNT'], container_name='pyudsas', blob_name='a.txt',
    user_delegation_key=key, permission=BlobSasPermissions(read=True), expiry=now + datetime.timedelta(minutes=30))
print(BlobClient.from_blob_url(url + '/pyudsas/a.txt?' + sas, connection_verify=ca).download_blob().readall().decode())
`;

for (const { label, options } of serverEngines) {
  describe(`user delegation SAS (${label})`, { skip }, () => {
    let dir: string;
    let certPem: string;
    let server: RunningServer;
    const client = (credential: TokenCredential | StorageSharedKeyCredential | AnonymousCredential, url?: string) =>
      new BlobServiceClient(
        url ?? server.blobUrl!,
        trustingCertificate(newPipeline(credential, { retryOptions: { maxTries: 1 } }), certPem),
      );
    const containerAt = (url: string) =>
      new ContainerClient(
        url,
        trustingCertificate(newPipeline(new AnonymousCredential(), { retryOptions: { maxTries: 1 } }), certPem),
      );

    before(async () => {
      dir = makeTempDir('cerulean-udk-');
      const { certFile, keyFile, certPem: pem } = makeTestCertificate(dir);
      certPem = pem;
      const jwks = JSON.stringify({ keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k' }] });
      writeFileSync(join(dir, 'keys.jwks'), jwks);
      server = await startServer({
        ...options,
        args: ['--cert', certFile, '--key', keyFile, '--oauth-jwks', join(dir, 'keys.jwks')],
      });
    });
    after(async () => {
      await server?.stop();
      removeDir(dir);
    });

    async function delegationKey(startMs: number, expiryMs: number): Promise<UserDelegationKey> {
      return client(tokens).getUserDelegationKey(new Date(startMs), new Date(expiryMs));
    }

    test("Debian's Python SDK: get_user_delegation_key with a bearer token, generate_blob_sas with the key", async () => {
      const admin = client(new StorageSharedKeyCredential(devAccount, devKey));
      const container = admin.getContainerClient('pyudsas');
      await container.create();
      await container.getBlockBlobClient('a.txt').upload('alpha', 5);
      const token = await tokens.getToken('https://storage.azure.com/.default');
      const env = {
        ...process.env,
        URL: server.blobUrl!,
        CA: join(dir, 'cert.pem'),
        ACCOUNT: devAccount,
        TOKEN: token!.token,
        EXPIRES: String(Math.floor(token!.expiresOnTimestamp / 1000)),
      };
      const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', pythonScript], { env, timeout: 120_000 });
      assert.deepEqual(stdout.trim().split('\n'), [objectId, 'alpha']);
    });

    test('a bearer token gets a key naming its oid and tid, the same key each time', async () => {
      const start = Date.now() - 60_000;
      const key = await delegationKey(start, start + hourMs);
      assert.equal(key.signedObjectId, objectId);
      assert.equal(key.signedTenantId, tenantId);
      assert.equal(key.signedService, 'b');
      assert.equal(key.signedStartsOn.getTime(), Math.floor(start / 1000) * 1000);
      assert.equal(Buffer.from(key.value, 'base64').length, 32);
      assert.equal((await delegationKey(start, start + hourMs)).value, key.value);
    });

    test('a user delegation SAS reads, writes and lists; a blob SAS is held to its blob', async () => {
      const admin = client(new StorageSharedKeyCredential(devAccount, devKey));
      const container = admin.getContainerClient('udsas');
      await container.create();
      await container.getBlockBlobClient('a.txt').upload('alpha', 5);
      const now = Date.now();
      const key = await delegationKey(now - 60_000, now + hourMs);
      const containerSas = generateBlobSASQueryParameters(
        {
          containerName: 'udsas',
          permissions: ContainerSASPermissions.parse('rwl'),
          startsOn: new Date(now - 60_000),
          expiresOn: new Date(now + hourMs),
        },
        key,
        devAccount,
      ).toString();
      const viaSas = containerAt(`${container.url}?${containerSas}`);
      await viaSas.getBlockBlobClient('b.txt').upload('bravo', 5);
      const names: string[] = [];
      for await (const blob of viaSas.listBlobsFlat()) names.push(blob.name);
      assert.deepEqual(names, ['a.txt', 'b.txt']);
      const read = await viaSas.getBlobClient('a.txt').downloadToBuffer();
      assert.equal(read.toString(), 'alpha');
      await assert.rejects(viaSas.getBlobClient('a.txt').delete(), { statusCode: 403 });

      const blobSas = generateBlobSASQueryParameters(
        {
          containerName: 'udsas',
          blobName: 'b.txt',
          permissions: BlobSASPermissions.parse('r'),
          expiresOn: new Date(now + hourMs),
          version: '2020-02-10',
        },
        key,
        devAccount,
      ).toString();
      const blobOnly = containerAt(`${container.url}?${blobSas}`);
      assert.equal((await blobOnly.getBlobClient('b.txt').downloadToBuffer()).toString(), 'bravo');
      await assert.rejects(blobOnly.getBlobClient('a.txt').downloadToBuffer(), { statusCode: 403 });
    });

    test('each version signs its own string (2018-11-09 to the SDK default)', async () => {
      const now = Date.now();
      const key = await delegationKey(now - 60_000, now + hourMs);
      for (const version of ['2018-11-09', '2020-02-10', '2020-12-06', '2025-07-05', undefined]) {
        const sas = generateBlobSASQueryParameters(
          {
            containerName: 'udsas',
            blobName: 'a.txt',
            permissions: BlobSASPermissions.parse('r'),
            expiresOn: new Date(now + hourMs),
            ...(version !== undefined && { version }),
            ...(version !== undefined && version >= '2020-02-10' && { correlationId: 'c0ffee' }),
            contentType: 'text/x-udk',
          },
          key,
          devAccount,
        ).toString();
        const blob = containerAt(`${server.blobUrl!}/udsas?${sas}`).getBlobClient('a.txt');
        const properties = await blob.getProperties();
        assert.equal(properties.contentType, 'text/x-udk', version);
      }
    });

    test('Shared Key and SAS may not ask for a key: 403 AuthenticationFailed', async () => {
      const now = new Date();
      const later = new Date(now.getTime() + hourMs);
      await assert.rejects(
        client(new StorageSharedKeyCredential(devAccount, devKey)).getUserDelegationKey(now, later),
        (error: { statusCode?: number; code?: string; message?: string }) => {
          assert.equal(error.statusCode, 403);
          assert.equal(error.code, 'AuthenticationFailed');
          return true;
        },
      );
    });

    test('an Expiry more than 7 days away is 400', async () => {
      const now = Date.now();
      await assert.rejects(delegationKey(now, now + 8 * 24 * hourMs), { statusCode: 400 });
    });

    test('a SAS whose key has expired, or which has expired itself, or whose key was altered, is refused', async () => {
      const now = Date.now();
      const key = await delegationKey(now - 60_000, now + hourMs);
      const sasFor = (delegation: UserDelegationKey, expiresOn: Date) =>
        generateBlobSASQueryParameters(
          { containerName: 'udsas2', permissions: ContainerSASPermissions.parse('rl'), expiresOn },
          delegation,
          devAccount,
        ).toString();
      const admin = client(new StorageSharedKeyCredential(devAccount, devKey));
      await admin.getContainerClient('udsas2').create();
      const list = async (sas: string) => {
        for await (const _ of containerAt(`${admin.getContainerClient('udsas2').url}?${sas}`).listBlobsFlat()) void _;
      };
      await list(sasFor(key, new Date(now + hourMs)));
      const expiredKey = { ...key, signedExpiresOn: new Date(now - 1000) };
      await assert.rejects(list(sasFor(expiredKey, new Date(now + hourMs))), { statusCode: 403 });
      await assert.rejects(list(sasFor(key, new Date(now - 1000))), { statusCode: 403 });
      const otherUser = { ...key, signedObjectId: '00000000-0000-0000-0000-000000000000' };
      await assert.rejects(list(sasFor(otherUser, new Date(now + hourMs))), { statusCode: 403 });
    });
  });
}
