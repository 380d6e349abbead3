// HTTPS through the real server: --cert/--key with a self-signed certificate made here by
// openssl (skipped where openssl is missing: node:crypto cannot make X.509 certificates). The SDK
// trusts it through tlsOptions.ca. Bearer tokens through the SDK's TokenCredential need HTTPS, so
// that flow is tested here too, as is a SAS restricted to spr=https.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import tls from 'node:tls';
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  generateTableSas,
} from '@azure/data-tables';
import type { GetTokenOptions, TokenCredential } from '@azure/core-auth';
import { BlobServiceClient, getBlobServiceAccountAudience, newPipeline as newBlobPipeline } from '@azure/storage-blob';
import { QueueServiceClient, getQueueServiceAccountAudience, newPipeline } from '@azure/storage-queue';
import { uniqueTableName } from '../../helpers/sdk.js';
import { hasOpenssl, makeTestCertificate, trustingCertificate } from '../../helpers/tls.js';
import { devAccount, devKey, makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const skip = hasOpenssl() ? false : 'openssl is not installed';
const credential = new AzureNamedKeyCredential(devAccount, devKey);
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });

let dir: string;
let certPem: string;
let server: RunningServer;

/** A JWT for `aud` from `iss`, signed by the key the server was told to trust. */
function signedToken(aud: string, iss: string): { token: string; expiresOnTimestamp: number } {
  const now = Math.floor(Date.now() / 1000);
  const input = `${Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k' })).toString('base64url')}.${Buffer.from(
    JSON.stringify({ aud, iss, exp: now + 600, nbf: now }),
  ).toString('base64url')}`;
  const token = `${input}.${sign('sha256', Buffer.from(input), signing.privateKey).toString('base64url')}`;
  return { token, expiresOnTimestamp: (now + 600) * 1000 };
}

/** A TokenCredential handing out JWTs signed by the key the server was told to trust. */
const tokens: TokenCredential = {
  async getToken(scopes) {
    assert.deepEqual(scopes, ['https://storage.azure.com/.default']);
    return signedToken('https://storage.azure.com', 'https://issuer.example/');
  },
};

/**
 * A TokenCredential as Entra ID behaves: the audience is the scope without /.default, and the
 * issuer names the tenant asked for (`home` when none is). Records what it was asked.
 */
function entraCredential(home: string, asked: [string[], string | undefined][]): TokenCredential {
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions) {
      const list = typeof scopes === 'string' ? [scopes] : scopes;
      asked.push([list, options?.tenantId]);
      const aud = list[0]!.replace(/\/\.default$/, '');
      return signedToken(aud, `https://login.microsoftonline.com/${options?.tenantId ?? home}/v2.0`);
    },
  };
}

/** The pipeline, trusting the test certificate. */
function trustingTestCertificate<P extends object>(pipeline: P): P {
  return trustingCertificate(pipeline, certPem);
}

/** Options that trust the test certificate (and do not retry). */
const tlsClientOptions = () => ({ tlsOptions: { ca: certPem }, retryOptions: { maxRetries: 0 } });

describe('HTTPS', { skip }, () => {
  before(async () => {
    dir = makeTempDir('cerulean-tls-');
    const { certFile: cert, keyFile: key, certPem: pem } = makeTestCertificate(dir);
    certPem = pem;
    writeFileSync(
      join(dir, 'keys.jwks'),
      JSON.stringify({ keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k' }] }),
    );
    server = await startServer({
      inMemory: true,
      args: ['--cert', cert, '--key', key, '--oauth-jwks', join(dir, 'keys.jwks')],
    });
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('the startup lines name an https endpoint and connection string', () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
    assert.match(server.connectionString, /^DefaultEndpointsProtocol=https;.*TableEndpoint=https:\/\//);
  });

  test('the SDK works over TLS from the printed connection string', async () => {
    const name = uniqueTableName('tls');
    const client = TableClient.fromConnectionString(server.connectionString, name, tlsClientOptions());
    await client.createTable();
    await client.createEntity({ partitionKey: 'p', rowKey: 'r', v: 1 });
    assert.equal((await client.getEntity<{ v: number }>('p', 'r')).v, 1);
    await client.submitTransaction([['upsert', { partitionKey: 'p', rowKey: 's' }]]);
    const names: string[] = [];
    for await (const entity of client.listEntities()) names.push(entity.rowKey!);
    assert.deepEqual(names, ['r', 's']);
  });

  test('Location and odata.metadata written over TLS use https', async () => {
    const name = uniqueTableName('loc');
    const date = new Date().toUTCString();
    const path = `/${devAccount}/Tables`;
    const signature = createHmac('sha256', Buffer.from(devKey, 'base64'))
      .update(`${date}\n/${devAccount}${path}`)
      .digest('base64');
    const body = JSON.stringify({ TableName: name });
    const response = await new Promise<{ headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const request = https.request(`https://127.0.0.1:${server.port}${path}`, {
        method: 'POST',
        ca: certPem,
        headers: {
          'x-ms-date': date,
          'x-ms-version': '2019-02-02',
          Authorization: `SharedKeyLite ${devAccount}:${signature}`,
          'Content-Type': 'application/json',
          Accept: 'application/json;odata=minimalmetadata',
          'Content-Length': Buffer.byteLength(body),
        },
      });
      request.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk));
        res.on('end', () => resolve({ headers: res.headers, body: text }));
      });
      request.on('error', reject);
      request.end(body);
    });
    assert.equal(response.headers.location, `https://127.0.0.1:${server.port}/${devAccount}/Tables('${name}')`);
    assert.match(JSON.parse(response.body)['odata.metadata'], /^https:\/\//);
  });

  test('a SAS restricted to spr=https is accepted over TLS', async () => {
    const name = uniqueTableName('spr');
    const owner = new TableClient(server.url, name, credential, tlsClientOptions());
    await owner.createTable();
    await owner.createEntity({ partitionKey: 'p', rowKey: 'r' });
    const sas = generateTableSas(name, credential, { permissions: { query: true }, protocol: 'https' });
    const client = new TableClient(server.url, name, new AzureSASCredential(sas), tlsClientOptions());
    assert.equal((await client.getEntity('p', 'r')).rowKey, 'r');
  });

  test('the SDK with a TokenCredential (Entra ID) over TLS', async () => {
    const name = uniqueTableName('token');
    const service = new TableServiceClient(server.url, tokens, tlsClientOptions());
    await service.createTable(name);
    const client = new TableClient(server.url, name, tokens, tlsClientOptions());
    await client.createEntity({ partitionKey: 'p', rowKey: 'r' });
    assert.equal((await client.getEntity('p', 'r')).rowKey, 'r');
    await service.deleteTable(name);
  });

  test('the queue and blob SDKs with an account-scoped audience (getQueueServiceAccountAudience)', async () => {
    const asked: [string[], string | undefined][] = [];
    const credential = entraCredential('00000000-0000-0000-0000-00000000000a', asked);
    const queueAudience = getQueueServiceAccountAudience(devAccount);
    const queues = new QueueServiceClient(
      server.queueUrl!,
      trustingTestCertificate(newPipeline(credential, { audience: queueAudience, retryOptions: { maxTries: 1 } })),
    );
    const queue = queues.getQueueClient(uniqueTableName('aud').toLowerCase());
    await queue.create();
    await queue.sendMessage('hello');
    assert.equal((await queue.peekMessages()).peekedMessageItems[0]?.messageText, 'hello');
    await queue.delete();
    const blobAudience = getBlobServiceAccountAudience(devAccount);
    const blobs = new BlobServiceClient(
      server.blobUrl!,
      trustingTestCertificate(newBlobPipeline(credential, { audience: blobAudience, retryOptions: { maxTries: 1 } })),
    );
    const container = blobs.getContainerClient(uniqueTableName('aud').toLowerCase());
    await container.create();
    await container.delete();
    // Each client asked for its account-scoped audience and never needed a challenge's retry.
    const scopes = new Set(asked.map(([list, tenant]) => `${list.join(' ')} ${tenant ?? '-'}`));
    assert.deepEqual(
      [...scopes],
      [
        `https://${devAccount}.queue.core.windows.net/.default -`,
        `https://${devAccount}.blob.core.windows.net/.default -`,
      ],
    );
  });

  test("the SDK recovers through the challenge naming the configured issuer's tenant", async () => {
    const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    const tenantServer = await startServer({
      inMemory: true,
      args: [
        ...['--cert', join(dir, 'cert.pem'), '--key', join(dir, 'key.pem'), '--oauth-jwks', join(dir, 'keys.jwks')],
        ...['--oauth-issuer', `https://login.microsoftonline.com/${tenant}/v2.0`],
      ],
    });
    try {
      // Without a tenant the credential signs in to its home tenant, which the server refuses.
      const asked: [string[], string | undefined][] = [];
      const credential = entraCredential('00000000-0000-0000-0000-00000000000b', asked);
      const queues = new QueueServiceClient(
        tenantServer.queueUrl!,
        trustingTestCertificate(newPipeline(credential, { retryOptions: { maxTries: 1 } })),
      );
      await queues.getQueueClient(uniqueTableName('tenant').toLowerCase()).create();
      assert.deepEqual(asked, [
        [['https://storage.azure.com/.default'], undefined],
        [['https://storage.azure.com/.default'], tenant],
      ]);
    } finally {
      await tenantServer.stop();
    }
  });

  test('an authenticated 13 MB $batch sent whole before reading gets its full 413 over TLS', async () => {
    // As the Python SDK does it: the whole body goes out before the response is read, so a server
    // that answers early and closes breaks the upload ("EOF occurred in violation of protocol").
    const body = Buffer.alloc(13_000_000, 0x20);
    const date = new Date().toUTCString();
    const path = `/${devAccount}/$batch`;
    const signature = createHmac('sha256', Buffer.from(devKey, 'base64'))
      .update(`${date}\n/${devAccount}${path}`)
      .digest('base64');
    const head =
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nx-ms-date: ${date}\r\nx-ms-version: 2019-02-02\r\n` +
      `Authorization: SharedKeyLite ${devAccount}:${signature}\r\nContent-Type: multipart/mixed; boundary=batch_x\r\n` +
      `Content-Length: ${body.length}\r\n\r\n`;
    const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: certPem });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await once(socket, 'secureConnect');
    socket.write(head);
    for (let at = 0; at < body.length; at += 1 << 20) {
      if (!socket.write(body.subarray(at, at + (1 << 20)))) await once(socket, 'drain');
    }
    // Every byte is with the kernel (write errors reject here), only then is the answer read.
    await new Promise<void>((resolve, reject) => socket.write('', (error) => (error ? reject(error) : resolve())));
    const answer = await new Promise<string>((resolve, reject) => {
      const check = () => {
        const text = Buffer.concat(received).toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? NaN);
        if (end >= 0 && text.length >= end + 4 + length) resolve(text);
      };
      socket.on('data', check);
      socket.once('error', reject);
      void closed.then(() =>
        reject(
          new Error(`closed before a whole response: ${Buffer.concat(received).toString('latin1').slice(0, 200)}`),
        ),
      );
      check();
    });
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /"code":"RequestBodyTooLarge"/);
  });

  test('plain HTTP to the TLS port gets no answer', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const request = http.request({ host: '127.0.0.1', port: server.port, path: '/devstoreaccount1/Tables' });
      request.on('response', (response) => resolve(`status ${response.statusCode}`));
      request.on('error', (error) => resolve(`error ${(error as NodeJS.ErrnoException).code}`));
      request.setTimeout(5000, () => request.destroy(new Error('timeout')));
      request.end();
    });
    assert.notEqual(outcome, 'status 200');
  });

  test('missing, unreadable or mismatched certificate files stop the server at startup', async () => {
    const otherKey = join(dir, 'other-key.pem');
    writeFileSync(
      otherKey,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    const cases: [string[], RegExp][] = [
      [['--cert', join(dir, 'cert.pem')], /--cert and --key go together/],
      [['--cert', join(dir, 'nope.pem'), '--key', join(dir, 'key.pem')], /cannot read/],
      [['--cert', join(dir, 'cert.pem'), '--key', otherKey], /--cert\/--key/],
    ];
    for (const [args, message] of cases) await assert.rejects(startServer({ inMemory: true, args }), message);
  });
});
