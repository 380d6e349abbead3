// Blob service test helpers: the official JS SDK pointed at a test server's blob endpoint with a
// connection string, and raw HTTP signed with the Blob/Queue Shared Key format (queue.ts builds
// the string-to-sign from the docs, independently of the server's code).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BlobServiceClient, type StoragePipelineOptions } from '@azure/storage-blob';
import { hmacBase64, send, type RawResponse } from './http.js';
import { queueStringToSign } from './queue.js';
import { devAccount, devKey, type RunningServer } from './server.js';

export const blobVersion = '2021-08-06';

export function blobEndpoint(server: RunningServer): string {
  assert.ok(server.blobUrl, 'the server printed no blob endpoint');
  return server.blobUrl;
}

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

export interface BlobRequest {
  method: string;
  /** The request target after the account, e.g. `c1/b1?comp=block&blockid=…`. */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One raw request to the blob endpoint, path-style, signed with Shared Key. */
export function blobSend(server: RunningServer, request: BlobRequest): Promise<RawResponse> {
  const path = `/${devAccount}/${request.target}`;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers: Record<string, string> = {
    'x-ms-version': blobVersion,
    'x-ms-date': new Date().toUTCString(),
    'Content-Length': String(body?.length ?? 0),
    // The raw sender would call a body JSON otherwise (after signing).
    ...(body !== undefined && { 'Content-Type': 'application/octet-stream' }),
    ...request.headers,
  };
  headers['Authorization'] =
    `SharedKey ${devAccount}:${hmacBase64(devKey, queueStringToSign('SharedKey', request.method, path, headers))}`;
  const port = Number(new URL(blobEndpoint(server)).port);
  return send(port, { method: request.method, path, headers, ...(body && { body }), auth: 'none' });
}
