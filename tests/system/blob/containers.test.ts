// The Blob service's containers and account operations through the official JS SDK
// (@azure/storage-blob) with a connection string naming the server's blob endpoint, and through
// raw HTTP for exact status codes, headers and XML: on SQLite and on PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AccountSASPermissions,
  AnonymousCredential,
  BlobClient,
  BlobSASPermissions,
  ContainerClient,
  ContainerSASPermissions,
  generateAccountSASQueryParameters,
  generateBlobSASQueryParameters,
  BlobServiceClient,
  StorageSharedKeyCredential,
  type ContainerItem,
} from '@azure/storage-blob';
import { send } from '../../helpers/http.js';
import { refused } from '../../helpers/rest-errors.js';
import { blobEndpoint, blobServiceClient, blobVersion, uniqueContainerName } from '../../helpers/blob.js';
import {
  assertQueueError,
  blobQueueSend,
  childText,
  queueStringToSign,
  xmlOf,
  type QueueRequest,
} from '../../helpers/queue.js';
import { hmacBase64 } from '../../helpers/http.js';
import { devAccount, devKey, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

const credential = new StorageSharedKeyCredential(devAccount, devKey);
const pipeline = { retryOptions: { maxTries: 1 } };

function blobPort(server: RunningServer): number {
  return Number(new URL(blobEndpoint(server)).port);
}

/** One raw request to the blob endpoint, signed with Shared Key (or not: `auth`), primary or secondary. */
function blobSend(server: RunningServer, request: QueueRequest) {
  return blobQueueSend(blobPort(server), blobVersion, request);
}

async function freshContainer(service: BlobServiceClient, prefix = 'c'): Promise<ContainerClient> {
  const container = service.getContainerClient(uniqueContainerName(prefix));
  await container.create();
  return container;
}

/** A client of `url` that sends no credential at all. */
function anonymous(url: string): ContainerClient {
  return new ContainerClient(url, new AnonymousCredential(), pipeline);
}

async function containerLifecycle(service: BlobServiceClient): Promise<void> {
  const container = service.getContainerClient(uniqueContainerName());
  const created = await container.create({ metadata: { Color: 'blue' }, access: 'blob' });
  assert.equal(created._response.status, 201);
  assert.match(created.etag ?? '', /^"0x[0-9A-F]+"$/);
  await refused(container.create(), 409, 'ContainerAlreadyExists');
  assert.equal((await container.createIfNotExists()).succeeded, false);
  const properties = await container.getProperties();
  assert.deepEqual(properties.metadata, { color: 'blue' });
  assert.equal(properties.blobPublicAccess, 'blob');
  assert.equal(properties.leaseState, 'available');
  assert.equal(properties.leaseStatus, 'unlocked');
  assert.equal(properties.hasImmutabilityPolicy, false);
  assert.equal(properties.hasLegalHold, false);
  assert.equal(properties.defaultEncryptionScope, '$account-encryption-key');
  assert.equal(properties.denyEncryptionScopeOverride, false);
  assert.equal(properties.etag, created.etag);
  const changed = await container.setMetadata({ size: 'large' });
  assert.notEqual(changed.etag, created.etag);
  assert.deepEqual((await container.getProperties()).metadata, { size: 'large' });
  assert.equal(await container.exists(), true);
  await container.delete();
  assert.equal(await container.exists(), false);
  await refused(container.delete(), 404, 'ContainerNotFound');
  await refused(container.getProperties(), 404, 'ContainerNotFound');
  await refused(service.getContainerClient('Bad_Name').create(), 400, 'InvalidResourceName');
}

async function leasedContainer(service: BlobServiceClient): Promise<void> {
  const container = await freshContainer(service, 'lease');
  const lease = container.getBlobLeaseClient();
  await lease.acquireLease(-1);
  const properties = await container.getProperties();
  assert.equal(properties.leaseState, 'leased');
  assert.equal(properties.leaseStatus, 'locked');
  assert.equal(properties.leaseDuration, 'infinite');
  const listed = (await service.listContainers({ prefix: container.containerName }).next()).value as ContainerItem;
  assert.equal(listed?.properties.leaseState, 'leased');
  assert.equal(listed?.properties.leaseDuration, 'infinite');
  await refused(container.delete(), 412, 'LeaseIdMissing');
  await refused(
    container.delete({ conditions: { leaseId: '11111111-1111-1111-1111-111111111111' } }),
    412,
    'LeaseIdMismatchWithContainerOperation',
  );
  // Metadata may change without the lease id.
  await container.setMetadata({ still: 'writable' });
  await container.delete({ conditions: { leaseId: lease.leaseId } });
  assert.equal(await container.exists(), false);
}

async function listingPages(service: BlobServiceClient): Promise<void> {
  const prefix = uniqueContainerName('p');
  const names = ['a', 'b', 'c', 'd', 'e'].map((letter) => `${prefix}-${letter}`);
  for (const name of names) await service.getContainerClient(name).create({ metadata: { letter: name.slice(-1) } });
  const seen: ContainerItem[] = [];
  let pages = 0;
  for await (const page of service.listContainers({ prefix, includeMetadata: true }).byPage({ maxPageSize: 2 })) {
    pages++;
    assert.ok(page.containerItems.length <= 2);
    seen.push(...page.containerItems);
  }
  assert.deepEqual(
    seen.map((item) => item.name),
    names,
  );
  assert.ok(pages >= 3, `${pages} pages of at most 2 for 5 containers`);
  assert.deepEqual(seen[2]?.metadata, { letter: 'c' });
  assert.equal(seen[0]?.properties.leaseState, 'available');
  assert.equal(seen[0]?.properties.defaultEncryptionScope, '$account-encryption-key');
  assert.match(seen[0]?.properties.etag ?? '', /^"0x[0-9A-F]+"$/);
}

async function accessPolicies(service: BlobServiceClient): Promise<void> {
  const container = await freshContainer(service);
  const startsOn = new Date('2030-01-01T00:00:00Z');
  const expiresOn = new Date('2030-01-02T00:00:00Z');
  await container.setAccessPolicy('container', [
    { id: 'readers', accessPolicy: { permissions: 'rl', startsOn, expiresOn } },
  ]);
  const acl = await container.getAccessPolicy();
  assert.equal(acl.blobPublicAccess, 'container');
  assert.equal(acl.signedIdentifiers.length, 1);
  assert.equal(acl.signedIdentifiers[0]?.id, 'readers');
  assert.equal(acl.signedIdentifiers[0]?.accessPolicy.permissions, 'rl');
  assert.equal(acl.signedIdentifiers[0]?.accessPolicy.expiresOn?.toISOString(), expiresOn.toISOString());
  // No public access header: private again, and the policies are replaced by none.
  await container.setAccessPolicy(undefined, []);
  const cleared = await container.getAccessPolicy();
  assert.equal(cleared.blobPublicAccess, undefined);
  assert.deepEqual(cleared.signedIdentifiers, []);
  const six = Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, accessPolicy: { permissions: 'r' } }));
  await refused(container.setAccessPolicy(undefined, six), 400, 'InvalidXmlDocument');
}

async function serviceProperties(service: BlobServiceClient): Promise<void> {
  const rule = {
    allowedOrigins: 'https://example.com',
    allowedMethods: 'GET,PUT',
    allowedHeaders: 'x-ms-meta-*',
    exposedHeaders: 'x-ms-request-id',
    maxAgeInSeconds: 60,
  };
  await service.setProperties({ cors: [rule] });
  const properties = await service.getProperties();
  assert.deepEqual(properties.cors, [rule]);
  assert.equal(properties.deleteRetentionPolicy?.enabled, false);
  assert.equal(properties.staticWebsite?.enabled, false);
  await refused(service.setProperties({ staticWebsite: { enabled: true } }), 400, 'InvalidXmlNodeValue');
  await service.setProperties({ cors: [] });
  const info = await service.getAccountInfo();
  assert.equal(info.skuName, 'Standard_LRS');
  assert.equal(info.accountKind, 'StorageV2');
  assert.equal(info.isHierarchicalNamespaceEnabled, true);
  const stats = await service.getStatistics();
  assert.equal(stats.geoReplication?.status, 'live');
}

describe('Blob containers through @azure/storage-blob', () => {
  for (const engine of serverEngines) {
    describe(engine.label, () => {
      let server: RunningServer;
      let service: BlobServiceClient;
      before(async () => {
        server = await startServer(engine.options);
        service = blobServiceClient(server);
      });
      after(async () => server?.stop());

      test('create, properties, metadata, exists, delete and their errors', () => containerLifecycle(service));
      test('List Containers pages by marker, with metadata', () => listingPages(service));
      test('a leased container shows its lease and is deleted only with its lease id', () => leasedContainer(service));
      test('stored access policies and the public access level', () => accessPolicies(service));
      test('service properties, account information and stats', () => serviceProperties(service));

      test('an account SAS with ss=b lists containers; one without b is refused', async () => {
        const container = await freshContainer(service, 'sas');
        const sas = (services: string) =>
          generateAccountSASQueryParameters(
            {
              expiresOn: new Date(Date.now() + 3_600_000),
              permissions: AccountSASPermissions.parse('rl'),
              resourceTypes: 'sco',
              services,
            },
            credential,
          ).toString();
        const endpoint = service.url.replace(/\/$/, '');
        const withSas = new BlobServiceClient(`${endpoint}?${sas('b')}`, new AnonymousCredential(), pipeline);
        const names = [];
        for await (const item of withSas.listContainers({ prefix: container.containerName })) names.push(item.name);
        assert.deepEqual(names, [container.containerName]);
        const queuesOnly = new BlobServiceClient(`${endpoint}?${sas('q')}`, new AnonymousCredential(), pipeline);
        await refused(queuesOnly.getProperties(), 403, 'AuthorizationServiceMismatch');
      });

      test('a container SAS is verified, also through a stored policy, and grants only its letters', async () => {
        const container = await freshContainer(service, 'svc');
        const expiresOn = new Date(Date.now() + 3_600_000);
        const direct = generateBlobSASQueryParameters(
          { containerName: container.containerName, permissions: ContainerSASPermissions.parse('r'), expiresOn },
          credential,
        ).toString();
        const viaSas = anonymous(`${container.url}?${direct}`);
        assert.equal((await viaSas.getAccountInfo()).accountKind, 'StorageV2');
        // A service SAS does not manage containers.
        await refused(viaSas.getProperties(), 403, 'AuthorizationPermissionMismatch');
        const tampered = anonymous(`${container.url}?${direct.replace(/sp=r/, 'sp=rw')}`);
        await refused(tampered.getAccountInfo(), 403, 'AuthenticationFailed');
        // For another container, the signature does not hold.
        const other = await freshContainer(service, 'svc');
        await refused(anonymous(`${other.url}?${direct}`).getAccountInfo(), 403, 'AuthenticationFailed');

        // Each string-to-sign the SDK can make: 2015-04-05, 2018-11-09 (sr and the snapshot time), 2020-12-06 (ses).
        for (const version of ['2015-04-05', '2018-11-09', '2020-12-06']) {
          const permissions = ContainerSASPermissions.parse('r');
          const signed = generateBlobSASQueryParameters(
            { containerName: container.containerName, permissions, expiresOn, version },
            credential,
          ).toString();
          assert.equal(
            (await anonymous(`${container.url}?${signed}`).getAccountInfo()).skuName,
            'Standard_LRS',
            version,
          );
        }
        await container.setAccessPolicy(undefined, [{ id: 'p1', accessPolicy: { permissions: 'r', expiresOn } }]);
        const stored = generateBlobSASQueryParameters(
          { containerName: container.containerName, identifier: 'p1' },
          credential,
        );
        const viaPolicy = anonymous(`${container.url}?${stored.toString()}`);
        assert.equal((await viaPolicy.getAccountInfo()).skuName, 'Standard_LRS');
        await container.setAccessPolicy(undefined, []);
        await refused(viaPolicy.getAccountInfo(), 403, 'AuthorizationFailure');
      });

      test('a blob SAS reads its blob with the response headers it names, and no other blob', () =>
        blobSasOverrides(service));
      test('anonymous reads of blobs and listings follow the public access level', () => anonymousBlobs(service));

      test('anonymous requests read what the public access level allows, and nothing else', async () => {
        const open = await freshContainer(service, 'pub');
        await open.setAccessPolicy('container');
        assert.equal((await anonymous(open.url).getProperties()).blobPublicAccess, 'container');
        const blobsOnly = service.getContainerClient(uniqueContainerName('pub'));
        await blobsOnly.create({ access: 'blob' });
        await refused(anonymous(blobsOnly.url).getProperties(), 404, 'ResourceNotFound');
        const closed = await freshContainer(service, 'pub');
        await refused(anonymous(closed.url).getProperties(), 404, 'ResourceNotFound');
        await refused(anonymous(closed.url).setMetadata({ a: 'b' }), 404, 'ResourceNotFound');
        await refused(anonymous(open.url).delete(), 404, 'ResourceNotFound');
        const missing = service.getContainerClient(uniqueContainerName('pub'));
        await refused(anonymous(missing.url).getProperties(), 404, 'ResourceNotFound');
        const anonymousService = new BlobServiceClient(service.url, new AnonymousCredential(), pipeline);
        await refused(anonymousService.getProperties(), 403, 'AuthenticationFailed');
      });

      test('raw HTTP: the headers and XML the service answers', () => rawWire(server));
      test('raw HTTP: Shared Key Lite, and CORS from the Blob service properties', () => liteAndCors(server, service));
      test('raw HTTP: unsupported features, methods and the read-only secondary', () => rawRefusals(server));
    });
  }
});

async function blobSasOverrides(service: BlobServiceClient): Promise<void> {
  const container = await freshContainer(service, 'rsc');
  const blob = container.getBlockBlobClient('folder/report.csv');
  await blob.upload('a,b\n1,2\n', 8, { blobHTTPHeaders: { blobContentType: 'text/csv' } });
  const sas = generateBlobSASQueryParameters(
    {
      containerName: container.containerName,
      blobName: blob.name,
      permissions: BlobSASPermissions.parse('r'),
      expiresOn: new Date(Date.now() + 3_600_000),
      contentType: 'application/octet-stream',
      contentDisposition: 'attachment; filename="report.csv"',
      cacheControl: 'no-store',
    },
    credential,
  ).toString();
  const viaSas = new BlobClient(`${blob.url}?${sas}`, new AnonymousCredential(), pipeline);
  const download = await viaSas.download();
  assert.equal(download.contentType, 'application/octet-stream');
  assert.equal(download.contentDisposition, 'attachment; filename="report.csv"');
  assert.equal(download.cacheControl, 'no-store');
  assert.equal(download.contentLength, 8);
  const properties = await viaSas.getProperties();
  assert.equal(properties.contentType, 'application/octet-stream');
  // Without the SAS the blob keeps its own headers.
  assert.equal((await blob.getProperties()).contentType, 'text/csv');
  await refused(viaSas.delete(), 403, 'AuthorizationPermissionMismatch');
  const sibling = container.getBlockBlobClient('folder/other.csv');
  await sibling.upload('x', 1);
  const wrongBlob = new BlobClient(`${sibling.url}?${sas}`, new AnonymousCredential(), pipeline);
  await refused(wrongBlob.download(), 403, 'AuthenticationFailed');
}

async function anonymousBlobs(service: BlobServiceClient): Promise<void> {
  const blobLevel = service.getContainerClient(uniqueContainerName('anb'));
  await blobLevel.create({ access: 'blob' });
  await blobLevel.getBlockBlobClient('open.txt').upload('hello', 5);
  const reader = anonymous(blobLevel.url);
  assert.equal((await reader.getBlobClient('open.txt').downloadToBuffer()).toString(), 'hello');
  await refused(reader.listBlobsFlat().next(), 404, 'ResourceNotFound');
  await refused(reader.getBlockBlobClient('new.txt').upload('no', 2), 404, 'ResourceNotFound');
  const containerLevel = service.getContainerClient(uniqueContainerName('anc'));
  await containerLevel.create({ access: 'container' });
  await containerLevel.getBlockBlobClient('listed.txt').upload('x', 1);
  const names = [];
  for await (const item of anonymous(containerLevel.url).listBlobsFlat()) names.push(item.name);
  assert.deepEqual(names, ['listed.txt']);
  const closed = await freshContainer(service, 'anp');
  await closed.getBlockBlobClient('secret.txt').upload('s', 1);
  await refused(anonymous(closed.url).getBlobClient('secret.txt').download(), 404, 'ResourceNotFound');
}

async function rawWire(server: RunningServer): Promise<void> {
  const name = uniqueContainerName('raw');
  const created = await blobSend(server, {
    method: 'PUT',
    target: `${name}?restype=container`,
    headers: { 'x-ms-meta-Kind': 'raw', 'x-ms-blob-public-access': 'container' },
  });
  assert.equal(created.status, 201, created.text);
  assert.match(String(created.headers['etag']), /^"0x[0-9A-F]+"$/);
  assert.match(String(created.headers['last-modified']), /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  const head = await blobSend(server, { method: 'HEAD', target: `${name}?restype=container` });
  assert.equal(head.status, 200);
  assert.equal(head.headers['x-ms-meta-kind'], 'raw');
  assert.equal(head.headers['x-ms-blob-public-access'], 'container');
  assert.equal(head.headers['x-ms-lease-state'], 'available');
  assert.equal(head.headers['x-ms-lease-status'], 'unlocked');
  assert.equal(head.headers['x-ms-lease-duration'], undefined);
  assert.equal(head.headers['x-ms-has-immutability-policy'], 'false');
  assert.equal(head.headers['x-ms-has-legal-hold'], 'false');
  const bad = await blobSend(server, {
    method: 'PUT',
    target: `${uniqueContainerName()}?restype=container`,
    headers: { 'x-ms-blob-public-access': 'everyone' },
  });
  assertQueueError(bad, 400, 'InvalidHeaderValue');
  const listed = await blobSend(server, { method: 'GET', target: `?comp=list&prefix=${name}&include=metadata` });
  assert.equal(listed.status, 200, listed.text);
  const root = xmlOf(listed);
  assert.equal(root.name, 'EnumerationResults');
  assert.equal(childText(root, 'Prefix'), name);
  const containers = root.children.find((child) => child.name === 'Containers');
  const item = containers?.children[0];
  assert.equal(item && childText(item, 'Name'), name);
  const properties = item?.children.find((child) => child.name === 'Properties');
  assert.equal(properties && childText(properties, 'PublicAccess'), 'container');
  assert.equal(properties && childText(properties, 'Etag'), created.headers['etag']);
  assert.equal(childText(root, 'NextMarker'), '');
  await hostStyle(server, name);
}

/** `{account}.blob.localhost:{port}`: the account in the host, the path starting at the container. */
async function hostStyle(server: RunningServer, name: string): Promise<void> {
  const path = `/${name}?restype=container`;
  const headers: Record<string, string> = {
    Host: `${devAccount}.blob.localhost:${blobPort(server)}`,
    'x-ms-version': blobVersion,
    'x-ms-date': new Date().toUTCString(),
  };
  const signature = hmacBase64(devKey, queueStringToSign('SharedKey', 'GET', path, headers));
  headers['Authorization'] = `SharedKey ${devAccount}:${signature}`;
  const res = await send(blobPort(server), { method: 'GET', path, headers, auth: 'none' });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers['x-ms-meta-kind'], 'raw');
}

async function liteAndCors(server: RunningServer, service: BlobServiceClient): Promise<void> {
  const name = uniqueContainerName('cors');
  const lite = await blobSend(server, { method: 'PUT', target: `${name}?restype=container`, auth: 'SharedKeyLite' });
  assert.equal(lite.status, 201, lite.text);
  const origin = 'https://app.example';
  const preflight = (method: string) =>
    send(blobPort(server), {
      method: 'OPTIONS',
      path: `/${devAccount}/${name}/file.txt`,
      headers: { Origin: origin, 'Access-Control-Request-Method': method },
      auth: 'none',
    });
  assert.equal((await preflight('GET')).status, 403);
  const rule = {
    allowedOrigins: origin,
    allowedMethods: 'GET',
    allowedHeaders: '',
    exposedHeaders: '',
    maxAgeInSeconds: 5,
  };
  await service.setProperties({ cors: [rule] });
  try {
    const allowed = await preflight('GET');
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.headers['access-control-allow-origin'], origin);
    assert.equal((await preflight('DELETE')).status, 403);
    const read = await blobSend(server, {
      method: 'GET',
      target: `${name}?restype=container`,
      headers: { Origin: origin },
    });
    assert.equal(read.headers['access-control-allow-origin'], origin);
  } finally {
    await service.setProperties({ cors: [] });
  }
}

async function rawRefusals(server: RunningServer): Promise<void> {
  const name = uniqueContainerName('ref');
  assert.equal((await blobSend(server, { method: 'PUT', target: `${name}?restype=container` })).status, 201);
  const tags = await blobSend(server, { method: 'PUT', target: `${name}/blob.txt?comp=tags`, body: '<Tags/>' });
  assertQueueError(tags, 404, 'BlobNotFound'); // served now: the blob is missing
  const incremental = await blobSend(server, { method: 'PUT', target: `${name}/disk.vhd?comp=incrementalcopy` });
  assertQueueError(incremental, 400, 'UnsupportedQueryParameter');
  // Versions are served (docs/blob.md "Versions"), and their tags, but not their block lists.
  const version = await blobSend(server, {
    method: 'GET',
    target: `${name}/a.txt?comp=blocklist&versionid=2024-01-01T00:00:00.0000000Z`,
  });
  assertQueueError(version, 400, 'UnsupportedQueryParameter');
  const post = await blobSend(server, { method: 'POST', target: `${name}?restype=container` });
  assertQueueError(post, 405, 'UnsupportedHttpVerb');
  const unknown = await blobSend(server, { method: 'GET', target: `${name}?restype=container&comp=nonsense` });
  assertQueueError(unknown, 400, 'InvalidQueryParameterValue');
  // The secondary endpoint reads and refuses writes.
  const read = await blobSend(server, { method: 'GET', target: `?comp=list&prefix=${name}`, secondary: true });
  assert.equal(read.status, 200, read.text);
  assert.equal(childText(xmlOf(read).children.find((c) => c.name === 'Containers')!.children[0]!, 'Name'), name);
  const write = await blobSend(server, {
    method: 'PUT',
    target: `${uniqueContainerName()}?restype=container`,
    secondary: true,
  });
  assertQueueError(write, 403, 'InsufficientAccountPermissions');
  const stats = await blobSend(server, { method: 'GET', target: '?restype=service&comp=stats', secondary: true });
  assert.equal(stats.status, 200, stats.text);
}
