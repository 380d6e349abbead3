// The page blob workloads of the side-by-side benchmark (https://learn.microsoft.com/rest/api/
// storageservices/put-page, get-page-ranges): Put Page of 4 KiB and of 4 MiB, each worker writing
// pages of a page blob of its own at random page-aligned offsets, and Get Page Ranges of a
// fragmented page blob (every other 512-byte page written).
import { expectStatus } from './client.js';
import type { BlobHttpClient } from './blob-client.js';
import { blobClientOf, freshContainer } from './blob-scenarios.js';
import type { Operation } from './load.js';
import type { PreparedRun, Scenario } from './scenarios.js';

const kib = 1024;
const mib = 1024 * kib;
/** Each worker's page blob: room for many distinct 4 MiB writes. */
const pageBlobBytes = 256 * mib;
/** Ranges of the fragmented blob: every other 512-byte page of the first 2 MiB written. */
export const fragmentedRanges = 2_000;
const page = 512;

async function createPageBlob(blob: BlobHttpClient, resource: string, bytes: number): Promise<void> {
  const headers = { 'x-ms-blob-type': 'PageBlob', 'x-ms-blob-content-length': String(bytes) };
  await expectStatus('create page blob', blob.send({ method: 'PUT', resource, headers }), 201);
}

function putPage(blob: BlobHttpClient, resource: string, offset: number, bytes: number): Promise<unknown> {
  const headers = {
    'x-ms-page-write': 'update',
    'x-ms-range': `bytes=${offset}-${offset + bytes - 1}`,
    'content-type': 'application/octet-stream',
  };
  const request = { method: 'PUT', resource, query: { comp: 'page' }, headers, body: { streamedBytes: bytes } };
  return expectStatus('put page', blob.send(request), 201);
}

function putPageScenario(label: string, bytes: number, concurrencyMax: number): Scenario {
  return {
    name: `blob-put-page-${label}`,
    summary: `Put Page of ${label.toUpperCase()}iB at a random offset of the worker's own 256 MiB page blob`,
    datasets: [],
    writes: true,
    service: 'blob',
    concurrencyMax,
    prepare: async (context): Promise<PreparedRun> => {
      const blob = blobClientOf(context);
      const container = `bench-page-${label}-${context.runId}`;
      const cleanup = await freshContainer(blob, container);
      const operations: Operation[] = [];
      for (let worker = 0; worker < context.concurrency; worker++) {
        const resource = `${container}/w${worker}`;
        await createPageBlob(blob, resource, pageBlobBytes);
        const slots = pageBlobBytes / bytes;
        operations.push(async () => {
          await putPage(blob, resource, Math.floor(Math.random() * slots) * bytes, bytes);
        });
      }
      return { operations, cleanup };
    },
  };
}

const pageRangesScenario: Scenario = {
  name: 'blob-page-ranges-2k',
  summary: `Get Page Ranges of a page blob of ${fragmentedRanges.toLocaleString('en-US')} separate ranges, whole list`,
  datasets: [],
  writes: false,
  service: 'blob',
  concurrencyMax: 4,
  prepare: async (context): Promise<PreparedRun> => {
    const blob = blobClientOf(context);
    const container = `bench-pagelist-${context.runId}`;
    const cleanup = await freshContainer(blob, container);
    const resource = `${container}/fragmented`;
    await createPageBlob(blob, resource, fragmentedRanges * 2 * page);
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < fragmentedRanges) await putPage(blob, resource, next++ * 2 * page, page);
    };
    await Promise.all(Array.from({ length: 16 }, lane));
    const operation: Operation = async () => {
      const request = { method: 'GET', resource, query: { comp: 'pagelist' }, readBody: true };
      const answer = await expectStatus('get page ranges', blob.send(request), 200);
      const count = answer.body.split('<PageRange>').length - 1;
      if (count !== fragmentedRanges) throw new Error(`get page ranges: ${count} ranges, not ${fragmentedRanges}`);
    };
    return { operations: Array.from({ length: context.concurrency }, () => operation), cleanup };
  },
};

export const pageScenarios: readonly Scenario[] = [
  putPageScenario('4k', 4 * kib, 64),
  putPageScenario('4m', 4 * mib, 4),
  pageRangesScenario,
];
