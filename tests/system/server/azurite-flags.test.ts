// Azurite's command line, as tools that start Azurite type it, against the real `cerulean` process:
// the three services on the given hosts and ports, the lines Azurite prints as each listens, the
// flags that mean nothing here named in one log line, and a PFX certificate with --pwd
// (docs/switching-from-azurite.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { QueueServiceClient, StorageSharedKeyCredential as QueueKey } from '@azure/storage-queue';
import { AzureNamedKeyCredential, TableServiceClient } from '@azure/data-tables';
import { describeRun, runCli } from '../../helpers/cli.js';
import { uniqueTableName } from '../../helpers/sdk.js';
import {
  ceruleanBanner,
  devAccount,
  devKey,
  freeLoopbackPort,
  makeTempDir,
  removeDir,
  startNodeProcess,
} from '../../helpers/server.js';

const binPath = join(new URL('../../../../bin/cerulean.js', import.meta.url).pathname);

/** Starts `cerulean ARGS` and waits until Azurite's Table line (the last of the three) is printed. */
async function startAzuriteStyle(args: readonly string[]) {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('CERULEAN_')) env[name] = value;
  return startNodeProcess({
    args: [binPath, ...args],
    env,
    name: 'cerulean (Azurite flags)',
    ready: (line) => (line.startsWith('Azurite Table service is successfully listening at ') ? line : undefined),
  });
}

/** Three free loopback ports: blob, queue, table. */
async function threePorts(): Promise<[number, number, number]> {
  return [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
}

function refusesConnections(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe("Azurite's command line", () => {
  let dir = '';
  before(() => {
    dir = makeTempDir('cerulean-azurite-flags-');
  });
  after(() => removeDir(dir));

  test('its flags start the three services on the given ports and print its listening lines', async () => {
    const [blob, queue, table] = await threePorts();
    const location = join(dir, 'workspace');
    const args = ['--blobHost', '127.0.0.1', '--blobPort', String(blob), '--queueHost', '127.0.0.1'];
    args.push(`--queuePort=${queue}`, '--tableHost', '127.0.0.1', '--tablePort', String(table), '-l', location);
    args.push('-s', '-L', '--skipApiVersionCheck', '--disableProductStyleUrl', '--disableTelemetry');
    args.push('-d', join(dir, 'debug.log'), '--oauth', 'basic');
    const server = await startAzuriteStyle(args);
    try {
      const lines = server.output().stdout.split('\n');
      for (const [service, port] of [
        ['Blob', blob],
        ['Queue', queue],
        ['Table', table],
      ] as const) {
        const line = `Azurite ${service} service is successfully listening at http://127.0.0.1:${port}`;
        assert.ok(lines.includes(line), `${line}\n${server.output().stdout}`);
      }
      const banner = lines.map(ceruleanBanner()).find((ready) => ready !== undefined);
      assert.equal(banner?.url, `http://127.0.0.1:${table}/${devAccount}`, 'our banner is printed too');
      const inert = server
        .output()
        .stderr.split('\n')
        .filter((line) => line.includes('Azurite options'));
      assert.equal(inert.length, 1, server.output().stderr);
      for (const flag of ['-L', '--skipApiVersionCheck', '--disableProductStyleUrl', '--disableTelemetry', '-d']) {
        assert.ok(inert[0]!.includes(`${flag} (`), `${flag} named: ${inert[0]}`);
      }
      const blobs = new BlobServiceClient(
        `http://127.0.0.1:${blob}/${devAccount}`,
        new StorageSharedKeyCredential(devAccount, devKey),
      );
      await blobs.createContainer('azflags');
      const queues = new QueueServiceClient(
        `http://127.0.0.1:${queue}/${devAccount}`,
        new QueueKey(devAccount, devKey),
      );
      await queues.createQueue('azflags');
      const tables = new TableServiceClient(
        `http://127.0.0.1:${table}/${devAccount}`,
        new AzureNamedKeyCredential(devAccount, devKey),
        { allowInsecureConnection: true },
      );
      await tables.createTable(uniqueTableName('azflags'));
      assert.ok(existsSync(location) && readdirSync(location).length > 0, '-l is the data directory');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('each service listens on the host its flag names', async () => {
    const [blob, queue, table] = await threePorts();
    const args = ['--inMemoryPersistence', '--extentMemoryLimit', '50', '--blobHost', '127.0.0.2'];
    args.push('--blobPort', String(blob), '--queuePort', String(queue), '--tablePort', String(table));
    const server = await startAzuriteStyle(args);
    try {
      assert.match(server.output().stdout, new RegExp(`^Blob endpoint: http://127\\.0\\.0\\.2:${blob}/`, 'm'));
      assert.match(server.output().stdout, new RegExp(`listening at http://127\\.0\\.0\\.2:${blob}$`, 'm'));
      assert.ok(await refusesConnections('127.0.0.1', blob), 'the blob port is not open on --host');
      assert.ok(!(await refusesConnections('127.0.0.2', blob)));
      assert.ok(!(await refusesConnections('127.0.0.1', table)), 'the others keep the default host');
      assert.match(server.output().stderr, /--extentMemoryLimit \(/);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  /** A self-signed certificate for 127.0.0.1 as PEM files and as a PFX file (password s3cret). */
  function certificate(): { key: string; cert: string; pfx: string } {
    const files = { key: join(dir, 'key.pem'), cert: join(dir, 'cert.pem'), pfx: join(dir, 'cert.pfx') };
    if (existsSync(files.pfx)) return files;
    const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
    const out = ['-keyout', files.key, '-out', files.cert];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', ...out, ...subject]);
    const pkcs12 = ['-in', files.cert, '-inkey', files.key, '-out', files.pfx, '-passout', 'pass:s3cret'];
    execFileSync('openssl', ['pkcs12', '-export', ...pkcs12]);
    return files;
  }

  /** The status of an HTTPS request to the local server that trusts `cert`. */
  function httpsStatus(port: number, cert: string, request: https.RequestOptions): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const sent = https.request({ host: '127.0.0.1', port, ca: readFileSync(cert), ...request }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      sent.once('error', reject).end();
    });
  }

  test('a PFX certificate with --pwd serves HTTPS', async () => {
    const { cert, pfx } = certificate();
    const [blob, queue, table] = await threePorts();
    const args = ['--inMemoryPersistence', '--cert', pfx, '--pwd', 's3cret', '--blobPort', String(blob)];
    args.push('--queuePort', String(queue), '--tablePort', String(table));
    const server = await startAzuriteStyle(args);
    try {
      assert.match(
        server.output().stdout,
        new RegExp(`^Azurite Blob service .* at https://127\\.0\\.0\\.1:${blob}$`, 'm'),
      );
      const status = await httpsStatus(blob, cert, { path: `/${devAccount}?comp=list` });
      assert.equal(status, 403, 'an anonymous listing over TLS is refused by the service, not by TLS');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('--oauth basic: bearer tokens are checked for issuer, audience and lifetime, not their signature', async () => {
    const { cert, key } = certificate();
    const [blob, queue, table] = await threePorts();
    const args = ['--inMemoryPersistence', '--oauth', 'basic', '--cert', cert, '--key', key];
    args.push('--blobPort', String(blob), '--queuePort', String(queue), '--tablePort', String(table));
    const server = await startAzuriteStyle(args);
    const token = (lifetimeSeconds: number): string => {
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        aud: 'https://storage.azure.com',
        iss: 'https://sts.windows.net/t/',
        exp: now + lifetimeSeconds,
      };
      const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${segment({ alg: 'RS256', typ: 'JWT' })}.${segment(claims)}.${Buffer.from('unsigned').toString('base64url')}`;
    };
    const createContainer = (bearer: string, name: string) =>
      httpsStatus(blob, cert, {
        method: 'PUT',
        path: `/${devAccount}/${name}?restype=container`,
        headers: { authorization: `Bearer ${bearer}`, 'x-ms-version': '2021-08-06', 'content-length': '0' },
      });
    try {
      assert.equal(await createContainer(token(600), 'oauthbasic'), 201, server.output().stderr);
      assert.equal(await createContainer(token(-3600), 'oauthexpired'), 401, 'an expired token is refused');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('a flag without its value, or an OAuth level Azurite does not know, is a usage error', async () => {
    for (const args of [['--blobPort'], ['--oauth', 'full'], ['--inMemoryPersistence=yes']]) {
      const result = await runCli(args);
      assert.equal(result.code, 2, describeRun(result));
      assert.match(result.stderr.split('\n')[0]!, /^cerulean: --(blobPort|oauth|inMemoryPersistence) /);
    }
  });
});
