// The one-pass body decoder through a real on-disk server: random and hostile entity bodies, sent
// as single inserts and inside $batch change sets (raw HTTP), and a transaction of every EDM type
// through the JS SDK. Each answer must be the one the reader of record (decodeEntityBody) implies,
// error code, message and failing part index included, and each stored row's JSONB must be
// byte-identical to SQLite's jsonb() of encodeStoredProperties over the reader's properties.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StorageError } from '../../../src/errors.js';
import { seededRandom } from '../../../src/domain/random.js';
import { decodeUtf8 } from '../../../src/http/body.js';
import { decodeEntityBody } from '../../../src/table/wire/entity-json.js';
import { decodeStoredProperties, encodeStoredProperties } from '../../../src/storage/stored-json.js';
import { databaseFileName } from '../../../src/storage/sqlite/schema.js';
import { encodeKey } from '../../../src/storage/sqlite/codec.js';
import {
  absoluteUrl,
  changesetBody,
  partError,
  postBatch,
  readBatchResponse,
  type SubRequest,
} from '../../helpers/batch.js';
import { randomEntityBody } from '../../helpers/entity-bodies.js';
import { describeResponse, devPath, send, type RawResponse } from '../../helpers/http.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

type Expected =
  | { readonly ok: true; readonly partitionKey: string; readonly rowKey: string; readonly stored: string }
  | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * What the reader of record says of an insert body sent as `text`: as the server sees it, UTF-8
 * on the wire (a lone surrogate arrives as U+FFFD, a leading BOM is dropped) and, inside a
 * batch, without the padding around a part's body (Azure REST: performing-entity-group-transactions).
 */
function expectedInsert(text: string, inBatch = false): Expected {
  try {
    const received = decodeUtf8(Buffer.from(text, 'utf8'));
    const { partitionKey, rowKey, properties } = decodeEntityBody(
      inBatch ? received.replace(/^[\r\n \t]+|[\r\n \t]+$/g, '') : received,
    );
    if (partitionKey === undefined || rowKey === undefined) return refusal(new StorageError('PropertiesNeedValue'));
    return { ok: true, partitionKey, rowKey, stored: encodeStoredProperties(properties) };
  } catch (error) {
    assert(error instanceof StorageError);
    return refusal(error);
  }
}

function refusal(error: StorageError): Expected {
  return { ok: false, code: error.code, message: error.message };
}

function statusOf(code: string): number {
  return new StorageError(code as StorageError['code']).status;
}

describe('entity bodies through a real server: one pass vs the reader of record', () => {
  let server: RunningServer;
  let dir: string;
  let db: Database.Database;
  let scratch: Database.Database;
  const table = uniqueTableName('onepass');

  before(async () => {
    dir = makeTempDir();
    server = await startServer({ location: dir });
    const created = await send(server.port, { method: 'POST', path: devPath('Tables'), body: { TableName: table } });
    assert.equal(created.status, 201, describeResponse(created));
    db = new Database(join(dir, databaseFileName), { readonly: true });
    scratch = new Database(':memory:');
  });

  after(async () => {
    db?.close();
    scratch?.close();
    await server?.stop();
    removeDir(dir);
  });

  /** The row's JSONB as the server stored it, and as SQLite makes it from the expected text. */
  function assertStored(expected: Extract<Expected, { ok: true }>, context: string): void {
    const row = db
      .prepare(
        'SELECT e.props FROM entities e JOIN tables t ON e.table_id = t.id WHERE t.name_lower = ? AND e.pk = ? AND e.rk = ?',
      )
      .get(table.toLowerCase(), encodeKey(expected.partitionKey), encodeKey(expected.rowKey)) as
      { props: Buffer } | undefined;
    assert(row !== undefined, `no stored row: ${context}`);
    const want = (scratch.prepare('SELECT jsonb(?) AS b').get(expected.stored) as { b: Buffer }).b;
    assert.deepEqual(row.props, want, `stored bytes differ: ${context}`);
  }

  function assertRefused(res: RawResponse, expected: Extract<Expected, { ok: false }>, context: string): void {
    assert.equal(res.status, statusOf(expected.code), `${describeResponse(res)}\n${context}`);
    const error = res.json()['odata.error'];
    assert.equal(error.code, expected.code, context);
    assert.ok(error.message.value.startsWith(`${expected.message}\nRequestId:`), `${error.message.value}\n${context}`);
  }

  test('300 random single inserts: same status, error and stored bytes', async () => {
    const random = seededRandom(1515);
    const inserted = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const text =
        random() < 0.8
          ? randomEntityBody(random, { partitionKey: 'single', rowKey: `r${i}` })
          : randomEntityBody(random);
      const res = await send(server.port, {
        method: 'POST',
        path: devPath(table),
        headers: { 'Content-Type': 'application/json', Prefer: 'return-no-content' },
        body: text,
      });
      const context = `body ${i}: ${text.slice(0, 300)}`;
      let expected = expectedInsert(text);
      if (expected.ok && inserted.has(`${expected.partitionKey}\u0000${expected.rowKey}`)) {
        expected = refusal(new StorageError('EntityAlreadyExists'));
      }
      if (!expected.ok) {
        assertRefused(res, expected, context);
        continue;
      }
      assert.equal(res.status, 204, `${describeResponse(res)}\n${context}`);
      inserted.add(`${expected.partitionKey}\u0000${expected.rowKey}`);
      assertStored(expected, context);
    }
  });

  test('60 random change sets: the first bad part is named, or every part is stored', async () => {
    const random = seededRandom(1516);
    for (let n = 0; n < 60; n++) {
      const size = 1 + Math.floor(random() * 6);
      const texts = Array.from({ length: size }, (_, i) =>
        randomEntityBody(random, { partitionKey: `b${n}`, rowKey: `r${i}` }),
      );
      const style = random() < 0.5 ? 'js' : 'python';
      const requests: SubRequest[] = texts.map((body) => ({
        method: 'POST',
        url: absoluteUrl(server.port, table),
        headers: { Prefer: 'return-no-content' },
        body,
      }));
      const res = await postBatch(server.port, changesetBody(requests, style));
      assert.equal(res.status, 202, describeResponse(res));
      const parts = readBatchResponse(res).parts;
      const expected = texts.map((text) => expectedInsert(text, true));
      const failed = expected.findIndex((outcome) => !outcome.ok);
      const context = `batch ${n} (${style}): ${texts.map((text) => text.slice(0, 200)).join('\n')}`;
      if (failed >= 0) {
        const refused = expected[failed] as Extract<Expected, { ok: false }>;
        assert.equal(parts.length, 1, context);
        assert.equal(parts[0]!.status, statusOf(refused.code), `${res.text}\n${context}`);
        const error = partError(parts[0]!);
        assert.equal(error.code, refused.code, context);
        assert.ok(
          error.message.value.startsWith(`${failed}:${refused.message}\nRequestId:`),
          `${error.message.value}\n${context}`,
        );
        continue;
      }
      assert.deepEqual(
        parts.map((part) => part.status),
        texts.map(() => 204),
        `${res.text}\n${context}`,
      );
      for (const outcome of expected) assertStored(outcome as Extract<Expected, { ok: true }>, context);
    }
  });

  test('the JS SDK: a transaction of every EDM type reads back and is stored as the reader would', async () => {
    const client = tableClient(server, table);
    const entities = Array.from({ length: 5 }, (_, i) => ({
      partitionKey: 'sdk',
      rowKey: `r${i}`,
      Text: `café ${i} 😀 "quoted" \\ back`,
      Count: i,
      Big: { value: `${2n ** 62n + BigInt(i)}`, type: 'Int64' as const },
      Ratio: i + 0.5,
      Whole: { value: `${i}`, type: 'Double' as const },
      NotANumber: { value: 'NaN', type: 'Double' as const },
      Flag: i % 2 === 0,
      When: new Date(Date.UTC(2024, 1, 29, 12, 0, i, 120)),
      Id: { value: `0f8fad5b-d9cb-469f-a165-70867728950${i}`, type: 'Guid' as const },
      Bytes: new Uint8Array([0, 255, i]),
    }));
    await client.submitTransaction(entities.map((entity) => ['create', entity]));
    for (const entity of entities) {
      const read = await client.getEntity<Record<string, unknown>>('sdk', entity.rowKey);
      assert.equal(read['Text'], entity.Text);
      assert.equal(read['Big'], 2n ** 62n + BigInt(entity.Count));
      assert.equal(read['Count'], entity.Count);
      assert.equal(read['Ratio'], entity.Ratio);
      assert.deepEqual(read['When'], entity.When);
      assert.deepEqual([...(read['Bytes'] as Uint8Array)], [...entity.Bytes]);
      const row = db
        .prepare(
          'SELECT json(e.props) AS json FROM entities e JOIN tables t ON e.table_id = t.id WHERE t.name_lower = ? AND e.pk = ? AND e.rk = ?',
        )
        .get(table.toLowerCase(), encodeKey('sdk'), encodeKey(entity.rowKey)) as { json: string };
      // What the reader of record makes of the same values, written the way the stored form writes them.
      assert.equal(row.json, encodeStoredProperties(decodeStoredProperties(row.json)));
      const properties = decodeStoredProperties(row.json);
      assert.deepEqual(properties.get('Big'), {
        type: 'Edm.Int64',
        value: 2n ** 62n + BigInt(entities.indexOf(entity)),
      });
      assert.deepEqual(properties.get('Whole'), { type: 'Edm.Double', value: entities.indexOf(entity) });
      assert.deepEqual(properties.get('When'), {
        type: 'Edm.DateTime',
        value: BigInt(entity.When.getTime()) * 10_000n,
      });
      assert.deepEqual(properties.get('Bytes'), { type: 'Edm.Binary', value: Buffer.from(entity.Bytes) });
      assert(Number.isNaN((properties.get('NotANumber') as { value: number }).value));
    }
  });
});
