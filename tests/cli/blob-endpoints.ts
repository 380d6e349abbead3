// Blob endpoints for the CLI's blob tests: a Cerulean server process (its Blob endpoint from the
// banner) or Azurite's Blob service from node_modules, in memory on a free loopback port.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import {
  devAccount,
  devKey,
  freeLoopbackPort,
  makeTempDir,
  removeDir,
  startNodeProcess,
  startServer,
  type ServerOptions,
} from '../helpers/server.js';

const azuriteBlobMain = fileURLToPath(new URL('../../../node_modules/azurite/dist/src/blob/main.js', import.meta.url));

export interface BlobTestEndpoint {
  /** `http://127.0.0.1:PORT/devstoreaccount1` */
  readonly blobUrl: string;
  /** Names only the Blob endpoint. */
  readonly connectionString: string;
  /** Cerulean's own, naming its Table, Queue and Blob endpoints; undefined for Azurite's Blob service. */
  readonly accountConnectionString: string | undefined;
  readonly service: BlobServiceClient;
  stop(): Promise<void>;
}

export function blobEndpointAt(
  blobUrl: string,
  stop: () => Promise<void>,
  accountConnectionString?: string,
): BlobTestEndpoint {
  return {
    blobUrl,
    accountConnectionString,
    connectionString: `AccountName=${devAccount};AccountKey=${devKey};BlobEndpoint=${blobUrl}`,
    // No retries, so no keep-alive either: a request on a pooled socket the server closes at that
    // moment for idleness (Azurite: after 5 s) would fail with "socket hang up", unretried.
    service: new BlobServiceClient(blobUrl, new StorageSharedKeyCredential(devAccount, devKey), {
      retryOptions: { maxTries: 1 },
      keepAliveOptions: { enable: false },
    }),
    stop,
  };
}

/** A Cerulean server process (its own store, on disk unless `options` say otherwise) and its Blob endpoint. */
export async function startCeruleanBlob(options: ServerOptions = {}): Promise<BlobTestEndpoint> {
  const server = await startServer(options);
  if (server.blobUrl === undefined) {
    await server.stop();
    throw new Error('the server printed no Blob endpoint');
  }
  return blobEndpointAt(server.blobUrl, async () => void (await server.stop()), server.connectionString);
}

/** Azurite's Blob service in memory. */
export async function startAzuriteBlob(): Promise<BlobTestEndpoint> {
  const workDir = makeTempDir('cerulean-azurite-blob-');
  // Azurite prints the port it was given, so `--blobPort 0` would leave the real one unknown.
  const port = await freeLoopbackPort();
  const args = [azuriteBlobMain, '--inMemoryPersistence', '--blobHost', '127.0.0.1', '--blobPort', String(port)];
  try {
    const azurite = await startNodeProcess({
      name: 'Azurite Blob',
      args: [...args, '--disableTelemetry', '--silent', '--skipApiVersionCheck'],
      cwd: workDir,
      ready: (line) => (line.includes('successfully listens') ? true : undefined),
    });
    return blobEndpointAt(`http://127.0.0.1:${port}/${devAccount}`, async () => {
      await azurite.stop().catch(() => undefined); // it needed SIGKILL, but it is stopped
      removeDir(workDir);
    });
  } catch (error) {
    removeDir(workDir);
    throw error;
  }
}

/** Deterministic bytes (a counter hashed block by block): large, incompressible, cheap to recompute. */
export function patternBytes(sizeBytes: number, seed: string): Buffer {
  const out = Buffer.alloc(sizeBytes);
  for (let offset = 0, n = 0; offset < sizeBytes; offset += 32, n++)
    createHash('sha256').update(`${seed}:${n}`).digest().copy(out, offset);
  return out;
}

/** Everything a backup or copy must carry of one container, comparable with deepEqual. */
export async function describeContainer(service: BlobServiceClient, name: string): Promise<unknown> {
  const container = service.getContainerClient(name);
  const properties = await container.getProperties();
  const policy = await container.getAccessPolicy();
  const blobs: unknown[] = [];
  for await (const item of container.listBlobsFlat({ includeMetadata: true })) {
    const content = await container.getBlobClient(item.name).downloadToBuffer();
    const p = item.properties;
    blobs.push({
      name: item.name,
      type: p.blobType,
      size: p.contentLength,
      sha256: createHash('sha256').update(content).digest('hex'),
      // An absent header is an empty element in a listing (Cerulean, Azure) or no element (Azurite).
      headers: [p.contentType, p.contentEncoding, p.contentLanguage, p.contentDisposition, p.cacheControl].map(
        (value) => value || undefined,
      ),
      metadata: typeof item.metadata === 'object' ? item.metadata : {},
    });
  }
  return {
    metadata: properties.metadata,
    publicAccess: policy.blobPublicAccess ?? null,
    acl: policy.signedIdentifiers.map(({ id, accessPolicy }) => ({
      id,
      permissions: accessPolicy.permissions,
      startsOn: accessPolicy.startsOn?.toISOString(),
      expiresOn: accessPolicy.expiresOn?.toISOString(),
    })),
    blobs,
  };
}

/** A container with a block blob of more than two blocks, an append blob of three appends and an empty blob. */
export async function seedContainer(service: BlobServiceClient, name: string): Promise<void> {
  const container = service.getContainerClient(name);
  await container.create({ metadata: { owner: 'tests', purpose: 'backup' } });
  await container.setAccessPolicy('blob', [
    {
      id: 'readers',
      accessPolicy: {
        startsOn: new Date('2026-01-01T00:00:00Z'),
        expiresOn: new Date('2030-01-01T00:00:00Z'),
        permissions: 'rl',
      },
    },
  ]);
  const large = patternBytes(10 * 1024 * 1024 + 12_345, name);
  await container.getBlockBlobClient('folder/large.bin').uploadData(large, {
    blockSize: 4 * 1024 * 1024,
    maxSingleShotSize: 1024 * 1024,
    blobHTTPHeaders: {
      blobContentType: 'application/x-test',
      blobContentEncoding: 'identity',
      blobContentLanguage: 'en',
      blobContentDisposition: 'attachment; filename="large.bin"',
      blobCacheControl: 'no-cache',
    },
    metadata: { origin: 'seed', size: String(large.byteLength) },
  });
  const log = container.getAppendBlobClient('events.log');
  await log.create({ blobHTTPHeaders: { blobContentType: 'text/plain; charset=utf-8' }, metadata: { kind: 'log' } });
  for (const line of ['first\n', 'second é\n', patternBytes(70_000, 'append').toString('base64')])
    await log.appendBlock(line, Buffer.byteLength(line));
  await container.getBlockBlobClient('empty').upload('', 0);
}
