// The Blob service workloads of the side-by-side benchmark
// (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api): uploads and downloads
// of one size each, and listing a container of 10,000 blobs. Transfers run against the bare node:http
// servers too (bare-server.ts), the ceiling of moving those bytes over node:http on this machine.
import { randomUUID } from 'node:crypto';
import { expectStatus } from './client.js';
import { sharedKeyAuthorization } from './signed-client.js';
import type { BlobHttpClient } from './blob-client.js';
import type { Operation } from './load.js';
import type { PreparedRun, Scenario, ScenarioContext } from './scenarios.js';

const kib = 1024;
const mib = 1024 * kib;
/** Blobs in the listed container; the default page (up to 5,000 per page) makes it several pages. */
export const listedBlobCount = 10_000;
const listedContainer = 'benchlist';
const preloadConcurrency = 16;
const blockBlob = { 'x-ms-blob-type': 'BlockBlob', 'content-type': 'application/octet-stream' };

/** The transfer sizes, with the concurrency cap of each (64 MiB × 64 workers would only fill the disk). */
const transferSizes: readonly TransferSize[] = [
  { label: '4k', bytes: 4 * kib },
  { label: '1m', bytes: mib, concurrencyMax: 16 },
  { label: '64m', bytes: 64 * mib, concurrencyMax: 4, windowOpsPerWorkerMin: 4 },
];

export function blobClientOf(context: ScenarioContext): BlobHttpClient {
  if (context.blob === undefined) throw new Error('the server has no Blob service');
  return context.blob;
}

export function putBlob(blob: BlobHttpClient, resource: string, bytes: number): Promise<unknown> {
  return expectStatus(
    'put blob',
    blob.send({ method: 'PUT', resource, headers: blockBlob, body: { streamedBytes: bytes } }),
    201,
  );
}

export async function freshContainer(blob: BlobHttpClient, name: string): Promise<() => Promise<void>> {
  const container = { restype: 'container' };
  await expectStatus('create container', blob.send({ method: 'PUT', resource: name, query: container }), 201);
  return async () => {
    await expectStatus('delete container', blob.send({ method: 'DELETE', resource: name, query: container }), 202);
  };
}

interface TransferSize {
  readonly label: string;
  readonly bytes: number;
  readonly concurrencyMax?: number;
  /** A window of the default length holds a transfer or two of 64 MiB: ask for more. */
  readonly windowOpsPerWorkerMin?: number;
}

/**
 * A transfer of one size in a fresh container (deleted after the run): `operationsOf` prepares the
 * container's content and makes each worker's operation.
 */
function transferScenario(
  direction: 'upload' | 'download',
  size: TransferSize,
  summary: string,
  operationsOf: (blob: BlobHttpClient, container: string, worker: number) => Promise<Operation>,
): Scenario {
  return {
    name: `blob-${direction}-${size.label}`,
    summary,
    datasets: [],
    writes: direction === 'upload',
    service: 'blob',
    bytesPerOperation: size.bytes,
    ...(size.concurrencyMax === undefined ? {} : { concurrencyMax: size.concurrencyMax }),
    ...(size.windowOpsPerWorkerMin === undefined ? {} : { windowOpsPerWorkerMin: size.windowOpsPerWorkerMin }),
    prepare: async (context): Promise<PreparedRun> => {
      const blob = blobClientOf(context);
      const container = `bench-${direction}-${size.label}-${context.runId}`;
      const cleanup = await freshContainer(blob, container);
      const operations: Operation[] = [];
      for (let worker = 0; worker < context.concurrency; worker++) {
        operations.push(await operationsOf(blob, container, worker));
      }
      return { operations, cleanup };
    },
  };
}

function uploadScenario(size: TransferSize): Scenario {
  const { label, bytes } = size;
  const summary = `Put Blob of ${label.toUpperCase()}iB (streamed), each worker overwriting its own blob`;
  return transferScenario('upload', size, summary, async (blob, container, worker) => async () => {
    await putBlob(blob, `${container}/w${worker}`, bytes);
  });
}

function downloadScenario(size: TransferSize): Scenario {
  const { label, bytes } = size;
  const summary = `Get Blob of a whole ${label.toUpperCase()}iB blob (every worker the same blob), body counted and dropped`;
  return transferScenario('download', size, summary, async (blob, container, worker) => {
    const resource = `${container}/blob`;
    if (worker === 0) await putBlob(blob, resource, bytes);
    return async () => {
      const got = await blob.download(resource);
      if (got.status !== 200 || got.bytes !== bytes) {
        throw new Error(`get blob: HTTP ${got.status} with ${got.bytes} of ${bytes} bytes`);
      }
    };
  });
}

/** The names of every blob of the container, following NextMarker to the last page. */
async function listAll(blob: BlobHttpClient, container: string): Promise<number> {
  let marker = '';
  let count = 0;
  for (let page = 0; page < listedBlobCount; page++) {
    const query: Record<string, string> = { restype: 'container', comp: 'list' };
    if (marker !== '') query.marker = marker;
    const response = await expectStatus(
      'list blobs',
      blob.send({ method: 'GET', resource: container, query, readBody: true }),
      200,
    );
    count += occurrences(response.body, '<Blob>');
    marker = /<NextMarker>([^<]*)<\/NextMarker>/.exec(response.body)?.[1] ?? '';
    if (marker === '') return count;
  }
  throw new Error(`list blobs: more than ${listedBlobCount} pages`);
}

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** Fills the listed container once per server (memoized by endpoint); later runs only read it. */
const listPreloads = new Map<string, Promise<void>>();

function preloadListed(blob: BlobHttpClient): Promise<void> {
  const key = `${blob.endpoint.host}:${blob.endpoint.port}`;
  let loaded = listPreloads.get(key);
  if (loaded === undefined) {
    loaded = (async () => {
      await freshContainer(blob, listedContainer);
      let next = 0;
      const putNext = async (): Promise<void> => {
        while (next < listedBlobCount) {
          const name = `blob-${String(next++).padStart(5, '0')}`;
          await putBlob(blob, `${listedContainer}/${name}`, 16);
        }
      };
      await Promise.all(Array.from({ length: preloadConcurrency }, putNext));
    })();
    listPreloads.set(key, loaded);
  }
  return loaded;
}

const listScenario: Scenario = {
  name: 'blob-list-10k',
  summary: `List Blobs of a container of ${listedBlobCount.toLocaleString('en-US')} blobs, every page (default page size)`,
  datasets: [],
  writes: false,
  service: 'blob',
  concurrencyMax: 4,
  prepare: async (context): Promise<PreparedRun> => {
    const blob = blobClientOf(context);
    await preloadListed(blob);
    const seen = await listAll(blob, listedContainer);
    const wrongAnswer = seen === listedBlobCount ? undefined : `listed ${seen} blobs, not ${listedBlobCount}`;
    const operation: Operation = async () => {
      const count = await listAll(blob, listedContainer);
      if (count !== listedBlobCount) throw new Error(`list blobs: ${count} blobs, not ${listedBlobCount}`);
    };
    return {
      operations: Array.from({ length: context.concurrency }, () => operation),
      ...(wrongAnswer === undefined ? {} : { wrongAnswer }),
    };
  },
};

/** Blobs each delete operation removes, a full Blob Batch (blob-batch: up to 256 subrequests). */
const deletedPerOperation = 256;

/**
 * A Blob Batch deleting `resources` (`container/blob`), its parts written and signed as the JS
 * SDK writes them (https://learn.microsoft.com/rest/api/storageservices/blob-batch): each embedded
 * DELETE carries its own x-ms-date and Shared Key signature, no x-ms-version.
 */
function deleteBatch(account: string, resources: readonly string[]): { contentType: string; body: string } {
  const boundary = `batch_${randomUUID()}`;
  const parts = resources.map((resource, index) => {
    const path = `/${account}/${resource}`;
    const headers = { 'x-ms-date': new Date().toUTCString() };
    const authorization = sharedKeyAuthorization(account, 'DELETE', path, {}, headers);
    return (
      `--${boundary}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n` +
      `Content-ID: ${index}\r\n\r\nDELETE ${path} HTTP/1.1\r\nx-ms-date: ${headers['x-ms-date']}\r\n` +
      `Authorization: ${authorization}\r\n\r\n`
    );
  });
  return { contentType: `multipart/mixed; boundary=${boundary}`, body: `${parts.join('')}--${boundary}--\r\n` };
}

/** Requests of one delete operation in flight at once (they share the workers' sockets). */
const deleteOperationParallelism = 16;

/** `work` over `items`, `deleteOperationParallelism` at a time. */
async function eachInParallel<T>(items: readonly T[], work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: deleteOperationParallelism }, lane));
}

/**
 * One operation: Put Blob of 256 blobs of 16 bytes, then deleting them all, with one Blob Batch
 * or with 256 Delete Blob; the puts and the single deletes go 16 at a time. The two scenarios
 * differ only in how the deletes go: their rates' ratio is what the batch saves.
 */
function deleteScenario(how: 'batch' | 'single'): Scenario {
  const summary =
    how === 'batch'
      ? `Put Blob of ${deletedPerOperation} blobs of 16 B, then one Blob Batch deleting them`
      : `Put Blob of ${deletedPerOperation} blobs of 16 B, then ${deletedPerOperation} Delete Blob`;
  return {
    name: `blob-delete-${deletedPerOperation}-${how}`,
    summary,
    datasets: [],
    writes: true,
    service: 'blob',
    concurrencyMax: 4,
    prepare: async (context): Promise<PreparedRun> => {
      const blob = blobClientOf(context);
      const container = `bench-delete-${how}-${context.runId}`;
      const cleanup = await freshContainer(blob, container);
      const operations = Array.from({ length: context.concurrency }, (_, worker): Operation => {
        const names = Array.from({ length: deletedPerOperation }, (__, i) => `${container}/w${worker}-${i}`);
        return async () => {
          await eachInParallel(names, (name) => putBlob(blob, name, 16));
          if (how === 'single') {
            const deleted = (name: string) => blob.send({ method: 'DELETE', resource: name });
            await eachInParallel(names, (name) => expectStatus('delete blob', deleted(name), 202));
            return;
          }
          await deleteInOneBatch(blob, names);
        };
      });
      return { operations, cleanup };
    },
  };
}

async function deleteInOneBatch(blob: BlobHttpClient, names: readonly string[]): Promise<void> {
  const { contentType, body } = deleteBatch(blob.endpoint.account, names);
  const headers = { 'content-type': contentType };
  const request = { method: 'POST', resource: '', query: { comp: 'batch' }, headers, body, readBody: true };
  const answer = await expectStatus('blob batch', blob.send(request), 202);
  const accepted = answer.body.split('HTTP/1.1 202 Accepted').length - 1;
  if (accepted !== names.length) throw new Error(`blob batch: ${accepted} of ${names.length} parts deleted`);
}

export const blobScenarios: readonly Scenario[] = [
  ...transferSizes.map(uploadScenario),
  ...transferSizes.map(downloadScenario),
  listScenario,
  deleteScenario('batch'),
  deleteScenario('single'),
];

/** The blob scenarios the bare node:http servers can serve (transfers, no listing). */
export function bareServes(scenario: Scenario): boolean {
  return scenario.bytesPerOperation !== undefined;
}
