// Get/Set Table ACL through the real server (Azure REST: get-table-acl): SDK round trips, the exact XML on
// the wire, validation, persistence across a restart, and the policies' life with their table.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TableClient } from '@azure/data-tables';
import { describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const xmlHeaders = { 'Content-Type': 'application/xml', Accept: 'application/xml' };

function assertXmlError(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, describeResponse(res));
  assert.equal(res.headers['x-ms-error-code'], code);
  assert.match(res.headers['content-type'] ?? '', /^application\/xml/);
  assert.match(res.text, new RegExp(`^<\\?xml version="1.0" encoding="utf-8"\\?><Error><Code>${code}</Code><Message>`));
}

let server: RunningServer;
before(async () => {
  server = await startServer({ inMemory: true });
});
after(async () => {
  await server.stop();
});

async function freshTable(): Promise<TableClient> {
  const client = tableClient(server, uniqueTableName('acl'));
  await client.createTable();
  return client;
}

const putAcl = (table: string, body: string) =>
  send(server.port, { method: 'PUT', path: devPath(`${table}?comp=acl`), body, headers: xmlHeaders });
const getAcl = (table: string) =>
  send(server.port, { method: 'GET', path: devPath(`${table}?comp=acl`), headers: { Accept: 'application/xml' } });

describe('through the SDK', () => {
  test('a fresh table has no policies', async () => {
    assert.deepEqual(await (await freshTable()).getAccessPolicy(), []);
  });

  test('null, empty, partial and full policies round-trip (the SDK recording "should send a null ap")', async () => {
    const client = await freshTable();
    const start = new Date('2021-07-08T09:10:09Z');
    await client.setAccessPolicy([
      { id: 'null' },
      { id: 'empty', accessPolicy: {} },
      { id: 'partial', accessPolicy: { permission: 'r' } },
      { id: 'full', accessPolicy: { start, expiry: start, permission: 'raud' } },
    ]);
    const policies = await client.getAccessPolicy();
    assert.deepEqual(
      policies.map((p) => [
        p.id,
        p.accessPolicy?.permission,
        p.accessPolicy?.start?.toISOString(),
        p.accessPolicy?.expiry?.toISOString(),
      ]),
      [
        ['null', undefined, undefined, undefined],
        ['empty', undefined, undefined, undefined],
        ['partial', 'r', undefined, undefined],
        ['full', 'raud', start.toISOString(), start.toISOString()],
      ],
    );
  });

  test('a set replaces the whole set; an empty set clears it', async () => {
    const client = await freshTable();
    await client.setAccessPolicy([{ id: 'a' }, { id: 'b' }]);
    await client.setAccessPolicy([{ id: 'c', accessPolicy: { permission: 'd' } }]);
    assert.deepEqual(
      (await client.getAccessPolicy()).map((p) => p.id),
      ['c'],
    );
    await client.setAccessPolicy([]);
    assert.deepEqual(await client.getAccessPolicy(), []);
  });

  test('five policies are fine, six are a 400', async () => {
    const client = await freshTable();
    const policies = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: `p${i}`, accessPolicy: { permission: 'r' } }));
    await client.setAccessPolicy(policies(5));
    await assert.rejects(
      client.setAccessPolicy(policies(6)),
      (error: { statusCode?: number }) => error.statusCode === 400,
    );
    assert.equal((await client.getAccessPolicy()).length, 5);
  });

  test('a missing table is 404', async () => {
    const client = tableClient(server, uniqueTableName('none'));
    await assert.rejects(client.getAccessPolicy(), (error: { statusCode?: number }) => error.statusCode === 404);
    await assert.rejects(client.setAccessPolicy([]), (error: { statusCode?: number }) => error.statusCode === 404);
  });
});

describe('on the wire', () => {
  test('Get Table ACL: 200 application/xml, BOM, 7-digit UTC times, no AccessPolicy when empty', async () => {
    const client = await freshTable();
    const set = await putAcl(
      client.tableName,
      `<?xml version='1.0' encoding='utf-8'?>\n<SignedIdentifiers><SignedIdentifier><Id>bare</Id></SignedIdentifier>` +
        '<SignedIdentifier><Id>p</Id><AccessPolicy><Start>2021-01-01T01:00:00+01:00</Start><Expiry>2021-01-02</Expiry>' +
        '<Permission>ra</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>',
    );
    assert.equal(set.status, 204, describeResponse(set));
    assert.equal(set.body.length, 0);
    const res = await getAcl(client.tableName);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/xml');
    assert.deepEqual([...res.body.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(
      res.text,
      '\uFEFF<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>bare</Id></SignedIdentifier>' +
        '<SignedIdentifier><Id>p</Id><AccessPolicy><Start>2021-01-01T00:00:00.0000000Z</Start>' +
        '<Expiry>2021-01-02T00:00:00.0000000Z</Expiry><Permission>ra</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>',
    );
  });

  test('JS-style declaration, an empty body and <SignedIdentifiers /> are all accepted', async () => {
    const client = await freshTable();
    const js =
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><SignedIdentifiers><SignedIdentifier><Id>x</Id></SignedIdentifier></SignedIdentifiers>';
    assert.equal((await putAcl(client.tableName, js)).status, 204);
    assert.equal((await putAcl(client.tableName, '')).status, 204);
    assert.match((await getAcl(client.tableName)).text, /<SignedIdentifiers \/>$/);
    assert.equal((await putAcl(client.tableName, js)).status, 204);
    assert.equal((await putAcl(client.tableName, '<SignedIdentifiers />')).status, 204);
    assert.match((await getAcl(client.tableName)).text, /<SignedIdentifiers \/>$/);
  });

  test('refusals are XML errors with the right codes', async () => {
    const client = await freshTable();
    const id = (inner: string) =>
      `<SignedIdentifiers><SignedIdentifier>${inner}</SignedIdentifier></SignedIdentifiers>`;
    assertXmlError(await putAcl(client.tableName, '<SignedIdentifiers>'), 400, 'InvalidXmlDocument');
    assertXmlError(await putAcl(client.tableName, '<!DOCTYPE x><SignedIdentifiers/>'), 400, 'InvalidXmlDocument');
    assertXmlError(await putAcl(client.tableName, id(`<Id>${'x'.repeat(65)}</Id>`)), 400, 'InvalidXmlNodeValue');
    assertXmlError(
      await putAcl(client.tableName, id('<Id>p</Id><AccessPolicy><Permission>rwx</Permission></AccessPolicy>')),
      400,
      'InvalidXmlNodeValue',
    );
    assertXmlError(
      await putAcl(client.tableName, id('<Id>p</Id><AccessPolicy><Start>yesterday</Start></AccessPolicy>')),
      400,
      'InvalidXmlNodeValue',
    );
    assertXmlError(await putAcl(client.tableName, id('<AccessPolicy/>')), 400, 'MissingRequiredXmlNode');
    assertXmlError(
      await putAcl(client.tableName, Buffer.from([0x3c, 0xff, 0x3e]).toString('latin1')),
      400,
      'InvalidXmlDocument',
    );
    assertXmlError(await getAcl(uniqueTableName('none')), 404, 'TableNotFound');
    const wrongVerb = await send(server.port, { method: 'DELETE', path: devPath(`${client.tableName}?comp=acl`) });
    assertXmlError(wrongVerb, 405, 'MethodNotAllowed');
  });

  test('bad Shared Key on an ACL request is an XML AuthenticationFailed with the string to sign', async () => {
    const client = await freshTable();
    const res = await send(server.port, {
      method: 'GET',
      path: devPath(`${client.tableName}?comp=acl`),
      auth: { scheme: 'SharedKeyLite', key: Buffer.from('wrong key').toString('base64') },
    });
    assertXmlError(res, 403, 'AuthenticationFailed');
    assert.match(res.text, /<AuthenticationErrorDetail>.*\?comp=acl.*<\/AuthenticationErrorDetail>/s);
  });
});

describe('life of the policies', () => {
  test('they go with their table: a new table of the same name starts empty', async () => {
    const client = await freshTable();
    await client.setAccessPolicy([{ id: 'old', accessPolicy: { permission: 'r' } }]);
    await client.deleteTable();
    await client.createTable();
    assert.deepEqual(await client.getAccessPolicy(), []);
  });

  test('table names are case-insensitive for the ACL too', async () => {
    const client = await freshTable();
    await client.setAccessPolicy([{ id: 'x' }]);
    const res = await getAcl(client.tableName.toUpperCase());
    assert.match(res.text, /<Id>x<\/Id>/);
  });

  test('they survive a restart', async () => {
    const dir = makeTempDir();
    try {
      const first = await startServer({ location: dir });
      const name = uniqueTableName('keep');
      const client = tableClient(first, name);
      await client.createTable();
      await client.setAccessPolicy([
        { id: 'kept', accessPolicy: { permission: 'ra', expiry: new Date('2031-01-01T00:00:00Z') } },
      ]);
      assert.equal(await first.stop(), 0);
      const second = await startServer({ location: dir });
      try {
        const policies = await tableClient(second, name).getAccessPolicy();
        assert.deepEqual(
          policies.map((p) => [p.id, p.accessPolicy?.permission, p.accessPolicy?.expiry?.toISOString()]),
          [['kept', 'ra', '2031-01-01T00:00:00.000Z']],
        );
      } finally {
        await second.stop();
      }
    } finally {
      removeDir(dir);
    }
  });
});
