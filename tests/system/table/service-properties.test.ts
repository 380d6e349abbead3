// Service endpoints through the real server (Azure REST: get-table-service-properties, set-table-service-properties,
// get-table-service-stats): Get/Set Table Service
// Properties per account, persisted; Get Table Service Stats; the read-only -secondary endpoint.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServiceProperties } from '@azure/data-tables';
import { describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { devAccount, makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const otherAccount = 'otheraccount';
const otherKey = Buffer.from('the key of the other account....').toString('base64');
const propertiesPath = devPath('?restype=service&comp=properties');

function assertXmlError(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, describeResponse(res));
  assert.equal(res.headers['x-ms-error-code'], code);
  assert.match(res.headers['content-type'] ?? '', /^application\/xml/);
  assert.match(res.text, new RegExp(`<Error><Code>${code}</Code>`));
}

const putProperties = (body: string, path = propertiesPath) =>
  send(server.port, { method: 'PUT', path, body, headers: { 'Content-Type': 'application/xml' } });

const rules: ServiceProperties['cors'] = [
  {
    allowedOrigins: 'http://www.contoso.com,http://www.fabrikam.com',
    allowedMethods: 'GET,PUT,MERGE',
    allowedHeaders: 'x-ms-meta-target*,content-type',
    exposedHeaders: 'x-ms-meta-*',
    maxAgeInSeconds: 500,
  },
];

let server: RunningServer;
before(async () => {
  server = await startServer({ inMemory: true, env: { AZURITE_ACCOUNTS: `${otherAccount}:${otherKey}` } });
});
after(async () => {
  await server.stop();
});

describe('Get/Set Table Service Properties', () => {
  test('a fresh account: logging off, metrics disabled, no CORS rules', async () => {
    const fresh = serviceClient(server, { account: otherAccount, key: otherKey });
    const properties = await fresh.getProperties();
    assert.deepEqual(
      {
        logging: properties.logging,
        hourMetrics: properties.hourMetrics,
        minuteMetrics: properties.minuteMetrics,
        cors: properties.cors,
      },
      {
        logging: {
          version: '1.0',
          delete: false,
          read: false,
          write: false,
          retentionPolicy: { enabled: false, days: undefined },
        },
        hourMetrics: {
          version: '1.0',
          enabled: false,
          includeAPIs: undefined,
          retentionPolicy: { enabled: false, days: undefined },
        },
        minuteMetrics: {
          version: '1.0',
          enabled: false,
          includeAPIs: undefined,
          retentionPolicy: { enabled: false, days: undefined },
        },
        cors: [],
      },
    );
  });

  test('SDK round trip; sections left out keep their values; accounts are separate', async () => {
    const client = serviceClient(server);
    const logging = {
      version: '1.0',
      delete: true,
      read: false,
      write: true,
      retentionPolicy: { enabled: true, days: 7 },
    };
    const hourMetrics = {
      version: '1.0',
      enabled: true,
      includeAPIs: true,
      retentionPolicy: { enabled: true, days: 3 },
    };
    await client.setProperties({ logging, hourMetrics, cors: rules });
    await client.setProperties({
      minuteMetrics: { version: '1.0', enabled: true, includeAPIs: false, retentionPolicy: { enabled: false } },
    });
    const properties = await client.getProperties();
    assert.deepEqual(properties.logging, logging);
    assert.deepEqual(properties.hourMetrics, hourMetrics);
    assert.deepEqual(properties.minuteMetrics, {
      version: '1.0',
      enabled: true,
      includeAPIs: false,
      retentionPolicy: { enabled: false, days: undefined },
    });
    assert.deepEqual(properties.cors, rules);
    const other = await serviceClient(server, { account: otherAccount, key: otherKey }).getProperties();
    assert.deepEqual(other.cors, []);
    await client.setProperties({ cors: [] });
    assert.deepEqual((await client.getProperties()).cors, []);
  });

  test('on the wire: 202 with no body; 200 application/xml in the documented order', async () => {
    const set = await putProperties(
      `<?xml version='1.0' encoding='utf-8'?>\n<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins>` +
        '<AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders>' +
        '<AllowedHeaders></AllowedHeaders></CorsRule></Cors></StorageServiceProperties>',
    );
    assert.equal(set.status, 202, describeResponse(set));
    assert.equal(set.body.length, 0);
    const res = await send(server.port, {
      method: 'GET',
      path: propertiesPath,
      headers: { Accept: 'application/xml' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/xml');
    assert.match(
      res.text,
      /^<\?xml version="1.0" encoding="utf-8"\?><StorageServiceProperties><Logging>.*<\/Logging><HourMetrics>.*<\/HourMetrics><MinuteMetrics>.*<\/MinuteMetrics><Cors><CorsRule><AllowedOrigins>\*<\/AllowedOrigins><AllowedMethods>GET<\/AllowedMethods><MaxAgeInSeconds>5<\/MaxAgeInSeconds><ExposedHeaders><\/ExposedHeaders><AllowedHeaders><\/AllowedHeaders><\/CorsRule><\/Cors><\/StorageServiceProperties>$/,
    );
    await putProperties('<StorageServiceProperties><Cors/></StorageServiceProperties>');
  });

  test('refusals are XML errors, and leave the properties as they were', async () => {
    const before = (await send(server.port, { method: 'GET', path: propertiesPath })).text;
    const cors = (rule: string) => `<StorageServiceProperties><Cors>${rule}</Cors></StorageServiceProperties>`;
    const rule = (methods: string, age = '1') =>
      `<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>${methods}</AllowedMethods><MaxAgeInSeconds>${age}</MaxAgeInSeconds><ExposedHeaders/><AllowedHeaders/></CorsRule>`;
    assertXmlError(await putProperties('<StorageServiceProperties>'), 400, 'InvalidXmlDocument');
    assertXmlError(await putProperties(''), 400, 'InvalidXmlDocument');
    assertXmlError(await putProperties(cors(rule('GET').repeat(6))), 400, 'InvalidXmlDocument');
    assertXmlError(await putProperties(cors(rule('TRACE'))), 400, 'InvalidXmlNodeValue');
    assertXmlError(await putProperties(cors(rule('GET', 'x'))), 400, 'InvalidXmlNodeValue');
    assertXmlError(
      await putProperties(cors('<CorsRule><AllowedOrigins>*</AllowedOrigins></CorsRule>')),
      400,
      'MissingRequiredXmlNode',
    );
    assertXmlError(
      await putProperties(
        '<StorageServiceProperties><HourMetrics><Enabled>true</Enabled><RetentionPolicy><Enabled>true</Enabled><Days>400</Days></RetentionPolicy></HourMetrics></StorageServiceProperties>',
      ),
      400,
      'InvalidXmlNodeValue',
    );
    assert.equal((await send(server.port, { method: 'GET', path: propertiesPath })).text, before);
  });

  test('unknown service operations and verbs', async () => {
    const other = await send(server.port, { method: 'GET', path: devPath('?restype=service&comp=logging') });
    assertXmlError(other, 501, 'NotImplemented');
    const verb = await send(server.port, { method: 'DELETE', path: propertiesPath });
    assertXmlError(verb, 405, 'MethodNotAllowed');
  });

  test('they survive a restart', async () => {
    const dir = makeTempDir();
    try {
      const first = await startServer({ location: dir });
      await serviceClient(first).setProperties({ cors: rules });
      assert.equal(await first.stop(), 0);
      const second = await startServer({ location: dir });
      try {
        assert.deepEqual((await serviceClient(second).getProperties()).cors, rules);
      } finally {
        await second.stop();
      }
    } finally {
      removeDir(dir);
    }
  });
});

describe('Get Table Service Stats and the -secondary endpoint (Azure REST: get-table-service-stats)', () => {
  const statsBody =
    /^<\?xml version="1.0" encoding="utf-8"\?><StorageServiceStats><GeoReplication><Status>live<\/Status><LastSyncTime>\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT<\/LastSyncTime><\/GeoReplication><\/StorageServiceStats>$/;

  test('SDK getStatistics', async () => {
    const stats = await serviceClient(server).getStatistics();
    assert.equal(stats.geoReplication?.status, 'live');
    assert.ok(Math.abs(stats.geoReplication!.lastSyncTime.getTime() - Date.now()) < 60_000);
  });

  test('on the primary and on the path-style secondary account', async () => {
    for (const account of [devAccount, `${devAccount}-secondary`]) {
      const res = await send(server.port, { method: 'GET', path: `/${account}/?restype=service&comp=stats` });
      assert.equal(res.status, 200, `${account}: ${describeResponse(res)}`);
      assert.equal(res.headers['content-type'], 'application/xml');
      assert.match(res.text, statsBody);
    }
  });

  test('host-style secondary: myaccount-secondary.table.host maps to the account', async () => {
    const res = await send(server.port, {
      method: 'GET',
      path: '/?restype=service&comp=stats',
      headers: { Host: `${devAccount}-secondary.table.localhost:${server.port}` },
    });
    assert.equal(res.status, 200, describeResponse(res));
  });

  test('the secondary serves reads and refuses writes', async () => {
    const client = tableClient(server, uniqueTableName('sec'));
    await client.createTable();
    await client.createEntity({ partitionKey: 'p', rowKey: 'r', v: 1 });
    const query = await send(server.port, { method: 'GET', path: `/${devAccount}-secondary/${client.tableName}()` });
    assert.equal(query.status, 200, describeResponse(query));
    assert.equal(query.json().value.length, 1);
    const point = await send(server.port, {
      method: 'GET',
      path: `/${devAccount}-secondary/${client.tableName}(PartitionKey='p',RowKey='r')`,
    });
    assert.equal(point.status, 200, describeResponse(point));
    const tables = await send(server.port, { method: 'GET', path: `/${devAccount}-secondary/Tables` });
    assert.equal(tables.status, 200, describeResponse(tables));
    const properties = await send(server.port, {
      method: 'GET',
      path: `/${devAccount}-secondary/?restype=service&comp=properties`,
    });
    assert.equal(properties.status, 200, describeResponse(properties));
    for (const [method, path, body] of [
      ['POST', `${client.tableName}`, { PartitionKey: 'p', RowKey: 'w' }],
      ['PUT', `${client.tableName}(PartitionKey='p',RowKey='r')`, { v: 2 }],
      ['DELETE', `Tables('${client.tableName}')`, undefined],
      ['POST', 'Tables', { TableName: uniqueTableName('sec') }],
    ] as const) {
      const res = await send(server.port, {
        method,
        path: `/${devAccount}-secondary/${path}`,
        body,
        headers: { 'If-Match': '*' },
      });
      assert.equal(res.status, 403, `${method} ${path}: ${describeResponse(res)}`);
      assert.equal(res.headers['x-ms-error-code'], 'InsufficientAccountPermissions');
    }
    assert.equal((await client.getEntity<{ v: number }>('p', 'r')).v, 1);
  });
});
