// One route table decides what a request is: a request no route matches is refused by routing
// (405), counted as 'Unknown', and never reaches fault rules or throttling aimed at the operation
// it resembles; a matched one is counted and faulted under its route's operation name.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../helpers/server.js';
import { describeResponse, devPath, errorCode, send } from '../helpers/http.js';
import { sample, scrape } from '../helpers/metrics.js';

// Every request these operations name is refused with 503 ServerBusy.
const rules = {
  rules: [
    { kind: 'serverBusy', operation: 'SetTableServiceProperties', every: 1 },
    { kind: 'serverBusy', operation: 'EntityGroupTransaction', every: 1 },
  ],
};

describe('the route table', () => {
  let server: RunningServer;
  let dir: string;
  const requests = async (labels: Record<string, string>) =>
    sample(await scrape(server.port), 'cerulean_requests_total', labels);

  before(async () => {
    dir = makeTempDir();
    const file = join(dir, 'faults.json');
    writeFileSync(file, JSON.stringify(rules));
    server = await startServer({ inMemory: true, args: ['--faults', file] });
  });
  after(async () => {
    await server?.stop();
    removeDir(dir);
  });

  test('DELETE on service properties: 405, counted as Unknown, not faulted as SetTableServiceProperties', async () => {
    const res = await send(server.port, { method: 'DELETE', path: `${devPath('')}?restype=service&comp=properties` });
    assert.equal(res.status, 405, describeResponse(res));
    assert.equal(res.headers['x-ms-error-code'], 'MethodNotAllowed');
    assert.match(res.text, /^<\?xml version="1\.0" encoding="utf-8"\?><Error><Code>MethodNotAllowed<\/Code>/);
    assert.equal(await requests({ operation: 'Unknown', status: '405' }), 1);
    assert.equal(await requests({ operation: 'SetTableServiceProperties' }), undefined);
  });

  test('GET on $batch is 405, counted as Unknown, not as an entity group transaction', async () => {
    const res = await send(server.port, { method: 'GET', path: devPath('$batch') });
    assert.equal(res.status, 405, describeResponse(res));
    assert.equal(errorCode(res), 'MethodNotAllowed');
    assert.equal(await requests({ operation: 'Unknown', status: '405' }), 2);
    assert.equal(await requests({ operation: 'EntityGroupTransaction' }), undefined);
  });

  test('the operations themselves are matched, counted and faulted by name', async () => {
    const res = await send(server.port, {
      method: 'PUT',
      path: `${devPath('')}?restype=service&comp=properties`,
      headers: { 'Content-Type': 'application/xml' },
      body: '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties></StorageServiceProperties>',
    });
    assert.equal(res.status, 503, describeResponse(res));
    assert.equal(res.headers['x-ms-error-code'], 'ServerBusy');
    assert.equal(await requests({ operation: 'SetTableServiceProperties', status: '503' }), 1);
  });

  test('an entity write is named by its If-Match header', async () => {
    const created = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: 'routes' } });
    assert.equal(created.status, 201, describeResponse(created));
    const entity = devPath("routes(PartitionKey='p',RowKey='r')");
    const upsert = await send(server.port, { method: 'PUT', path: entity, body: { Value: 1 } });
    assert.equal(upsert.status, 204, describeResponse(upsert));
    const update = await send(server.port, {
      method: 'PUT',
      path: entity,
      headers: { 'If-Match': '*' },
      body: { Value: 2 },
    });
    assert.equal(update.status, 204, describeResponse(update));
    assert.equal(await requests({ operation: 'InsertOrReplaceEntity', status: '204' }), 1);
    assert.equal(await requests({ operation: 'UpdateEntity', status: '204' }), 1);
  });

  test('the banner names the queue and blob endpoints, and the connection string every service', () => {
    assert.match(server.queueUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
    assert.match(server.blobUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
    assert.match(server.connectionString, /;TableEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;/);
    assert.match(server.connectionString, /;QueueEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;/);
    assert.match(server.connectionString, /;BlobEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;$/);
  });
});
