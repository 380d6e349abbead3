// The Blob service's read-access secondary on a real hot standby (--secondary-database): the
// `{account}-secondary` blob endpoint reads containers and blobs from the standby once they have
// replicated, reports the standby in Get Blob Service Stats, and refuses every write.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { blobEndpoint, blobServiceClient, blobVersion, uniqueContainerName } from '../../helpers/blob.js';
import type { RawResponse } from '../../helpers/http.js';
import { postgresBin } from '../../helpers/pg-cluster.js';
import { postgresUnavailable } from '../../helpers/postgres.js';
import { assertQueueError, blobQueueSend, childText, xmlOf, type QueueRequest } from '../../helpers/queue.js';
import type { RunningServer } from '../../helpers/server.js';
import { startStandbyServer, type StandbyServer } from '../../helpers/standby-server.js';

const bin = postgresBin();
const skip = postgresUnavailable() ?? (bin === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined);

function secondarySend(server: RunningServer, request: Omit<QueueRequest, 'secondary'>): Promise<RawResponse> {
  const port = Number(new URL(blobEndpoint(server)).port);
  return blobQueueSend(port, blobVersion, { ...request, secondary: true });
}

/** The secondary's answer for `target` once it is not 404 (the standby replays within seconds). */
async function replicated(server: RunningServer, target: string): Promise<RawResponse> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await secondarySend(server, { method: 'GET', target });
    if (res.status !== 404) return res;
    assert.ok(Date.now() < deadline, `${target} did not reach the secondary: ${res.text}`);
    await sleep(200);
  }
}

describe('the blob secondary endpoint on a hot standby', { skip }, () => {
  let setup: StandbyServer | undefined;
  let server: RunningServer;
  before(async () => {
    setup = await startStandbyServer(bin!);
    server = setup.server;
  });
  after(async () => setup?.stop());

  test('a container and its blob are read on the secondary once replicated', async () => {
    const container = blobServiceClient(server).getContainerClient(uniqueContainerName('sec'));
    await container.create({ metadata: { origin: 'primary' } });
    await container.getBlockBlobClient('note.txt').upload('replicated', 10);
    const properties = await replicated(server, `${container.containerName}?restype=container`);
    assert.equal(properties.status, 200, properties.text);
    assert.equal(properties.headers['x-ms-meta-origin'], 'primary');
    const blob = await replicated(server, `${container.containerName}/note.txt`);
    assert.equal(blob.status, 200, blob.text);
    assert.equal(blob.text, 'replicated');
    const listed = await secondarySend(server, {
      method: 'GET',
      target: `?comp=list&prefix=${container.containerName}`,
    });
    const names = xmlOf(listed).children.find((child) => child.name === 'Containers')?.children ?? [];
    assert.deepEqual(
      names.map((item) => childText(item, 'Name')),
      [container.containerName],
    );
  });

  test('Get Blob Service Stats on the secondary reports the standby', async () => {
    const res = await secondarySend(server, { method: 'GET', target: '?restype=service&comp=stats' });
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /<GeoReplication><Status>(live|bootstrap)<\/Status>/);
  });

  test('writes on the secondary are refused', async () => {
    const name = uniqueContainerName('sec');
    const create = await secondarySend(server, { method: 'PUT', target: `${name}?restype=container` });
    assertQueueError(create, 403, 'InsufficientAccountPermissions');
    const put = await secondarySend(server, {
      method: 'PUT',
      target: `${name}/b.txt`,
      headers: { 'x-ms-blob-type': 'BlockBlob' },
      body: 'x',
    });
    assertQueueError(put, 403, 'InsufficientAccountPermissions');
  });
});
