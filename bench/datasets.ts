// Preloaded read-mostly tables, written once per server through 100-entity batches.
import {
  batchHeaders,
  batchInsertBody,
  batchResponseFailure,
  bucketCount,
  padded,
  type BatchInsert,
} from './entities.js';
import { expectStatus, type TableHttpClient } from './client.js';

export type DatasetName = 'entities' | 'partition' | 'big';

export interface Dataset {
  readonly name: DatasetName;
  readonly table: string;
  readonly count: number;
  /** Keys of entity `index`; its properties are `entityProperties(index)`. */
  key(index: number): { partitionKey: string; rowKey: string };
}

const entitiesPerPartition = 100;
const batchSize = 100;
const batchesInFlight = 4;
/** Entities in the one-partition table (the "10k-entity partition"). */
export const partitionDatasetCount = 10_000;
export const bigDatasetCount = 1_000_000;

/** N entities, 100 per partition: point reads, writes over existing keys, the table scan. */
export function spreadDataset(name: 'entities' | 'big', table: string, count: number): Dataset {
  return {
    name,
    table,
    count,
    key: (index) => ({
      partitionKey: `p${padded(Math.floor(index / entitiesPerPartition), 5)}`,
      rowKey: `r${padded(index % entitiesPerPartition, 3)}`,
    }),
  };
}

/** One partition `scan` of 10k entities: the partition scan and the RowKey-range query. */
export function partitionDataset(): Dataset {
  return {
    name: 'partition',
    table: 'benchpartition',
    count: partitionDatasetCount,
    key: (index) => ({ partitionKey: 'scan', rowKey: `r${padded(index, 5)}` }),
  };
}

/** How many entities of a spread dataset have `Bucket eq bucket`. */
export function bucketMatches(dataset: Dataset, bucket: number): number {
  return bucket >= dataset.count ? 0 : Math.floor((dataset.count - 1 - bucket) / bucketCount) + 1;
}

export async function createTable(client: TableHttpClient, table: string): Promise<void> {
  await expectStatus(
    `create table ${table}`,
    client.send({
      method: 'POST',
      resource: 'Tables',
      headers: { prefer: 'return-no-content' },
      body: JSON.stringify({ TableName: table }),
    }),
    204,
  );
}

/** Creates the dataset's table and inserts every entity; batches never cross a partition. */
export async function preload(
  client: TableHttpClient,
  dataset: Dataset,
  onProgress: (loaded: number) => void,
): Promise<void> {
  await createTable(client, dataset.table);
  await loadEntities(client, dataset, 0, dataset.count, onProgress);
}

/** Posts one change set of inserts into one partition; throws unless every insert succeeded. */
export async function insertBatch(
  client: TableHttpClient,
  table: string,
  partitionKey: string,
  inserts: readonly BatchInsert[],
  what: string,
): Promise<void> {
  const { contentType, body } = batchInsertBody(`${client.baseUrl}/${table}`, partitionKey, inserts);
  const response = await expectStatus(
    what,
    client.send({
      method: 'POST',
      resource: '$batch',
      headers: { ...batchHeaders, 'content-type': contentType },
      body,
      readBody: true,
    }),
    202,
  );
  const failure = batchResponseFailure(response.body);
  if (failure !== undefined) throw new Error(`${what}: ${failure}`);
}

/** Inserts entities `from` … `to - 1` of the dataset into its existing table. */
export async function loadEntities(
  client: TableHttpClient,
  dataset: Dataset,
  from: number,
  to: number,
  onProgress: (loaded: number) => void,
): Promise<void> {
  let next = from;
  let loaded = 0;
  const loadBatches = async (): Promise<void> => {
    while (next < to) {
      const first = next;
      const partitionKey = dataset.key(first).partitionKey;
      const inserts = [];
      while (next < to && inserts.length < batchSize && dataset.key(next).partitionKey === partitionKey) {
        inserts.push({ rowKey: dataset.key(next).rowKey, seed: next });
        next++;
      }
      await insertBatch(client, dataset.table, partitionKey, inserts, `preload ${dataset.table} from ${first}`);
      loaded += inserts.length;
      onProgress(loaded);
    }
  };
  await Promise.all(Array.from({ length: batchesInFlight }, loadBatches));
}
