// The three metadata levels and $select over a real on-disk store, with values built to confuse
// text slicing (every level is derived from the stored JSON text without decoding).
// Each level must carry the same properties, in the same order, with the same values as minimal
// metadata, and only the members its level adds or drops.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { describeResponse, devPath, entityPath, send } from '../../helpers/http.js';
import { uniqueTableName } from '../../helpers/sdk.js';

const accept = {
  none: 'application/json;odata=nometadata',
  minimal: 'application/json;odata=minimalmetadata',
  full: 'application/json;odata=fullmetadata',
} as const;
type Level = keyof typeof accept;

const hostile = [
  '"x@odata.type":"Edm.Int64",',
  '\\","y@odata.type":"Edm.Double","y":1,"',
  'back\\slash\\\\"quote"',
  'ctrl \u0001\u001f\n\t end',
  'astral \u{1F600}\u{1D11E} é',
];

const bodies = hostile.map((text, i) => ({
  PartitionKey: 'p',
  RowKey: `r${i}`,
  S: text,
  [`Ünïcode_${i}`]: text.slice(0, 5),
  I: i,
  'L@odata.type': 'Edm.Int64',
  L: `${-9223372036854775807n + BigInt(i)}`,
  D: 0.5 + i,
  'W@odata.type': 'Edm.Double',
  W: '3',
  'N@odata.type': 'Edm.Double',
  N: i % 2 === 0 ? 'NaN' : '-Infinity',
  B: i % 2 === 0,
  'T@odata.type': 'Edm.DateTime',
  T: '2020-01-02T03:04:05.1234567Z',
  'G@odata.type': 'Edm.Guid',
  G: '0f8fad5b-d9cb-469f-a165-70867728950e',
  'X@odata.type': 'Edm.Binary',
  X: Buffer.from(text).toString('base64'),
}));

/** Members as [name, value] pairs, in the order of the text. */
type Members = [string, unknown][];

function withoutMetadata(members: Members): Members {
  return members.filter(([name]) => !name.startsWith('odata.') && !name.endsWith('@odata.type'));
}

describe('metadata levels over the stored text', () => {
  let server: RunningServer;
  const table = uniqueTableName('levels');

  before(async () => {
    server = await startServer({});
    const created = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
    assert.equal(created.status, 201, describeResponse(created));
    for (const body of bodies) {
      const res = await send(server.port, {
        method: 'POST',
        path: devPath(table),
        body,
        headers: { Prefer: 'return-no-content' },
      });
      assert.equal(res.status, 204, describeResponse(res));
    }
  });
  after(async () => {
    await server?.stop();
  });

  async function pointRead(rowKey: string, level: Level, select = ''): Promise<Members> {
    const path = `${entityPath(table, 'p', rowKey)}${select === '' ? '' : `?$select=${encodeURIComponent(select)}`}`;
    const res = await send(server.port, { method: 'GET', path, headers: { Accept: accept[level] } });
    assert.equal(res.status, 200, describeResponse(res));
    return Object.entries(res.json() as object);
  }

  async function query(level: Level, select = ''): Promise<Members[]> {
    const options = `$filter=${encodeURIComponent("PartitionKey eq 'p'")}${select === '' ? '' : `&$select=${encodeURIComponent(select)}`}`;
    const res = await send(server.port, {
      method: 'GET',
      path: `${devPath(`${table}()`)}?${options}`,
      headers: { Accept: accept[level] },
    });
    assert.equal(res.status, 200, describeResponse(res));
    return (res.json() as { value: object[] }).value.map((entity) => Object.entries(entity));
  }

  test('no and full metadata carry exactly the properties of minimal metadata, in order', async () => {
    const pages = { none: await query('none'), minimal: await query('minimal'), full: await query('full') };
    assert.equal(pages.minimal.length, bodies.length);
    for (let i = 0; i < bodies.length; i++) {
      const minimal = pages.minimal[i]!;
      const properties = withoutMetadata(minimal);
      assert.deepEqual(pages.none[i], properties, `entity ${i}: nometadata is minimal without annotations`);
      assert.deepEqual(withoutMetadata(pages.full[i]!), properties, `entity ${i}: fullmetadata`);
      assert.deepEqual(
        pages.full[i]!.filter(([name]) => name.endsWith('@odata.type')),
        [['Timestamp@odata.type', 'Edm.DateTime'], ...minimal.filter(([name]) => name.endsWith('@odata.type'))],
        `entity ${i}: full annotates what minimal does, and Timestamp`,
      );
      const values = new Map(properties);
      assert.equal(values.get('S'), hostile[i]);
      assert.equal(values.get('W'), 3); // a whole Double: a number with a point, unannotated
      assert.equal(values.get('N'), i % 2 === 0 ? 'NaN' : '-Infinity');
      // A point read gives what the query gives.
      for (const level of ['none', 'minimal', 'full'] as const) {
        const read = await pointRead(`r${i}`, level);
        assert.deepEqual(
          read.filter(([name]) => name !== 'odata.metadata'),
          pages[level][i],
        );
      }
    }
  });

  test('$select picks the same values at every level, a missing property as null', async () => {
    const select = 'N,Missing,S,RowKey,W,L';
    const expected = (await query('minimal')).map((entity) => {
      const values = new Map(entity);
      return [
        ['RowKey', values.get('RowKey')],
        ['N', values.get('N')],
        ['Missing', null],
        ['S', values.get('S')],
        ['W', values.get('W')],
        ['L', values.get('L')],
      ];
    });
    for (const level of ['none', 'minimal', 'full'] as const) {
      const page = await query(level, select);
      assert.deepEqual(page.map(withoutMetadata), expected, level);
      assert.deepEqual(withoutMetadata(await pointRead('r1', level, select)), expected[1], `${level} point read`);
    }
    const minimal = await query('minimal', select);
    assert.deepEqual(
      minimal[0]!.filter(([name]) => name.endsWith('@odata.type')).map(([name]) => name),
      ['N@odata.type', 'L@odata.type'],
    );
  });
});
