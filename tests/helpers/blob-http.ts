// Blob service test helpers: the official JS SDK pointed at a test server's blob endpoint with a
// connection string, and raw HTTP signed with the Blob/Queue Shared Key format (queue.ts builds it
// from the docs, independently of the server's code).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BlobServiceClient, type StoragePipelineOptions } from '@azure/storage-blob';
import type { RawResponse } from './http.js';
import { blobQueueSend, type QueueRequest } from './queue.js';
import { devAccount, devKey, type RunningServer } from './server.js';

export const blobVersion = '2021-12-02';

export function blobEndpoint(server: RunningServer): string {
  assert.ok(server.blobUrl, 'the server printed no blob endpoint');
  return server.blobUrl;
}

export function blobPort(server: RunningServer): number {
  return Number(new URL(blobEndpoint(server)).port);
}

/** What a user of `UseDevelopmentStorage=true` has, with the blob endpoint of this server. */
export function blobConnectionString(server: RunningServer): string {
  return (
    `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};` +
    `BlobEndpoint=${blobEndpoint(server)};`
  );
}

const pipelineOptions: StoragePipelineOptions = { retryOptions: { maxTries: 1 } };

export function blobServiceClient(server: RunningServer): BlobServiceClient {
  return BlobServiceClient.fromConnectionString(blobConnectionString(server), pipelineOptions);
}

export function uniqueContainerName(prefix = 'c'): string {
  return `${prefix}${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** One raw request to the blob endpoint, path-style, signed with Shared Key unless `auth` says otherwise. */
export function blobSend(server: RunningServer, request: QueueRequest): Promise<RawResponse> {
  return blobQueueSend(blobPort(server), blobVersion, request);
}
