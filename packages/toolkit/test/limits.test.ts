// Limits are refused before anything is sent (a request counter proves nothing left the client),
// and the largest allowed values at each limit are accepted by both servers (the checks are not
// stricter than the service).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PipelinePolicy } from '@azure/core-rest-pipeline';
import type { TableClient } from '@azure/data-tables';
import {
  connect,
  defineModel,
  LimitError,
  ModelTable,
  SchemaError,
  submitBatch,
  t,
  validateEntity,
  type WireProperties,
} from '../src/index.js';
import { serverKinds, serversForFile } from './fixtures.js';
import { uniqueTableName } from './servers.js';

const Doc = defineModel({
  kind: 'doc',
  schema: {
    owner: t.string(),
    id: t.string(),
    body: t.string().optional(),
    blob: t.binary().optional(),
    when: t.dateTime().optional(),
    count: t.int32().optional(),
    big: t.int64().optional(),
  },
  partitionKey: ['owner'],
  rowKey: ['id'],
});

function props(count: number, make: (i: number) => WireProperties[string]): WireProperties {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, make(i)]));
}

/** Each entity or transaction the toolkit must refuse before sending: what it is, the attempt, the error code. */
function refusalCases(docs: ModelTable<typeof Doc.schema>, client: TableClient): Refusal[] {
  return [...entityRefusals(docs), ...transactionRefusals(client)];
}

type Refusal = [string, () => Promise<unknown>, string];

function entityRefusals(docs: ModelTable<typeof Doc.schema>): Refusal[] {
  return [
    [
      'PartitionKey over 1 KiB (512 UTF-16 units)',
      () => docs.upsert({ owner: 'o'.repeat(513), id: '1' }),
      'KeyValueTooLarge',
    ],
    ['RowKey over 1 KiB after escaping', () => docs.upsert({ owner: 'o', id: '/'.repeat(257) }), 'KeyValueTooLarge'],
    [
      'a string of 32 Ki + 1 UTF-16 units',
      () => docs.upsert({ owner: 'o', id: '1', body: 'x'.repeat(32 * 1024 + 1) }),
      'PropertyValueTooLarge',
    ],
    [
      'a binary of 64 KiB + 1',
      () => docs.upsert({ owner: 'o', id: '1', blob: new Uint8Array(64 * 1024 + 1) }),
      'PropertyValueTooLarge',
    ],
    [
      'a DateTime before 1601',
      () => docs.upsert({ owner: 'o', id: '1', when: new Date(Date.UTC(1600, 11, 31)) }),
      'OutOfRangeInput',
    ],
    ['a raw key with #', async () => validateEntity('a#b', '', {}), 'OutOfRangeInput'],
    ['a raw key with a control character', async () => validateEntity('', 'a\u0001', {}), 'OutOfRangeInput'],
    [
      '253 custom properties',
      async () =>
        validateEntity(
          'p',
          'r',
          props(253, () => ({ value: 1, type: 'Int32' })),
        ),
      'TooManyProperties',
    ],
    [
      'a property name of 256 characters',
      async () => validateEntity('p', 'r', { ['n'.repeat(256)]: { value: 1, type: 'Int32' } }),
      'PropertyNameTooLong',
    ],
    [
      'a property name with a dash',
      async () => validateEntity('p', 'r', { 'a-b': { value: 1, type: 'Int32' } }),
      'PropertyNameInvalid',
    ],
    [
      'an entity over 1 MiB',
      async () =>
        validateEntity(
          'p',
          'r',
          props(17, () => ({ value: 'x'.repeat(32 * 1024), type: 'String' })),
        ),
      'EntityTooLarge',
    ],
  ];
}

function transactionRefusals(client: TableClient): Refusal[] {
  return [
    [
      '101 operations in a transaction',
      () =>
        submitBatch(
          client,
          Array.from({ length: 101 }, (_, i) => ['upsert', { partitionKey: 'p', rowKey: String(i) }, 'Replace']),
        ),
      'TooManyOperations',
    ],
    [
      'a row twice in a transaction',
      () =>
        submitBatch(client, [
          ['upsert', { partitionKey: 'p', rowKey: 'r' }, 'Replace'],
          ['delete', { partitionKey: 'p', rowKey: 'r' }],
        ]),
      'InvalidDuplicateRow',
    ],
    [
      'two partitions in a transaction',
      () =>
        submitBatch(client, [
          ['upsert', { partitionKey: 'p', rowKey: 'r' }, 'Replace'],
          ['upsert', { partitionKey: 'q', rowKey: 'r' }, 'Replace'],
        ]),
      'InvalidInput',
    ],
  ];
}

describe('limits', () => {
  const servers = serversForFile();

  for (const kind of serverKinds) {
    test(`${kind}: refused before sending, with the service's error codes`, async () => {
      let requests = 0;
      const counter: PipelinePolicy = { name: 'counter', sendRequest: (request, next) => (requests++, next(request)) };
      const client = connect(servers.get(kind)!.connectionString, uniqueTableName('Limits'), {
        additionalPolicies: [{ policy: counter, position: 'perCall' }],
      });
      const docs = new ModelTable(client, Doc);
      const refusals = refusalCases(docs, client);
      for (const [what, attempt, code] of refusals) {
        await assert.rejects(attempt, (error: unknown) => error instanceof LimitError && error.code === code, what);
      }
      await assert.rejects(
        () => docs.upsert({ owner: 'o', id: '1', count: 2 ** 31 }),
        SchemaError,
        'Int32 out of range',
      );
      await assert.rejects(
        () => docs.upsert({ owner: 'o', id: '1', big: 1n << 63n }),
        SchemaError,
        'Int64 out of range',
      );
      assert.equal(requests, 0, 'no request was sent');
    });

    test(`${kind}: the largest allowed values are accepted by the server`, async () => {
      const client = connect(servers.get(kind)!.connectionString, uniqueTableName('Limits'));
      await client.createTable();
      const docs = new ModelTable(client, Doc);
      await docs.upsert({ owner: 'o'.repeat(512), id: 'i'.repeat(512) });
      await docs.upsert({
        owner: 'o',
        id: '1',
        body: 'x'.repeat(32 * 1024),
        blob: new Uint8Array(64 * 1024).fill(7),
        when: new Date(Date.UTC(1601, 0, 1)),
      });
      await docs.upsert({
        owner: 'o',
        id: '2',
        when: new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
        count: 2 ** 31 - 1,
        big: (1n << 63n) - 1n,
      });
      const wide = { partitionKey: 'p', rowKey: 'r', ...props(252, (i) => ({ value: i, type: 'Int32' })) };
      validateEntity(
        'p',
        'r',
        props(252, (i) => ({ value: i, type: 'Int32' })),
      );
      await client.upsertEntity(wide, 'Replace');
      const back = await docs.get({ owner: 'o', id: '2' });
      assert.equal(back?.big, (1n << 63n) - 1n);
      assert.equal(back?.when?.toISOString(), '9999-12-31T23:59:59.999Z');
      assert.equal((await docs.get({ owner: 'o', id: '1' }))?.body?.length, 32 * 1024);
      await submitBatch(
        client,
        Array.from({ length: 100 }, (_, i) => ['upsert', { partitionKey: 'b', rowKey: String(i) }, 'Replace']),
      );
      await client.deleteTable();
    });
  }
});
