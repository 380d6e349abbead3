// The bounds each service's listener gets: a service with streamed bodies (blobs) has no bound on a
// whole request, which a large upload would outlast, and closes connections idle for
// streamIdleTimeoutMs instead; the other services keep node's whole-request bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blobService } from '../../src/blob/definition.js';
import type { BlobServices } from '../../src/blob/services.js';
import { loadAccounts } from '../../src/http/accounts.js';
import { createLogger } from '../../src/http/log.js';
import { FrontDoor } from '../../src/http/server.js';
import { queueService, type QueueServices } from '../../src/queue/definition.js';
import { requestTimeoutMs, streamIdleTimeoutMs } from '../../src/limits.js';

const frontDoor = new FrontDoor({
  accounts: loadAccounts(undefined),
  log: createLogger('silent'),
  requestsInFlightMax: 1,
});

test('the blob listener bounds idle connections, not whole requests', () => {
  const server = frontDoor.server(blobService, {} as BlobServices);
  assert.equal(server.requestTimeout, 0);
  assert.equal(server.timeout, streamIdleTimeoutMs);
});

test('the queue listener keeps the whole-request bound', () => {
  const server = frontDoor.server(queueService, {} as QueueServices);
  assert.equal(server.requestTimeout, requestTimeoutMs);
});
