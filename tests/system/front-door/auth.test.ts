// Shared Key and Shared Key Lite through the real server (Azure REST: authorize-with-shared-key): SDK clients built
// every
// supported way, raw signed requests in both formats, and every rejection path.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { TableServiceClient, TableClient } from '@azure/data-tables';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';
import {
  assertError,
  canonicalizedResource,
  describeResponse,
  devPath,
  entityPath,
  hmacBase64,
  send,
  stringToSign,
  type Signing,
} from '../../helpers/http.js';
import { clientOptions, serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';

const minute = 60_000;

function dateAgo(ms: number): string {
  return new Date(Date.now() - ms).toUTCString();
}

describe('test signer matches the spec vectors', () => {
  test('Shared Key (Table format), Azure REST: authorize-with-shared-key', () => {
    const text = stringToSign('SharedKey', {
      verb: 'POST',
      contentMd5: '',
      contentType: 'application/json;odata=nometadata',
      date: 'Sat, 21 Nov 2026 04:16:14 GMT',
      resource: canonicalizedResource(devAccount, '/devstoreaccount1/Tables'),
    });
    assert.equal(hmacBase64(devKey, text), 'UTsao0jQbKBhHK48pD+r/JizWR3A/jiZygLDtvfaSs4=');
  });

  test('Shared Key signs the raw path and ignores non-comp query parameters, Azure REST: authorize-with-shared-key', () => {
    const text = stringToSign('SharedKey', {
      verb: 'GET',
      contentMd5: '',
      contentType: '',
      date: 'Sat, 21 Nov 2026 04:16:16 GMT',
      resource: canonicalizedResource(
        devAccount,
        "/devstoreaccount1/pytable(PartitionKey='p%27%271',RowKey='r%2F%20x')?$select=s%2Ci",
      ),
    });
    assert.equal(hmacBase64(devKey, text), 'hBUC4UscnvgYhA3iaIWMkWPTtzRTuD2iQsoVcdHEOx4=');
  });

  test('Shared Key Lite, Azure REST: authorize-with-shared-key', () => {
    const text = stringToSign('SharedKeyLite', {
      verb: 'GET',
      contentMd5: '',
      contentType: '',
      date: 'Sat, 21 Nov 2026 04:16:36 GMT',
      resource: canonicalizedResource(devAccount, '/devstoreaccount1/jstable?comp=acl'),
    });
    assert.equal(hmacBase64(devKey, text), 'nI5FutIZVCIw05YZZ6CzJDDAq7DRWvkrBKWZWkijG/4=');
  });
});

describe('authentication against a running server', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true });
  });
  after(async () => {
    await server?.stop();
  });

  async function roundTripThrough(service: TableServiceClient, table: TableClient): Promise<void> {
    await service.createTable(table.tableName);
    await table.createEntity({ partitionKey: 'p', rowKey: 'r', n: 7 });
    const got = await table.getEntity<{ n: number }>('p', 'r');
    assert.equal(got.n, 7);
    const names: string[] = [];
    for await (const t of service.listTables({ queryOptions: { filter: `TableName eq '${table.tableName}'` } })) {
      names.push(t.name!);
    }
    assert.deepEqual(names, [table.tableName]);
  }

  test('SDK with an explicit connection string (Shared Key Lite)', async () => {
    const cs =
      `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};` +
      `TableEndpoint=http://127.0.0.1:${server.port}/${devAccount}`;
    const name = uniqueTableName('cs');
    await roundTripThrough(
      TableServiceClient.fromConnectionString(cs, clientOptions),
      TableClient.fromConnectionString(cs, name, clientOptions),
    );
  });

  test('SDK with AzureNamedKeyCredential', async () => {
    const service = serviceClient(server);
    const name = uniqueTableName('cred');
    await roundTripThrough(service, tableClient(server, name));
  });

  test('raw Shared Key Lite request is accepted', async () => {
    const res = await send(server.port, { method: 'GET', path: devPath('Tables?$top=1') });
    assert.equal(res.status, 200, describeResponse(res));
  });

  test('raw Shared Key (full Table format) with Content-Type is accepted, on create and point read', async () => {
    const table = uniqueTableName('sk');
    const sk: Signing = { scheme: 'SharedKey' };
    const created = await send(server.port, {
      method: 'POST',
      path: devPath('Tables'),
      headers: { 'Content-Type': 'application/json;odata=nometadata' },
      body: { TableName: table },
      auth: sk,
    });
    assert.equal(created.status, 201, describeResponse(created));
    const inserted = await send(server.port, {
      method: 'POST',
      path: devPath(table),
      body: { PartitionKey: "p'1", RowKey: 'r x' },
      auth: sk,
    });
    assert.equal(inserted.status, 201, describeResponse(inserted));
    // Python-style key literal: the percent-encoded path is what gets signed (Azure REST: authorize-with-shared-key
    // vector 2).
    const read = await send(server.port, {
      method: 'GET',
      path: `/${devAccount}/${table}(PartitionKey='p%27%271',RowKey='r%20x')?$select=RowKey`,
      auth: sk,
    });
    assert.equal(read.status, 200, describeResponse(read));
    assert.equal(read.json().RowKey, 'r x');
  });

  test('Shared Key uses Date when x-ms-date is absent', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: devPath('Tables'),
      headers: { 'x-ms-date': undefined, Date: new Date().toUTCString() },
      auth: { scheme: 'SharedKey' },
    });
    assert.equal(res.status, 200, describeResponse(res));
  });

  test('x-ms-date wins over Date', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: devPath('Tables'),
      headers: { Date: dateAgo(60 * minute) },
      auth: { scheme: 'SharedKeyLite' },
    });
    assert.equal(res.status, 200, describeResponse(res));
  });

  test('no Authorization header → 403 AuthenticationFailed with a JSON body', async () => {
    const res = await send(server.port, { method: 'GET', path: devPath('Tables'), auth: 'none' });
    assertError(res, 403, 'AuthenticationFailed');
    assert.match(String(res.headers['content-type']), /application\/json/);
  });

  test('bad signature → 403 AuthenticationFailed (both schemes)', async () => {
    for (const scheme of ['SharedKeyLite', 'SharedKey']) {
      const res = await send(server.port, {
        method: 'GET',
        path: devPath('Tables'),
        headers: { Authorization: `${scheme} ${devAccount}:${randomBytes(32).toString('base64')}` },
        auth: 'none',
      });
      assertError(res, 403, 'AuthenticationFailed');
    }
  });

  test('malformed Authorization headers → 403, never 5xx', async () => {
    for (const value of [
      'SharedKeyLite',
      `SharedKeyLite ${devAccount}`,
      `SharedKeyLite ${devAccount}:`,
      'Basic abc',
      'SharedKey :x',
      '',
    ]) {
      const res = await send(server.port, {
        method: 'GET',
        path: devPath('Tables'),
        headers: { Authorization: value },
        auth: 'none',
      });
      assert.equal(res.status, 403, `${JSON.stringify(value)}: ${describeResponse(res)}`);
    }
  });

  test('wrong key → 403 (both schemes)', async () => {
    for (const scheme of ['SharedKeyLite', 'SharedKey'] as const) {
      const res = await send(server.port, {
        method: 'GET',
        path: devPath('Tables'),
        auth: { scheme, key: randomBytes(64).toString('base64') },
      });
      assertError(res, 403, 'AuthenticationFailed');
    }
  });

  test('Shared Key covers the verb; Lite covers the path', async () => {
    const verb = await send(server.port, {
      method: 'DELETE',
      path: devPath(`Tables('${uniqueTableName()}')`),
      auth: { scheme: 'SharedKey', signedVerb: 'GET' },
    });
    assertError(verb, 403, 'AuthenticationFailed');
    const path = await send(server.port, {
      method: 'GET',
      path: devPath('Tables'),
      auth: { scheme: 'SharedKeyLite', signedTarget: devPath('Tablez') },
    });
    assertError(path, 403, 'AuthenticationFailed');
  });

  test('a Content-Type that differs from the signed one → 403 (Shared Key)', async () => {
    // Sign over application/json but send odata=nometadata: build the header by hand.
    const date = new Date().toUTCString();
    const signed = stringToSign('SharedKey', {
      verb: 'POST',
      contentMd5: '',
      contentType: 'application/json',
      date,
      resource: canonicalizedResource(devAccount, devPath('Tables')),
    });
    const res = await send(server.port, {
      method: 'POST',
      path: devPath('Tables'),
      headers: {
        'x-ms-date': date,
        'Content-Type': 'application/json;odata=nometadata',
        Authorization: `SharedKey ${devAccount}:${hmacBase64(devKey, signed)}`,
      },
      body: { TableName: uniqueTableName() },
      auth: 'none',
    });
    assertError(res, 403, 'AuthenticationFailed');
  });

  test('request date older than 15 minutes → 403; 10 minutes is still fine', async () => {
    for (const scheme of ['SharedKeyLite', 'SharedKey'] as const) {
      const old = await send(server.port, {
        method: 'GET',
        path: devPath('Tables'),
        auth: { scheme, date: dateAgo(16 * minute) },
      });
      assertError(old, 403, 'AuthenticationFailed');
      const recent = await send(server.port, {
        method: 'GET',
        path: devPath('Tables'),
        auth: { scheme, date: dateAgo(10 * minute) },
      });
      assert.equal(recent.status, 200, describeResponse(recent));
    }
  });

  test('an unparseable date → 403', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: devPath('Tables'),
      auth: { scheme: 'SharedKeyLite', date: 'not a date' },
    });
    assertError(res, 403, 'AuthenticationFailed');
  });

  test('entity operations are authenticated too', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: entityPath(uniqueTableName(), 'p', 'r'),
      auth: { scheme: 'SharedKeyLite', key: randomBytes(64).toString('base64') },
    });
    assertError(res, 403, 'AuthenticationFailed');
  });
});

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('UseDevelopmentStorage=true', () => {
  test('works against a server on 127.0.0.1:10002', async (t) => {
    if (!(await portIsFree(10002))) {
      t.skip('port 10002 is in use on this machine: UseDevelopmentStorage=true cannot be pointed elsewhere');
      return;
    }
    let server: RunningServer;
    try {
      server = await startServer({ inMemory: true, args: ['--host', '127.0.0.1', '--port', '10002'] });
    } catch (e) {
      if (!/EADDRINUSE/.test(String(e))) throw e;
      t.skip('port 10002 was taken between the probe and the start');
      return;
    }
    try {
      const options = { retryOptions: { maxRetries: 0 } };
      const service = TableServiceClient.fromConnectionString('UseDevelopmentStorage=true', options);
      const name = uniqueTableName('dev');
      await service.createTable(name);
      const table = TableClient.fromConnectionString('UseDevelopmentStorage=true', name, options);
      await table.upsertEntity({ partitionKey: 'p', rowKey: 'r', v: 'x' }, 'Merge');
      assert.equal((await table.getEntity<{ v: string }>('p', 'r')).v, 'x');
      await service.deleteTable(name);
    } finally {
      await server.stop();
    }
  });
});
