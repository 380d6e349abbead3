// The URL shapes of the legacy .NET libraries (WindowsAzure.Storage 9.x, Microsoft.Azure.Cosmos.Table;
// see parseResource in src/table/resources.ts for where each comes from): `POST /Tables()` creates a
// table, `POST /{table}()` inserts an entity, single and inside $batch, through raw HTTP as those
// libraries send them, checked with the JS SDK, on every engine.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { absoluteUrl, changesetBody, op, postBatch, readBatchResponse } from '../../helpers/batch.js';
import { assertError, describeResponse, devPath, send } from '../../helpers/http.js';
import { serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { startServer, storeSetups, type RunningServer } from '../../helpers/server.js';

/** The headers WindowsAzure.Storage 9.x puts on a single table operation (TableOperationHttpRequestFactory.cs). */
const dotnetHeaders = {
  Accept: 'application/json;odata=minimalmetadata',
  'Content-Type': 'application/json',
  DataServiceVersion: '3.0;',
  MaxDataServiceVersion: '3.0;NetFx',
  'Accept-Charset': 'UTF-8',
};

for (const { label, options } of storeSetups) {
  describe(`legacy .NET URL shapes (${label})`, () => {
    let server: RunningServer;
    let table: string;

    before(async () => {
      server = await startServer(options);
      table = uniqueTableName('legacy');
      const res = await send(server.port, {
        method: 'POST',
        path: devPath('Tables()'),
        headers: { ...dotnetHeaders, Prefer: 'return-no-content' },
        body: { TableName: table },
      });
      assert.equal(res.status, 204, describeResponse(res));
    });
    after(async () => {
      await server?.stop();
    });

    test('POST /Tables() created the table; a second one is 409 TableAlreadyExists', async () => {
      const names: string[] = [];
      for await (const item of serviceClient(server).listTables()) names.push(item.name!);
      assert.ok(names.includes(table), names.join(','));
      const again = await send(server.port, {
        method: 'POST',
        path: devPath('Tables()'),
        headers: dotnetHeaders,
        body: { TableName: table },
      });
      assertError(again, 409, 'TableAlreadyExists');
    });

    test('POST /{table}() inserts: 201 with the entity, or 204 without; 409 on the same keys', async () => {
      const created = await send(server.port, {
        method: 'POST',
        path: devPath(`${table}()`),
        headers: { ...dotnetHeaders, Prefer: 'return-content' },
        body: { PartitionKey: 'p', RowKey: 'one', n: 1 },
      });
      assert.equal(created.status, 201, describeResponse(created));
      assert.equal(created.json().RowKey, 'one');
      const quiet = await send(server.port, {
        method: 'POST',
        path: devPath(`${table}()`),
        headers: { ...dotnetHeaders, Prefer: 'return-no-content' },
        body: { PartitionKey: 'p', RowKey: 'two', n: 2 },
      });
      assert.equal(quiet.status, 204, describeResponse(quiet));
      const client = tableClient(server, table);
      assert.equal((await client.getEntity<{ n: number }>('p', 'one')).n, 1);
      assert.equal((await client.getEntity<{ n: number }>('p', 'two')).n, 2);
      const twice = await send(server.port, {
        method: 'POST',
        path: devPath(`${table}()`),
        headers: dotnetHeaders,
        body: { PartitionKey: 'p', RowKey: 'one' },
      });
      assertError(twice, 409, 'EntityAlreadyExists');
    });

    test('a $batch of inserts to /{table}() with an upsert, a merge and a delete: all applied', async () => {
      const client = tableClient(server, table);
      await client.createEntity({ partitionKey: 'b', rowKey: 'merged', n: 0 });
      await client.createEntity({ partitionKey: 'b', rowKey: 'deleted' });
      const tableUrl = absoluteUrl(server.port, `${table}()`);
      const entityUrl = (rk: string) => absoluteUrl(server.port, `${table}(PartitionKey='b',RowKey='${rk}')`);
      const res = await postBatch(
        server.port,
        changesetBody([
          op.insert(tableUrl, { PartitionKey: 'b', RowKey: 'x1', n: 1 }),
          op.insert(tableUrl, { PartitionKey: 'b', RowKey: 'x2', n: 2 }),
          op.upsert(entityUrl('x3'), 'Replace', { PartitionKey: 'b', RowKey: 'x3', n: 3 }),
          op.update(entityUrl('merged'), 'Merge', { PartitionKey: 'b', RowKey: 'merged', m: 1 }),
          op.delete(entityUrl('deleted')),
        ]),
      );
      assert.equal(res.status, 202, describeResponse(res));
      assert.deepEqual(
        readBatchResponse(res).parts.map((part) => part.status),
        [204, 204, 204, 204, 204],
      );
      const rows: string[] = [];
      for await (const entity of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'b'" } }))
        rows.push(entity.rowKey!);
      assert.deepEqual(rows.sort(), ['merged', 'x1', 'x2', 'x3']);
    });

    test('a $batch insert into /{table}() whose keys exist fails that operation with 409', async () => {
      const res = await postBatch(
        server.port,
        changesetBody([op.insert(absoluteUrl(server.port, `${table}()`), { PartitionKey: 'p', RowKey: 'one' })]),
      );
      assert.equal(res.status, 202, describeResponse(res));
      assert.equal(readBatchResponse(res).parts[0]!.status, 409);
    });

    test("the table goes with DELETE /Tables('{name}')", async () => {
      const res = await send(server.port, {
        method: 'DELETE',
        path: devPath(`Tables('${table}')`),
        headers: dotnetHeaders,
      });
      assert.equal(res.status, 204, describeResponse(res));
      assert.equal((await send(server.port, { method: 'GET', path: devPath(`Tables('${table}')`) })).status, 404);
    });
  });
}
