// If-Match compares entity tags as strings: a weak (or strong) tag the service never issued is a
// condition that fails, 412 UpdateConditionNotSatisfied, never 400; only a value that is no
// entity tag at all (unquoted) is a bad request. Single requests through raw HTTP and the JS SDK,
// and $batch parts, on every engine.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TableClient } from '@azure/data-tables';
import {
  absoluteUrl,
  changesetBody,
  entityResource,
  op,
  postBatch,
  readBatchResponse,
  partError,
} from '../../helpers/batch.js';
import { assertError, describeResponse, entityPath, send } from '../../helpers/http.js';
import { freshTable } from '../../helpers/sdk.js';
import { startServer, storeSetups, type RunningServer } from '../../helpers/server.js';

/** Entity tags Cerulean never issues: foreign, the older form, the service's untrimmed and lowercase spellings. */
const foreignTags = [
  'W/"wrong"',
  'W/"0x8D9C1E2F3A4B5C6"',
  `W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`,
  `W/"datetime'2015-01-01T23%3a14%3a33.498Z'"`,
  '"0x8D1234"',
];

for (const { label, options } of storeSetups) {
  describe(`If-Match with an entity tag never issued → 412 (${label})`, () => {
    let server: RunningServer;
    let client: TableClient;

    before(async () => {
      server = await startServer(options);
      client = await freshTable(server, 'etag');
      await client.createEntity({ partitionKey: 'p', rowKey: 'r', n: 1 });
    });
    after(async () => {
      await server?.stop();
    });

    for (const tag of foreignTags) {
      test(`PUT, MERGE and DELETE with If-Match ${tag}: 412, the entity unchanged`, async () => {
        for (const method of ['PUT', 'MERGE', 'DELETE']) {
          const res = await send(server.port, {
            method,
            path: entityPath(client.tableName, 'p', 'r'),
            headers: { 'If-Match': tag },
            body: method === 'DELETE' ? undefined : { n: 2 },
          });
          assertError(res, 412, 'UpdateConditionNotSatisfied');
        }
        assert.equal((await client.getEntity<{ n: number }>('p', 'r')).n, 1);
      });
    }

    test('the JS SDK: updateEntity and deleteEntity with a weak tag never issued fail with 412', async () => {
      const etag = `W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`;
      await assert.rejects(client.updateEntity({ partitionKey: 'p', rowKey: 'r', n: 3 }, 'Merge', { etag }), {
        statusCode: 412,
      });
      await assert.rejects(client.deleteEntity('p', 'r', { etag }), { statusCode: 412 });
    });

    test('in a $batch the change set fails at that operation with 412', async () => {
      const url = absoluteUrl(server.port, entityResource(client.tableName, 'p', 'r'));
      const insert = op.insert(absoluteUrl(server.port, client.tableName), { PartitionKey: 'p', RowKey: 'new' });
      const res = await postBatch(
        server.port,
        changesetBody([insert, op.update(url, 'Merge', { PartitionKey: 'p', RowKey: 'r', n: 2 }, 'W/"wrong"')]),
      );
      assert.equal(res.status, 202, describeResponse(res));
      const parts = readBatchResponse(res).parts;
      assert.equal(parts.length, 1);
      assert.equal(parts[0]!.status, 412);
      assert.equal(partError(parts[0]!).code, 'UpdateConditionNotSatisfied');
      assert.match(partError(parts[0]!).message.value, /^1:/);
      await assert.rejects(client.getEntity('p', 'new'), { statusCode: 404 });
    });

    test('a tag never issued on a missing entity: 404 ResourceNotFound, as any If-Match', async () => {
      const res = await send(server.port, {
        method: 'MERGE',
        path: entityPath(client.tableName, 'p', 'absent'),
        headers: { 'If-Match': 'W/"wrong"' },
        body: { n: 1 },
      });
      assertError(res, 404, 'ResourceNotFound');
    });

    test('an unquoted value is no entity tag: 400 InvalidInput; the current ETag still matches', async () => {
      const path = entityPath(client.tableName, 'p', 'r');
      assertError(
        await send(server.port, { method: 'MERGE', path, headers: { 'If-Match': 'wrong' }, body: { n: 2 } }),
        400,
        'InvalidInput',
      );
      const current = (await client.getEntity('p', 'r')).etag;
      const res = await send(server.port, { method: 'MERGE', path, headers: { 'If-Match': current }, body: { n: 4 } });
      assert.equal(res.status, 204, describeResponse(res));
    });
  });
}
