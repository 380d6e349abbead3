// Raw Blob Batch bodies (https://learn.microsoft.com/rest/api/storageservices/blob-batch) laid out
// as the docs' example and the JS SDK write them, each embedded DELETE signed here with Shared Key
// (the Blob/Queue string-to-sign of queue.ts, independent of the server's code) unless its URL
// carries a SAS.
import type { BlobServiceClient, ContainerClient } from '@azure/storage-blob';
import { uniqueContainerName } from './blob.js';
import { hmacBase64 } from './http.js';
import { queueStringToSign } from './queue.js';
import { devAccount, devKey } from './server.js';

const CRLF = '\r\n';

/** One part: an embedded `DELETE {path}` with Content-ID `index`. */
export function deletePart(index: number, path: string, headers: Record<string, string> = {}): string {
  const signed: Record<string, string> = { 'x-ms-date': new Date().toUTCString(), ...headers };
  if (!path.includes('sig=')) {
    const toSign = queueStringToSign('SharedKey', 'DELETE', path, signed);
    signed['Authorization'] = `SharedKey ${devAccount}:${hmacBase64(devKey, toSign)}`;
  }
  const lines = [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    `Content-ID: ${index}`,
    '',
    `DELETE ${path} HTTP/1.1`,
    ...Object.entries(signed).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ];
  return lines.join(CRLF);
}

/** The multipart body: each part after its delimiter, then the close delimiter. */
export function batchBody(boundary: string, parts: readonly string[]): string {
  return `${parts.map((part) => `--${boundary}${CRLF}${part}`).join('')}--${boundary}--${CRLF}`;
}

/** A fresh container holding a 1-byte block blob of each name. */
export async function containerWith(service: BlobServiceClient, blobs: readonly string[]): Promise<ContainerClient> {
  const container = service.getContainerClient(uniqueContainerName());
  await container.create();
  await Promise.all(blobs.map((name) => container.getBlockBlobClient(name).upload('x', 1)));
  return container;
}

/** The names of the container's blobs, sorted. */
export async function blobNames(container: ContainerClient): Promise<string[]> {
  const found: string[] = [];
  for await (const blob of container.listBlobsFlat()) found.push(blob.name);
  return found.sort();
}
