// Copies and From-URL operations whose source is a blob of another account of the same server,
// through the JS SDK against a real server on both engines: Copy Blob (asynchronous and
// synchronous), Put Blob From URL, Put Block From URL and Append Block From URL, the source read
// through a SAS in its URL (service, account, user delegation), its container's public access, or a
// bearer token in x-ms-copy-source-authorization; refusals as CannotVerifyCopySource.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  BlobSASPermissions,
  BlobServiceClient,
  ContainerClient,
  generateAccountSASQueryParameters,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
  type UserDelegationKey,
} from '@azure/storage-blob';
import {
  devAccount,
  devKey,
  makeTempDir,
  removeDir,
  serverEngines,
  startServer,
  type RunningServer,
} from '../../helpers/server.js';

const otherAccount = 'otheracct';
const otherKey = Buffer.from('the other account key, 32 bytes+').toString('base64');
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
const hourMs = 3600_000;

function bearerToken(aud = 'https://storage.azure.com'): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { aud, iss: 'https://issuer.example/', exp: now + 600, nbf: now, oid: 'u1', tid: 't1' };
  const input = `${part({ alg: 'RS256', kid: 'k' })}.${part(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), signing.privateKey).toString('base64url')}`;
}

interface Failure {
  statusCode?: number;
  code?: string;
  response?: { headers: { get(name: string): string | undefined } };
}

function refusedWith(status: number, sourceStatus?: number) {
  return (error: Failure) => {
    assert.equal(error.statusCode, status);
    assert.equal(error.code, 'CannotVerifyCopySource');
    if (sourceStatus !== undefined) {
      assert.equal(error.response?.headers.get('x-ms-copy-source-status-code'), String(sourceStatus));
    }
    return true;
  };
}

for (const { label, options } of serverEngines) {
  describe(`copies across accounts of one server (${label})`, () => {
    let dir: string;
    let server: RunningServer;
    let dest: BlobServiceClient;
    let other: BlobServiceClient;
    let target: ContainerClient;
    let source: ContainerClient;
    let publicSource: ContainerClient;
    const content = Buffer.from('0123456789abcdefghij');
    const blobSasUrl = (container: ContainerClient, name: string, key = otherKey) =>
      `${container.getBlobClient(name).url}?${generateBlobSASQueryParameters(
        {
          containerName: container.containerName,
          blobName: name,
          permissions: BlobSASPermissions.parse('r'),
          expiresOn: new Date(Date.now() + hourMs),
        },
        new StorageSharedKeyCredential(otherAccount, key),
      ).toString()}`;

    before(async () => {
      dir = makeTempDir('cerulean-copy-accounts-');
      const jwks = JSON.stringify({ keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k' }] });
      writeFileSync(join(dir, 'keys.jwks'), jwks);
      server = await startServer({
        ...options,
        env: { AZURITE_ACCOUNTS: `${otherAccount}:${otherKey}` },
        args: ['--oauth-jwks', join(dir, 'keys.jwks')],
      });
      const endpoint = (account: string) => server.blobUrl!.replace(`/${devAccount}`, `/${account}`);
      const retry = { retryOptions: { maxTries: 1 } };
      dest = new BlobServiceClient(endpoint(devAccount), new StorageSharedKeyCredential(devAccount, devKey), retry);
      other = new BlobServiceClient(
        endpoint(otherAccount),
        new StorageSharedKeyCredential(otherAccount, Buffer.from(otherKey, 'base64').toString('base64')),
        retry,
      );
      target = dest.getContainerClient('target');
      await target.create();
      source = other.getContainerClient('private');
      await source.create();
      await source.getBlockBlobClient('src').upload(content, content.length, {
        blobHTTPHeaders: { blobContentType: 'text/x-source' },
        metadata: { from: 'other' },
      });
      publicSource = other.getContainerClient('public');
      await publicSource.create({ access: 'blob' });
      await publicSource.getBlockBlobClient('src').upload(content, content.length);
    });
    after(async () => {
      await server?.stop();
      removeDir(dir);
    });

    const read = async (name: string) => target.getBlobClient(name).downloadToBuffer();

    test('Copy Blob, synchronous and asynchronous, with a SAS of the source account', async () => {
      const copied = await target.getBlobClient('sync').syncCopyFromURL(blobSasUrl(source, 'src'));
      assert.equal(copied.copyStatus, 'success');
      assert.deepEqual(await read('sync'), content);
      const props = await target.getBlobClient('sync').getProperties();
      assert.equal(props.contentType, 'text/x-source');
      assert.deepEqual(props.metadata, { from: 'other' });
      const poller = await target.getBlobClient('async').beginCopyFromURL(blobSasUrl(source, 'src'));
      await poller.pollUntilDone();
      assert.deepEqual(await read('async'), content);
    });

    test('an account SAS of the source account, and a public container, also let the source be read', async () => {
      const accountSas = generateAccountSASQueryParameters(
        {
          permissions: AccountSASPermissions.parse('r'),
          services: AccountSASServices.parse('b').toString(),
          resourceTypes: AccountSASResourceTypes.parse('o').toString(),
          expiresOn: new Date(Date.now() + hourMs),
        },
        new StorageSharedKeyCredential(otherAccount, otherKey),
      ).toString();
      await target.getBlobClient('acct').syncCopyFromURL(`${source.getBlobClient('src').url}?${accountSas}`);
      assert.deepEqual(await read('acct'), content);
      await target.getBlobClient('public').syncCopyFromURL(publicSource.getBlobClient('src').url);
      assert.deepEqual(await read('public'), content);
    });

    test('a user delegation SAS of the source account', async () => {
      const now = Date.now();
      const keyXml = await fetch(
        `${server.blobUrl!.replace(devAccount, otherAccount)}/?restype=service&comp=userdelegationkey`,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${bearerToken()}`, 'x-ms-version': '2025-01-05' },
          body: `<KeyInfo><Start>${new Date(now - 60_000).toISOString()}</Start><Expiry>${new Date(now + hourMs).toISOString()}</Expiry></KeyInfo>`,
        },
      ).then((response) => response.text());
      const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(keyXml)?.[1] ?? '';
      const key: UserDelegationKey = {
        signedObjectId: field('SignedOid'),
        signedTenantId: field('SignedTid'),
        signedStartsOn: new Date(field('SignedStart')),
        signedExpiresOn: new Date(field('SignedExpiry')),
        signedService: field('SignedService'),
        signedVersion: field('SignedVersion'),
        value: field('Value'),
      };
      const sas = generateBlobSASQueryParameters(
        {
          containerName: 'private',
          blobName: 'src',
          permissions: BlobSASPermissions.parse('r'),
          expiresOn: new Date(now + hourMs),
        },
        key,
        otherAccount,
      ).toString();
      await target.getBlobClient('udk').syncCopyFromURL(`${source.getBlobClient('src').url}?${sas}`);
      assert.deepEqual(await read('udk'), content);
    });

    test('a bearer token in x-ms-copy-source-authorization reads the source; a bad one is refused', async () => {
      await target.getBlobClient('bearer').syncCopyFromURL(source.getBlobClient('src').url, {
        sourceAuthorization: { scheme: 'Bearer', value: bearerToken() },
      });
      assert.deepEqual(await read('bearer'), content);
      await assert.rejects(
        target.getBlobClient('bearer2').syncCopyFromURL(source.getBlobClient('src').url, {
          sourceAuthorization: { scheme: 'Bearer', value: bearerToken('https://elsewhere.example') },
        }),
        refusedWith(403, 401),
      );
    });

    test('refusals: no credential for a private source 404, a wrong SAS 403, a missing source 404, another host 400', async () => {
      const copy = (url: string) => target.getBlobClient('refused').syncCopyFromURL(url);
      await assert.rejects(copy(source.getBlobClient('src').url), refusedWith(404, 404));
      await assert.rejects(copy(blobSasUrl(source, 'src', devKey)), refusedWith(403, 403));
      await assert.rejects(copy(blobSasUrl(source, 'missing')), refusedWith(404, 404));
      await assert.rejects(copy(`http://127.0.0.2:1/${otherAccount}/private/src`), refusedWith(400));
      await assert.rejects(target.getBlobClient('refused').getProperties(), { statusCode: 404 });
    });

    test('Put Blob From URL: the source content and properties, x-ms-source-content-md5 checked', async () => {
      const blob = target.getBlockBlobClient('put-from-url');
      const md5 = createHash('md5').update(content).digest();
      const put = await blob.syncUploadFromURL(blobSasUrl(source, 'src'), { sourceContentMD5: md5 });
      assert.deepEqual(Buffer.from(put.contentMD5!), md5);
      assert.deepEqual(await read('put-from-url'), content);
      assert.equal((await blob.getProperties()).contentType, 'text/x-source');
      const wrong = createHash('md5').update('other').digest();
      await assert.rejects(blob.syncUploadFromURL(blobSasUrl(source, 'src'), { sourceContentMD5: wrong }), {
        statusCode: 400,
      });
      await assert.rejects(blob.syncUploadFromURL(source.getBlobClient('src').url), refusedWith(404, 404));
    });

    test('Put Block From URL stages ranges of the source; Put Block List commits them', async () => {
      const blob = target.getBlockBlobClient('blocks-from-url');
      const ids = ['YQ==', 'Yg=='];
      await blob.stageBlockFromURL(ids[0]!, blobSasUrl(source, 'src'), 10, 10);
      await blob.stageBlockFromURL(ids[1]!, publicSource.getBlobClient('src').url, 0, 5);
      await blob.commitBlockList(ids);
      assert.equal((await read('blocks-from-url')).toString(), 'abcdefghij01234');
      await assert.rejects(blob.stageBlockFromURL('Yw==', blobSasUrl(source, 'src'), 100, 5), refusedWith(400, 416));
    });

    test('Append Block From URL appends a range of the source, with the append conditions', async () => {
      const blob = target.getAppendBlobClient('append-from-url');
      await blob.create();
      const first = await blob.appendBlockFromURL(blobSasUrl(source, 'src'), 0, 4);
      assert.equal(first.blobAppendOffset, '0');
      const second = await blob.appendBlockFromURL(publicSource.getBlobClient('src').url, 16, 4, {
        conditions: { appendPosition: 4 },
      });
      assert.equal(second.blobAppendOffset, '4');
      assert.equal(second.blobCommittedBlockCount, 2);
      assert.equal((await read('append-from-url')).toString(), '0123ghij');
      await assert.rejects(
        blob.appendBlockFromURL(blobSasUrl(source, 'src'), 0, 4, { conditions: { appendPosition: 3 } }),
        { statusCode: 412 },
      );
      await assert.rejects(blob.appendBlockFromURL(source.getBlobClient('src').url, 0, 4), refusedWith(404, 404));
      assert.equal((await read('append-from-url')).toString(), '0123ghij');
    });
  });
}
