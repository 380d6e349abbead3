// The bench's Blob client: signed requests (signed-client.ts) and downloads that count the bytes and
// drop them, so the client holds no blob in memory and a 1 GiB transfer costs it no more than 4 KiB.
import http from 'node:http';
import { SignedHttpClient, type ServiceEndpoint } from './signed-client.js';

export type BlobEndpoint = ServiceEndpoint;

const blobVersion = '2021-12-02';

export class BlobHttpClient extends SignedHttpClient {
  constructor(endpoint: BlobEndpoint, agent: http.Agent, requestTimeoutMs: number) {
    super(endpoint, agent, requestTimeoutMs, blobVersion);
  }

  /** GET of a blob (or a range of it): the status and how many body bytes came, the bytes dropped. */
  download(resource: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number }> {
    return this.exchange({ method: 'GET', resource, headers }, (res, resolve, reject) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
  }
}
