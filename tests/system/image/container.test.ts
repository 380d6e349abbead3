// The container image (docs/container.md) as its users start it: through the Testcontainers Azurite
// module (`new AzuriteContainer('cerulean:local')`) against podman's Docker-compatible API, with the
// default account, a custom one and in memory, each reached by the three official SDKs through the
// connection string the module gives, and over HTTPS as the module's withSsl starts it (withSsl came with
// @testcontainers/azurite 12, whose testcontainers 12 needs Node.js 22: here, 11 on Node.js 20); and with
// `podman run`: data kept in the /data volume across a restart, a clean stop on SIGTERM, a non-root server
// process, Azurite's commands on the PATH.
//
// The image is built once (scripts/image/build.mjs: skipped while an image of the same content is there).
// Testcontainers' reaper (Ryuk) is off: it is an image of its own pulled from Docker Hub, which these
// machines cannot reach; each test removes what it started instead.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { GenericContainer, Wait } from 'testcontainers';
import { AzuriteContainer, type StartedAzuriteContainer } from '@testcontainers/azurite';
import { BlobServiceClient, StorageSharedKeyCredential, newPipeline as newBlobPipeline } from '@azure/storage-blob';
import { QueueServiceClient, StorageSharedKeyCredential as QueueKey, newPipeline } from '@azure/storage-queue';
import { TableClient } from '@azure/data-tables';
import { devAccount, devKey, makeTempDir, removeDir } from '../../helpers/server.js';
import {
  ensureImage,
  imageName,
  podman,
  podmanSkip,
  serviceUser,
  startPodmanService,
  type PodmanService,
} from '../../helpers/podman.js';
import { hasOpenssl, makeTestCertificate, trustingCertificate } from '../../helpers/tls.js';

const skip = podmanSkip();
const sslSkip = skip || (!hasOpenssl() && 'openssl is missing');
const allHosts = ['--blobHost', '0.0.0.0', '--queueHost', '0.0.0.0', '--tableHost', '0.0.0.0'];
const azuriteCommand = ['azurite', '-l', '/data', ...allHosts];

/** `Name=value;` pairs of a connection string. */
function parse(connectionString: string): Map<string, string> {
  const pairs = connectionString.split(';').filter((pair) => pair !== '');
  return new Map(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

/**
 * Writes and reads back a blob, a queue message and an entity through the connection string's endpoints
 * and key; over HTTPS trusting `ca` (the storage SDKs take a CA only through their pipeline).
 */
async function roundTrip(connectionString: string, ca?: string): Promise<void> {
  const parts = parse(connectionString);
  const [account, key] = [parts.get('AccountName')!, parts.get('AccountKey')!];
  const trust = <P extends object>(pipeline: P): P => (ca === undefined ? pipeline : trustingCertificate(pipeline, ca));
  const blobs =
    ca === undefined
      ? BlobServiceClient.fromConnectionString(connectionString)
      : new BlobServiceClient(
          parts.get('BlobEndpoint')!,
          trust(newBlobPipeline(new StorageSharedKeyCredential(account, key))),
        );
  const container = blobs.getContainerClient('images');
  await container.create();
  await container.getBlockBlobClient('a.txt').upload('hello', 5);
  assert.equal((await container.getBlobClient('a.txt').downloadToBuffer()).toString(), 'hello');
  const queues =
    ca === undefined
      ? QueueServiceClient.fromConnectionString(connectionString)
      : new QueueServiceClient(parts.get('QueueEndpoint')!, trust(newPipeline(new QueueKey(account, key))));
  const queue = queues.getQueueClient('jobs');
  await queue.create();
  await queue.sendMessage('job 1');
  const [message] = (await queue.receiveMessages()).receivedMessageItems;
  assert.equal(message?.messageText, 'job 1');
  const options = ca === undefined ? { allowInsecureConnection: true } : { tlsOptions: { ca } };
  const table = TableClient.fromConnectionString(connectionString, 'People', options);
  await table.createTable();
  await table.createEntity({ partitionKey: 'p', rowKey: 'r', name: 'Ada' });
  assert.equal((await table.getEntity<{ name: string }>('p', 'r')).name, 'Ada');
}

/** PID 1's real, effective, saved and file-system uids, with the image's /bin/sh alone (no coreutils). */
const pid1Uids = 'while read -r k v; do if [ "$k" = Uid: ]; then echo $v; fi; done < /proc/1/status';
const allServiceUser = Array(4).fill(serviceUser.id).join(' ');

/** What `sh -c SCRIPT` prints in the running container. */
async function shell(container: StartedAzuriteContainer, script: string): Promise<string> {
  const result = await container.exec(['sh', '-c', script]);
  assert.equal(result.exitCode, 0, result.output);
  return result.output.trim();
}

describe('the container image through the Testcontainers Azurite module', { skip }, () => {
  let dir = '';
  let service: PodmanService | undefined;
  before(async () => {
    dir = makeTempDir('cerulean-image-');
    await ensureImage();
    service = await startPodmanService(dir);
    process.env.DOCKER_HOST = service.dockerHost;
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  });
  after(async () => {
    await service?.stop();
    removeDir(dir);
  });

  /** Starts `container`, runs `body` on it, stops and removes it. */
  async function withStarted(container: AzuriteContainer, body: (started: StartedAzuriteContainer) => Promise<void>) {
    const started = await container.start();
    try {
      await body(started);
    } finally {
      await started.stop();
    }
  }

  test('the default account: blobs, queues and tables, kept in /data', async () => {
    await withStarted(new AzuriteContainer(imageName), async (started) => {
      assert.equal(started.getAccountName(), devAccount);
      await roundTrip(started.getConnectionString());
      assert.notEqual(await shell(started, 'echo /data/*'), '/data/*', 'the data is in the /data volume');
    });
  });

  test('a custom account (AZURITE_ACCOUNTS), the development key refused for it', async () => {
    const key = Buffer.from('a key of the image test, thirty-two+').toString('base64');
    const container = new AzuriteContainer(imageName).withAccountName('imagetest').withAccountKey(key);
    await withStarted(container, async (started) => {
      const connectionString = started.getConnectionString();
      assert.match(connectionString, /AccountName=imagetest;/);
      await roundTrip(connectionString);
      const wrongKey = connectionString.replace(key, devKey);
      const denied = TableClient.fromConnectionString(wrongKey, 'People', { allowInsecureConnection: true });
      await assert.rejects(denied.createEntity({ partitionKey: 'p', rowKey: 'x' }), { statusCode: 403 });
    });
  });

  test('withInMemoryPersistence: served, nothing written to /data', async () => {
    await withStarted(new AzuriteContainer(imageName).withInMemoryPersistence(), async (started) => {
      await roundTrip(started.getConnectionString());
      assert.equal(await shell(started, 'echo /data/*'), '/data/*');
    });
  });

  test("HTTPS with a PEM certificate and key, as the module's withSsl passes them", { skip: sslSkip }, async () => {
    const { keyFile, certPem } = makeTestCertificate(dir);
    const container = new GenericContainer(imageName)
      .withEntrypoint(['azurite'])
      .withCommand([...allHosts, '--cert', '/azurite-cert.pem', '--key', '/azurite-key.pem'])
      .withCopyContentToContainer([
        { content: certPem, target: '/azurite-cert.pem', mode: 0o644 },
        { content: readFileSync(keyFile, 'utf8'), target: '/azurite-key.pem', mode: 0o600 },
      ])
      .withExposedPorts(10000, 10001, 10002)
      .withWaitStrategy(Wait.forLogMessage(/Table service is successfully listening/));
    const started = await container.start();
    try {
      // The certificate names localhost; the ports are published on every host address (Testcontainers
      // names podman's bridge gateway as the host).
      const endpoint = (port: number) => `https://localhost:${started.getMappedPort(port)}/${devAccount}`;
      const connectionString =
        `DefaultEndpointsProtocol=https;AccountName=${devAccount};AccountKey=${devKey};` +
        `BlobEndpoint=${endpoint(10000)};QueueEndpoint=${endpoint(10001)};TableEndpoint=${endpoint(10002)};`;
      await roundTrip(connectionString, certPem);
      const uids = await started.exec(['sh', '-c', pid1Uids]);
      assert.equal(uids.output.trim(), allServiceUser, 'root is dropped once the key (root-owned, 0600) is read');
    } finally {
      await started.stop();
    }
  });
});

/** Waits until the container has printed Azurite's Table line `times` times (once per start). */
async function untilListening(name: string, times: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  const line = 'Azurite Table service is successfully listening at ';
  while (podman(['logs', name]).split(line).length - 1 < times) {
    if (Date.now() > deadline) throw new Error(`${name} did not start:\n${podman(['logs', name])}`);
    await sleep(200);
  }
}

/** The development account's connection string for the ports `name` publishes on the loopback. */
function devConnectionString(name: string): string {
  const port = (containerPort: number) =>
    podman(['port', name, `${containerPort}/tcp`])
      .trim()
      .split(':')
      .at(-1);
  return (
    `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};` +
    `BlobEndpoint=http://127.0.0.1:${port(10000)}/${devAccount};` +
    `QueueEndpoint=http://127.0.0.1:${port(10001)}/${devAccount};` +
    `TableEndpoint=http://127.0.0.1:${port(10002)}/${devAccount};`
  );
}

describe('the container image under podman run', { skip }, () => {
  const name = `cerulean-image-test-${process.pid}`;
  const volume = `${name}-data`;
  before(ensureImage);
  after(() => {
    podman(['rm', '--force', '--ignore', name]);
    podman(['volume', 'rm', '--force', volume]);
  });

  test('its configuration: Azurite command, non-root user, /data volume, the three ports', () => {
    const config = JSON.parse(podman(['image', 'inspect', '--format', '{{json .Config}}', imageName]));
    assert.deepEqual(config.Cmd, azuriteCommand);
    assert.equal(config.User, 'root', 'root only until the TLS files are taken (scripts/image/entry.mjs)');
    assert.deepEqual(Object.keys(config.Volumes), ['/data']);
    assert.deepEqual(Object.keys(config.ExposedPorts).sort(), ['10000/tcp', '10001/tcp', '10002/tcp']);
    const found = podman([
      'run',
      '--rm',
      imageName,
      'sh',
      '-c',
      'for c in azurite azurite-blob azurite-queue azurite-table cerulean; do command -v $c; done',
    ]);
    assert.deepEqual(
      found.trim().split('\n'),
      ['azurite', 'azurite-blob', 'azurite-queue', 'azurite-table', 'cerulean'].map(
        (command) => `/usr/local/bin/${command}`,
      ),
    );
  });

  test('data kept in the /data volume across a restart; SIGTERM stops it cleanly; not root', async () => {
    const publish = [10000, 10001, 10002].flatMap((port) => ['--publish', `127.0.0.1::${port}`]);
    podman(['run', '--detach', '--name', name, '--volume', `${volume}:/data`, ...publish, imageName]);
    await untilListening(name, 1);
    await roundTrip(devConnectionString(name));
    // The image has /bin/sh alone (no coreutils): its builtins read /proc.
    const comm = podman(['exec', name, 'sh', '-c', 'read -r comm < /proc/1/comm; echo "$comm"']);
    assert.equal(comm.trim(), 'node', 'node is PID 1: SIGTERM reaches the server itself');
    const uid = podman(['exec', name, 'sh', '-c', pid1Uids]);
    assert.equal(uid.trim(), allServiceUser, 'the server runs as the cerulean user, not root');
    podman(['stop', '--time', '30', name]);
    assert.equal(podman(['inspect', '--format', '{{.State.ExitCode}}', name]).trim(), '0', podman(['logs', name]));
    podman(['start', name]);
    await untilListening(name, 2);
    const connectionString = devConnectionString(name);
    const table = TableClient.fromConnectionString(connectionString, 'People', { allowInsecureConnection: true });
    assert.equal((await table.getEntity<{ name: string }>('p', 'r')).name, 'Ada');
    const blob = BlobServiceClient.fromConnectionString(connectionString)
      .getContainerClient('images')
      .getBlobClient('a.txt');
    assert.equal((await blob.downloadToBuffer()).toString(), 'hello');
    const queue = QueueServiceClient.fromConnectionString(connectionString).getQueueClient('jobs');
    assert.equal((await queue.getProperties()).approximateMessagesCount, 1, 'the received message is kept');
  });
});
