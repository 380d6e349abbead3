// The workloads of the side-by-side benchmark. Each prepares one operation per worker (and
// checks once that the server answers correctly); load.ts then runs them in a closed loop.
import { expectStatus, type TableHttpClient, type TableResponse } from './client.js';
import { bucketMatches, createTable, insertBatch, type Dataset, type DatasetName } from './datasets.js';
import { bucketCount, entityJson, padded } from './entities.js';
import type { Operation } from './load.js';
import type { BlobHttpClient } from './blob-client.js';
import type { QueueHttpClient } from './queue-client.js';

export interface ScenarioContext {
  client: TableHttpClient;
  concurrency: number;
  datasets: Readonly<Partial<Record<DatasetName, Dataset>>>;
  /** Unique per run; names the fresh tables that write scenarios fill. */
  runId: number;
  /** The server's Queue service, when it has one. */
  queue?: QueueHttpClient;
  /** The server's Blob service, when it has one. */
  blob?: BlobHttpClient;
}

export interface PreparedRun {
  /** One operation per worker. */
  operations: Operation[];
  /** Set when the server's answer to the preparation check was wrong. */
  wrongAnswer?: string;
  /** Drops what the run wrote, so later runs see the same amount of data. */
  cleanup?: () => Promise<void>;
  /** What the preparation (or, read after cleanup, the run) saw that the report should say. */
  readonly note?: string;
}

export interface Scenario {
  readonly name: string;
  readonly summary: string;
  readonly datasets: readonly DatasetName[];
  /** Whether runs change data (on-disk Azurite then owes a background save). */
  readonly writes: boolean;
  /** Set for the scenarios of the Queue and Blob services: only servers with one run them. */
  readonly service?: 'queue' | 'blob';
  /** Bytes one operation moves (blob transfers): the report shows MiB/s too. */
  readonly bytesPerOperation?: number;
  /** Higher --concurrency levels run at this one instead (large transfers). */
  readonly concurrencyMax?: number;
  /** Completions per worker the window must hold at least (default 1): slow operations need more for a rate. */
  readonly windowOpsPerWorkerMin?: number;
  prepare(context: ScenarioContext): Promise<PreparedRun>;
}

const pageSizeQueried = 1000;
const pagesPerQueryMax = 10_000;
const rangeLength = 100;
const mergeKeysPerWorkerMax = 16;
const mixReadFraction = 0.8;
const batchInsertCount = 100;
const insertHeaders = { prefer: 'return-no-content' };
const updateHeaders = { 'content-type': 'application/json', accept: 'application/json' };

/** Single inserts into a fresh table, each worker numbering its own entities. */
function insertScenario(
  name: string,
  summary: string,
  tablePrefix: string,
  keyOf: (worker: number, seed: number) => { partitionKey: string; rowKey: string },
): Scenario {
  return {
    name,
    summary,
    datasets: [],
    writes: true,
    prepare: async ({ client, concurrency, runId }) => {
      const table = await freshTable(client, tablePrefix, runId);
      return {
        cleanup: () => dropTable(client, table),
        operations: workers(concurrency, (worker) => {
          let sequence = 0;
          return async () => {
            const seed = sequence++;
            const { partitionKey, rowKey } = keyOf(worker, seed);
            await insert(client, table, entityJson(partitionKey, rowKey, seed));
          };
        }),
      };
    },
  };
}

/** One operation on a random entity of the preloaded `entities` table, each worker with its own random source. */
function randomEntityScenario(
  name: string,
  summary: string,
  writes: boolean,
  operation: (client: TableHttpClient, dataset: Dataset, random: () => number) => Promise<unknown>,
): Scenario {
  return {
    name,
    summary,
    datasets: ['entities'],
    writes,
    prepare: async ({ client, concurrency, datasets, runId }) => {
      const dataset = need(datasets, 'entities');
      await pointRead(client, dataset, 0);
      return {
        operations: workers(concurrency, (worker) => {
          const random = randomSource(runId, worker);
          return async () => {
            await operation(client, dataset, random);
          };
        }),
      };
    },
  };
}

export const scenarios: readonly Scenario[] = [
  insertScenario('insert-distinct', 'POST one entity into a new partition', 'insd', (worker, seed) => ({
    partitionKey: `w${worker}s${seed}`,
    rowKey: 'r',
  })),
  insertScenario(
    'insert-partition',
    'POST one entity; every insert goes into the same partition',
    'insp',
    (worker, seed) => ({
      partitionKey: 'one',
      rowKey: `w${padded(worker, 2)}s${padded(seed, 8)}`,
    }),
  ),
  randomEntityScenario(
    'upsert',
    'PUT (insert-or-replace, no If-Match) of a random existing entity',
    true,
    (client, dataset, random) => upsert(client, dataset, Math.floor(random() * dataset.count)),
  ),
  ...metadataVariants((accept, suffix) =>
    randomEntityScenario(
      `point-read${suffix}`,
      `GET one random preloaded entity by key${levelNote(suffix)}`,
      false,
      (client, dataset, random) => pointRead(client, dataset, Math.floor(random() * dataset.count), accept),
    ),
  ),
  {
    name: 'batch-insert',
    summary: '$batch of 100 inserts into a new partition (JS SDK wire format)',
    datasets: [],
    writes: true,
    prepare: async ({ client, concurrency, runId }) => {
      const table = await freshTable(client, 'bat', runId);
      return {
        cleanup: () => dropTable(client, table),
        operations: workers(concurrency, (worker) => {
          let sequence = 0;
          return async () => {
            const batch = sequence++;
            const inserts = Array.from({ length: batchInsertCount }, (_, i) => ({
              rowKey: `r${padded(i, 3)}`,
              seed: batch * batchInsertCount + i,
            }));
            await insertBatch(client, table, `w${worker}b${batch}`, inserts, 'batch');
          };
        }),
      };
    },
  },
  ...metadataVariants(partitionScan),
  ...metadataVariants(rangeQuery),
  tableScan('table-scan', 'entities'),
  {
    name: 'merge-if-match',
    summary: "PATCH (merge) with the entity's current ETag in If-Match; each worker owns its entities",
    datasets: ['entities'],
    writes: true,
    prepare: async ({ client, concurrency, datasets }) => {
      const dataset = need(datasets, 'entities');
      const keysPerWorker = Math.max(1, Math.min(mergeKeysPerWorkerMax, Math.floor(dataset.count / concurrency)));
      const owned = await Promise.all(
        Array.from({ length: concurrency }, async (_, worker) => {
          const entities: { index: number; etag: string }[] = [];
          for (let j = 0; j < keysPerWorker; j++) {
            const index = (worker + concurrency * j) % dataset.count;
            const response = await pointRead(client, dataset, index);
            entities.push({ index, etag: etagOf(response) });
          }
          return entities;
        }),
      );
      return {
        operations: owned.map((entities) => {
          let sequence = 0;
          return async () => {
            const entity = entities[sequence++ % entities.length]!;
            const { partitionKey, rowKey } = dataset.key(entity.index);
            const response = await expectStatus(
              'merge',
              client.send({
                method: 'PATCH',
                resource: entityResource(dataset.table, dataset.key(entity.index)),
                headers: { ...updateHeaders, 'if-match': entity.etag },
                body:
                  `{"PartitionKey":"${partitionKey}","RowKey":"${rowKey}",` +
                  `"Counter@odata.type":"Edm.Int64","Counter":"${sequence}"}`,
              }),
              204,
            );
            entity.etag = etagOf(response);
          };
        }),
      };
    },
  },
  randomEntityScenario(
    'mix-80-20',
    'a point read (80%) or an upsert (20%) of a random existing entity',
    true,
    (client, dataset, random) => {
      const index = Math.floor(random() * dataset.count);
      return random() < mixReadFraction ? pointRead(client, dataset, index) : upsert(client, dataset, index);
    },
  ),
];

/**
 * A read scenario at minimal metadata (as the SDKs ask) and, named `…-nometadata` and
 * `…-fullmetadata`, at the other two levels: each level has its own encoding path.
 */
function metadataVariants(scenarioOf: (accept: string, suffix: string) => Scenario): Scenario[] {
  return [
    scenarioOf('application/json;odata=minimalmetadata', ''),
    scenarioOf('application/json;odata=nometadata', '-nometadata'),
    scenarioOf('application/json;odata=fullmetadata', '-fullmetadata'),
  ];
}

/** ` (odata=nometadata)` for the summary of the variant named by `suffix`. */
function levelNote(suffix: string): string {
  return suffix === '' ? '' : ` (odata=${suffix.slice(1)})`;
}

function partitionScan(accept: string, suffix: string): Scenario {
  return {
    name: `partition-scan${suffix}`,
    summary: `all 10k entities of one partition, $top=1000, following continuations${levelNote(suffix)}`,
    datasets: ['partition'],
    writes: false,
    prepare: async ({ client, concurrency, datasets }) => {
      const dataset = need(datasets, 'partition');
      const filter = "PartitionKey eq 'scan'";
      return {
        operations: workers(concurrency, () => async () => {
          await queryAll(client, dataset.table, filter, false, accept);
        }),
        wrongAnswer: checkCount(await queryAll(client, dataset.table, filter, true, accept), dataset.count),
      };
    },
  };
}

function rangeQuery(accept: string, suffix: string): Scenario {
  return {
    name: `range-query${suffix}`,
    summary: `a RowKey range inside the 10k partition that returns 100 entities${levelNote(suffix)}`,
    datasets: ['partition'],
    writes: false,
    prepare: async ({ client, concurrency, datasets, runId }) => {
      const dataset = need(datasets, 'partition');
      const rangeFilter = (first: number): string =>
        `PartitionKey eq 'scan' and RowKey ge '${dataset.key(first).rowKey}'` +
        ` and RowKey lt '${dataset.key(first + rangeLength).rowKey}'`;
      const starts = dataset.count - rangeLength;
      return {
        operations: workers(concurrency, (worker) => {
          const random = randomSource(runId, worker);
          return async () => {
            await queryAll(client, dataset.table, rangeFilter(Math.floor(random() * starts)), false, accept);
          };
        }),
        wrongAnswer: checkCount(
          await queryAll(client, dataset.table, rangeFilter(starts - 1), true, accept),
          rangeLength,
        ),
      };
    },
  };
}

/** Only with --big: preloading a million entities takes minutes per server. */
export const bigScenarios: readonly Scenario[] = [tableScan('table-scan-1m', 'big')];

function tableScan(name: string, datasetName: 'entities' | 'big'): Scenario {
  return {
    name,
    summary: `Bucket eq k (1 in ${bucketCount} match) over the whole ${datasetName} table, to the last page`,
    datasets: [datasetName],
    writes: false,
    prepare: async ({ client, concurrency, datasets, runId }) => {
      const dataset = need(datasets, datasetName);
      const filter = (bucket: number): string => `Bucket eq ${bucket}`;
      const indexed = await untilIndexed(client, dataset, filter);
      return {
        note: indexed,
        operations: workers(concurrency, (worker) => {
          const random = randomSource(runId, worker);
          return async () => {
            await queryAll(client, dataset.table, filter(Math.floor(random() * bucketCount)), false);
          };
        }),
        wrongAnswer: checkCount(await queryAll(client, dataset.table, filter(7), true), bucketMatches(dataset, 7)),
      };
    },
  };
}

/** How long the warm-up of a filtered table scan waits, at most, for Cerulean's automatic index. */
const indexWaitMsMax = 60_000;

/**
 * Runs the scenario's queries, one at a time, until the server's query-plan header says an index
 * serves them (docs/architecture.md#automatic-property-indexes): the window then measures the steady state,
 * not the one-time build, and the note says how long that took. A server without the header
 * (Azurite), or one told never to index (CERULEAN_AUTO_INDEX=0, which the bench passes on to the
 * servers it starts), is measured as it is.
 */
async function untilIndexed(
  client: TableHttpClient,
  dataset: Dataset,
  filter: (bucket: number) => string,
): Promise<string | undefined> {
  if (process.env.CERULEAN_AUTO_INDEX === '0') return undefined;
  const startedMs = performance.now();
  let queries = 0;
  for (;;) {
    const bucket = queries % bucketCount;
    const response = await expectStatus(
      'query',
      client.send({
        method: 'GET',
        resource: `${dataset.table}()`,
        query: `$filter=${encodeURIComponent(filter(bucket))}&$top=${pageSizeQueried}`,
        readBody: false,
      }),
      200,
    );
    queries++;
    const plan = response.headers['x-cerulean-query-plan'];
    const scanned = typeof plan === 'string' ? /scanned=(\d+)/.exec(plan)?.[1] : undefined;
    if (scanned === undefined) return undefined;
    const elapsedS = ((performance.now() - startedMs) / 1000).toFixed(1);
    // An index step examines only the matches; a scan examines a whole work budget first.
    if (Number(scanned) <= bucketMatches(dataset, bucket)) {
      return queries === 1
        ? undefined
        : `an automatic index served the filter after ${queries} warm-up queries, ${elapsedS} s`;
    }
    if (performance.now() - startedMs > indexWaitMsMax)
      return `no index served the filter within ${elapsedS} s (${queries} queries): measured unindexed`;
  }
}

function workers(concurrency: number, operationOf: (worker: number) => Operation): Operation[] {
  return Array.from({ length: concurrency }, (_, worker) => operationOf(worker));
}

function need(datasets: ScenarioContext['datasets'], name: DatasetName): Dataset {
  const dataset = datasets[name];
  if (dataset === undefined) throw new Error(`dataset ${name} was not preloaded`);
  return dataset;
}

async function freshTable(client: TableHttpClient, prefix: string, runId: number): Promise<string> {
  const table = `${prefix}${runId}`;
  await createTable(client, table);
  return table;
}

async function dropTable(client: TableHttpClient, table: string): Promise<void> {
  await expectStatus(`delete table ${table}`, client.send({ method: 'DELETE', resource: `Tables('${table}')` }), 204);
}

export function entityResource(table: string, key: { partitionKey: string; rowKey: string }): string {
  return `${table}(PartitionKey='${key.partitionKey}',RowKey='${key.rowKey}')`;
}

async function insert(client: TableHttpClient, table: string, body: string): Promise<void> {
  await expectStatus('insert', client.send({ method: 'POST', resource: table, headers: insertHeaders, body }), 204);
}

async function upsert(client: TableHttpClient, dataset: Dataset, index: number): Promise<void> {
  const key = dataset.key(index);
  await expectStatus(
    'upsert',
    client.send({
      method: 'PUT',
      resource: entityResource(dataset.table, key),
      headers: updateHeaders,
      body: entityJson(key.partitionKey, key.rowKey, index),
    }),
    204,
  );
}

function pointRead(client: TableHttpClient, dataset: Dataset, index: number, accept?: string): Promise<TableResponse> {
  const headers = accept === undefined ? undefined : { accept };
  return expectStatus(
    'point read',
    client.send({ method: 'GET', resource: entityResource(dataset.table, dataset.key(index)), headers }),
    200,
  );
}

function etagOf(response: TableResponse): string {
  const etag = response.headers.etag;
  if (etag === undefined) throw new Error(`no ETag in a ${response.status} reply`);
  return etag;
}

/** Runs a query to its last page; counts entities only when asked (parsing costs client CPU). */
async function queryAll(
  client: TableHttpClient,
  table: string,
  filter: string,
  count: boolean,
  accept?: string,
): Promise<number> {
  const headers = accept === undefined ? undefined : { accept };
  const firstQuery = `$filter=${encodeURIComponent(filter)}&$top=${pageSizeQueried}`;
  let query = firstQuery;
  let entities = 0;
  for (let page = 0; page < pagesPerQueryMax; page++) {
    const response = await expectStatus(
      'query',
      client.send({ method: 'GET', resource: `${table}()`, query, readBody: count, headers }),
      200,
    );
    if (count) entities += (JSON.parse(response.body) as { value: unknown[] }).value.length;
    const nextPartitionKey = response.headers['x-ms-continuation-nextpartitionkey'];
    if (typeof nextPartitionKey !== 'string') return entities;
    const nextRowKey = response.headers['x-ms-continuation-nextrowkey'];
    query =
      `${firstQuery}&NextPartitionKey=${encodeURIComponent(nextPartitionKey)}` +
      (typeof nextRowKey === 'string' ? `&NextRowKey=${encodeURIComponent(nextRowKey)}` : '');
  }
  throw new Error(`query ${filter} did not end within ${pagesPerQueryMax} pages`);
}

function checkCount(actual: number, expected: number): string | undefined {
  return actual === expected ? undefined : `returned ${actual} entities, expected ${expected}`;
}

/** xorshift32: cheap, reproducible per run and worker. */
function randomSource(runId: number, worker: number): () => number {
  let state = (Math.imul(runId + 1, 0x9e3779b1) ^ Math.imul(worker + 1, 0x85ebca6b)) | 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
}
