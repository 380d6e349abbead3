// Accounts and URL forms (docs/protocol-notes.md#urls-and-accounts, Azure REST: authorize-with-shared-key):
// AZURITE_ACCOUNTS adds accounts with two
// keys, each account's tables are its own, and both path-style and host-style addressing work.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { RestError } from '@azure/data-tables';
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import { uniqueContainerName } from '../../helpers/blob.js';
import { describeRun, runCli } from '../../helpers/cli.js';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';
import { describeResponse, send, type Signing } from '../../helpers/http.js';
import { serviceClient, tableClient, uniqueTableName, type AccountCredentials } from '../../helpers/sdk.js';

const second: AccountCredentials = { account: 'acctwo', key: randomBytes(64).toString('base64') };
const secondKey2 = randomBytes(64).toString('base64');
const third: AccountCredentials = { account: 'acthree', key: randomBytes(32).toString('base64') };

async function tableNames(server: RunningServer, creds?: AccountCredentials): Promise<string[]> {
  const names: string[] = [];
  for await (const t of serviceClient(server, creds).listTables()) names.push(t.name!);
  return names;
}

async function assertForbidden(work: () => Promise<unknown>): Promise<void> {
  await assert.rejects(work, (e: unknown) => e instanceof RestError && e.statusCode === 403);
}

describe('accounts and addressing', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      inMemory: true,
      env: { AZURITE_ACCOUNTS: `${second.account}:${second.key}:${secondKey2};${third.account}:${third.key}` },
    });
  });
  after(async () => {
    await server?.stop();
  });

  test('an AZURITE_ACCOUNTS account works with its first key', async () => {
    const name = uniqueTableName('two');
    await serviceClient(server, second).createTable(name);
    const client = tableClient(server, name, second);
    await client.createEntity({ partitionKey: 'p', rowKey: 'r', who: 'second' });
    assert.equal((await client.getEntity<{ who: string }>('p', 'r')).who, 'second');
  });

  test('the second key is accepted as well', async () => {
    const name = uniqueTableName('key2');
    await serviceClient(server, { account: second.account, key: secondKey2 }).createTable(name);
    assert.ok((await tableNames(server, second)).includes(name));
  });

  test('every account listed in AZURITE_ACCOUNTS exists (";"-separated)', async () => {
    const name = uniqueTableName('three');
    await serviceClient(server, third).createTable(name);
    assert.ok((await tableNames(server, third)).includes(name));
  });

  test("one account's key does not open another account", async () => {
    await assertForbidden(() => tableNames(server, { account: second.account, key: devKey }));
    await assertForbidden(() => tableNames(server, { account: devAccount, key: second.key }));
    await assertForbidden(() => tableNames(server, { account: second.account, key: third.key }));
  });

  test("accounts' tables are separate", async () => {
    const name = uniqueTableName('Sep');
    await serviceClient(server, second).createTable(name);
    assert.ok(!(await tableNames(server)).includes(name), 'devstoreaccount1 must not see acctwo tables');
    assert.ok(!(await tableNames(server, third)).includes(name), 'acthree must not see acctwo tables');
    // The same name can be created in another account: 201, not 409.
    const created = await send(server.port, {
      method: 'POST',
      path: `/${devAccount}/Tables`,
      body: { TableName: name },
    });
    assert.equal(created.status, 201, describeResponse(created));
    await tableClient(server, name, second).createEntity({ partitionKey: 'p', rowKey: 'only-in-second' });
    const devRows = [];
    for await (const e of tableClient(server, name).listEntities()) devRows.push(e);
    assert.deepEqual(devRows, []);
  });

  test('an unknown account is refused (4xx), also with a self-consistent signature', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: '/nosuchaccount/Tables',
      auth: { scheme: 'SharedKeyLite', account: 'nosuchaccount', key: devKey },
    });
    assert.ok(res.status >= 400 && res.status < 500, describeResponse(res));
  });

  test('host-style: account from the Host header, path without the account segment', async () => {
    const table = uniqueTableName('hs');
    const host = `${devAccount}.table.localhost:${server.port}`;
    const created = await send(server.port, {
      method: 'POST',
      path: '/Tables',
      headers: { Host: host },
      body: { TableName: table },
    });
    assert.equal(created.status, 201, describeResponse(created));
    assert.ok((await tableNames(server)).includes(table), 'host-style create must land in devstoreaccount1');

    const inserted = await send(server.port, {
      method: 'POST',
      path: `/${table}`,
      headers: { Host: host, Prefer: 'return-no-content' },
      body: { PartitionKey: 'p', RowKey: 'r', v: 1 },
    });
    assert.equal(inserted.status, 204, describeResponse(inserted));
    const read = await send(server.port, {
      method: 'GET',
      path: `/${table}(PartitionKey='p',RowKey='r')`,
      headers: { Host: host },
    });
    assert.equal(read.status, 200, describeResponse(read));
    assert.equal(read.json().v, 1);
    const viaPath = await tableClient(server, table).getEntity<{ v: number }>('p', 'r');
    assert.equal(viaPath.v, 1);
  });

  test('host-style for an extra account sees only that account', async () => {
    const table = uniqueTableName('hstwo');
    await serviceClient(server, second).createTable(table);
    const sign: Signing = { scheme: 'SharedKeyLite', account: second.account, key: second.key };
    const res = await send(server.port, {
      method: 'GET',
      path: `/Tables?$filter=${encodeURIComponent(`TableName eq '${table}'`)}`,
      headers: { Host: `${second.account}.table.localhost:${server.port}` },
      auth: sign,
    });
    assert.equal(res.status, 200, describeResponse(res));
    assert.deepEqual(
      res.json().value.map((t: { TableName: string }) => t.TableName),
      [table],
    );
    const wrongKey = await send(server.port, {
      method: 'GET',
      path: '/Tables',
      headers: { Host: `${second.account}.table.localhost:${server.port}` },
      auth: { ...sign, key: devKey },
    });
    assert.equal(wrongKey.status, 403, describeResponse(wrongKey));
  });

  test('SDK against http://localhost:PORT/<account> (tunnelled MERGE) merges, never inserts', async () => {
    // The SDK treats this URL as "Cosmos-like" and sends merges as POST + X-HTTP-Method: MERGE
    // (Azure REST: merge-entity); a 201 from the server would make the SDK throw.
    const table = uniqueTableName('tun');
    await serviceClient(server, second, 'localhost').createTable(table);
    const client = tableClient(server, table, second, 'localhost');
    await client.createEntity({ partitionKey: 'p', rowKey: 'r', a: 1 });
    await client.updateEntity({ partitionKey: 'p', rowKey: 'r', b: 2 }, 'Merge');
    await client.upsertEntity({ partitionKey: 'p', rowKey: 'new', c: 3 }, 'Merge');
    const merged = await client.getEntity<{ a: number; b: number }>('p', 'r');
    assert.equal(merged.a, 1);
    assert.equal(merged.b, 2);
    assert.equal((await client.getEntity<{ c: number }>('p', 'new')).c, 3);
  });
});

// Azurite decodes each key as Node.js decodes base64, so Azurite's own tests give a second key
// `testing_key`, which is no standard base64; the SDKs decode the key they sign with the same way.
describe('AZURITE_ACCOUNTS as Azurite takes it', () => {
  const key1 = randomBytes(64).toString('base64');
  let server: RunningServer;
  before(async () => {
    server = await startServer({
      inMemory: true,
      env: { AZURITE_ACCOUNTS: `account1:${key1}:testing_key;account2:key1` },
    });
  });
  after(async () => {
    await server?.stop();
  });

  for (const [label, key] of [
    ['its first key', () => key1],
    ['the second key testing_key', () => 'testing_key'],
  ] as const) {
    test(`the Blob SDK works for account1 with ${label}`, async () => {
      const url = new URL(server.blobUrl!);
      url.pathname = '/account1';
      const client = new BlobServiceClient(url.href, new StorageSharedKeyCredential('account1', key()));
      const container = client.getContainerClient(uniqueContainerName('azk'));
      await container.create();
      await container.getBlockBlobClient('b').upload('hello', 5);
      assert.equal((await container.getBlockBlobClient('b').downloadToBuffer()).toString(), 'hello');
    });
  }

  test('account2:key1 (a key that is not base64 either) opens account2 alone', async () => {
    const name = uniqueTableName('a2');
    await serviceClient(server, { account: 'account2', key: 'key1' }).createTable(name);
    assert.ok((await tableNames(server, { account: 'account2', key: 'key1' })).includes(name));
    await assertForbidden(() => tableNames(server, { account: 'account1', key: 'key1' }));
  });

  test('a malformed value is one line and exit 2, no stack trace', async () => {
    for (const value of ['account1', 'account1:k1:k2:k3', 'account1:', 'Bad_Name:key1']) {
      const result = await runCli(['--in-memory', '--port', '0', '--queue-port', '0', '--blob-port', '0'], {
        env: { AZURITE_ACCOUNTS: value },
      });
      assert.equal(result.code, 2, `${value}: ${describeRun(result)}`);
      assert.match(result.stderr, /^cerulean: AZURITE_ACCOUNTS is malformed: [^\n]+\n$/, value);
    }
  });
});
