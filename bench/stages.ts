// CPU cost per entity of each stage of the request path, in isolation: the $batch
// stages (multipart parse, entity decode and validation, stored-JSON encode, response parts) on
// a 100-entity change set shaped like the JS SDK's (with the one-pass decoder that replaced
// decode + stored encode on the request path, and those two for comparison), and response encoding of a 1000-entity
// page
// at each metadata level (to UTF-8 bytes, as the server sends it). Process CPU time (not wall time, which a shared
// machine inflates),
// median of 9 runs after a warm-up.
//
//   node dist/bench/stages.js
import { decodeEntityBody } from '../src/table/wire/entity-json.js';
import { decodeEntity } from '../src/table/wire/entity-text.js';
import { parseBatchRequest, serializeBatchResponse, type BatchOperationResponse } from '../src/table/wire/batch.js';
import { encodeEntityFeedBytes, type MetadataLevel } from '../src/table/wire/odata.js';
import { StoredEntity } from '../src/storage/sqlite/codec.js';
import { encodeStoredProperties } from '../src/storage/stored-json.js';
import { batchInsertBody, entityJson } from './entities.js';

const runs = 9;
const warmupCalls = 100;
const callsPerRun = 40;

/** Median CPU µs per entity of `step`, which handles `entities` entities per call. */
function measure(entities: number, step: () => unknown): number {
  for (let i = 0; i < warmupCalls; i++) step();
  const perEntityUs: number[] = [];
  for (let run = 0; run < runs; run++) {
    const before = process.cpuUsage();
    for (let i = 0; i < callsPerRun; i++) step();
    const used = process.cpuUsage(before);
    perEntityUs.push((used.user + used.system) / callsPerRun / entities);
  }
  perEntityUs.sort((a, b) => a - b);
  return perEntityUs[Math.floor(runs / 2)]!;
}

const tableUrl = 'http://127.0.0.1:10002/devstoreaccount1/stages';
const batchSize = 100;
const { contentType, body } = batchInsertBody(
  tableUrl,
  'p',
  Array.from({ length: batchSize }, (_, i) => ({ rowKey: `r${i}`, seed: i })),
);
const batchBody = Buffer.from(body);
const parts = parseBatchRequest(contentType, batchBody);
const texts = parts.map((part) => part.body.toString('utf8'));
const decoded = texts.map((text) => decodeEntityBody(text));
const location = `${tableUrl}(PartitionKey='p',RowKey='r1')`;
const responses: BatchOperationResponse[] = parts.map(() => ({
  status: 204,
  headers: [
    ['X-Content-Type-Options', 'nosniff'],
    ['Cache-Control', 'no-cache'],
    ['Preference-Applied', 'return-no-content'],
    ['DataServiceVersion', '3.0;'],
    ['Location', location],
    ['DataServiceId', location],
    ['ETag', `W/"datetime'2024-01-01T00%3A00%3A00.1234567Z'"`],
  ],
}));

const rows: [string, number][] = [
  ['$batch: multipart parse', measure(batchSize, () => parseBatchRequest(contentType, batchBody))],
  ['$batch: entity decode + validation', measure(batchSize, () => texts.map((text) => decodeEntityBody(text)))],
  [
    '$batch: stored-JSON encode',
    measure(batchSize, () => decoded.map((entity) => encodeStoredProperties(entity.properties))),
  ],
  [
    '$batch: one-pass decode to stored JSON (replaces the two above)',
    measure(batchSize, () => texts.map((text) => decodeEntity(text))),
  ],
  ['$batch: response parts', measure(batchSize, () => serializeBatchResponse(responses, { changeset: true }))],
];

const pageSize = 1000;
const stored = Array.from({ length: pageSize }, (_, i) => {
  const entity = decodeEntityBody(entityJson('scan', `r${i}`, i));
  return encodeStoredProperties(entity.properties);
});
const context = {
  baseUrl: 'http://127.0.0.1:10002/devstoreaccount1',
  account: 'devstoreaccount1',
  table: 'benchpartition',
};
for (const level of ['minimal', 'none', 'full'] as MetadataLevel[]) {
  const page = (): void => {
    const entities = stored.map((json, i) => new StoredEntity('scan', `r${i}`, 16_000_000_000_000_000n, json));
    encodeEntityFeedBytes(level, context, entities).release();
  };
  rows.push([`query page encode, ${level} metadata`, measure(pageSize, page)]);
}
const selectPage = (): void => {
  const entities = stored.map((json, i) => new StoredEntity('scan', `r${i}`, 16_000_000_000_000_000n, json));
  encodeEntityFeedBytes('minimal', context, entities, { select: ['Name', 'Counter', 'Created'] }).release();
};
rows.push(['query page encode, minimal, $select of 3', measure(pageSize, selectPage)]);

console.log('| stage | CPU µs per entity |\n| --- | ---: |');
for (const [stage, us] of rows) console.log(`| ${stage} | ${us.toFixed(2)} |`);
