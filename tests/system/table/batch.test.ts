// Entity group transactions through @azure/data-tables (Azure REST: performing-entity-group-transactions): every action
// type,
// the 100-operation limit, atomic rollback at any position, one shared ETag, the error codes, and
// serialization of concurrent writers. Cases the SDK refuses to send go out as raw multipart.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { odata, type TableClient, type TransactionAction } from '@azure/data-tables';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { describeResponse } from '../../helpers/http.js';
import { freshTable, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { etagTicks, isoTicks } from '../../helpers/odata.js';
import {
  absoluteUrl,
  changesetBody,
  entityResource,
  op,
  partError,
  postBatch,
  readBatchResponse,
} from '../../helpers/batch.js';

type Props = Record<string, unknown>;
interface Stored {
  props: Props;
  etag: string;
  timestamp: string;
}

/** Every entity of one partition, by RowKey, with its ETag and Timestamp apart from its properties. */
async function partition(client: TableClient, pk: string): Promise<Map<string, Stored>> {
  const found = new Map<string, Stored>();
  for await (const e of client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk}` } })) {
    const { partitionKey: _pk, rowKey, etag, timestamp, ...props } = e;
    found.set(rowKey!, { props, etag, timestamp: timestamp! });
  }
  return found;
}

function propsOf(stored: Map<string, Stored>): Map<string, Props> {
  return new Map([...stored].map(([rk, s]) => [rk, s.props]));
}

interface ExpectedFailure {
  /** Part status, e.g. 409. */
  status: number;
  code: string;
  index: number;
}

/** The SDK throws a RestError carrying the failing part's status and code; the batch itself was a 202. */
async function assertTransactionFails(attempt: Promise<unknown>, expected: ExpectedFailure): Promise<void> {
  await assert.rejects(attempt, (error: any) => {
    const what = `${error?.statusCode} ${error?.code} ${error?.message}`;
    assert.equal(error.statusCode, expected.status, what);
    assert.equal(error.code, expected.code, what);
    assert.ok(
      String(error.message).startsWith(`${expected.index}:`),
      `message should start with "${expected.index}:": ${what}`,
    );
    assert.equal(
      error.response?.status,
      202,
      `the outer status stays 202 (Azure REST: performing-entity-group-transactions): ${what}`,
    );
    return true;
  });
}

describe('$batch through the JS SDK', () => {
  let server: RunningServer;
  let client: TableClient;
  before(async () => {
    server = await startServer();
    client = await freshTable(server, 'batch');
  });
  after(async () => {
    await server?.stop();
  });

  test('every action type in one transaction; all writes share one ETag and Timestamp', async () => {
    const pk = 'all';
    const before = { a: 'old', b: 'keep' };
    const existing = ['upsertMerge', 'upsertReplace', 'mergeEtag', 'replaceEtag', 'mergeAny', 'replaceAny', 'gone'];
    const etags = new Map<string, string>();
    for (const rk of existing)
      etags.set(rk, (await client.createEntity({ partitionKey: pk, rowKey: rk, ...before })).etag!);

    const e = (rowKey: string) => ({ partitionKey: pk, rowKey, a: 'new' });
    const actions: TransactionAction[] = [
      ['create', e('created')],
      ['upsert', e('upsertMerge'), 'Merge'],
      ['upsert', e('upsertReplace'), 'Replace'],
      ['upsert', e('upsertMergeNew'), 'Merge'],
      ['upsert', e('upsertReplaceNew'), 'Replace'],
      ['update', e('mergeEtag'), 'Merge', { etag: etags.get('mergeEtag')! }],
      ['update', e('replaceEtag'), 'Replace', { etag: etags.get('replaceEtag')! }],
      ['update', e('mergeAny'), 'Merge'],
      ['update', e('replaceAny'), 'Replace'],
      ['delete', { partitionKey: pk, rowKey: 'gone' }],
    ];
    const result = await client.submitTransaction(actions);
    assert.equal(result.status, 202);
    assert.deepEqual(
      result.subResponses.map((r) => r.status),
      actions.map(() => 204),
    );
    const written = result.subResponses.slice(0, -1).map((r) => r.etag);
    const shared = written[0]!;
    assert.match(shared, /^W\/"datetime'.+'"$/);
    assert.deepEqual(
      written,
      written.map(() => shared),
      'one ETag for every write of the batch (Azure REST: performing-entity-group-transactions)',
    );
    assert.equal(result.subResponses.at(-1)!.etag, undefined, 'a delete part carries no ETag');

    const merged = { a: 'new', b: 'keep' };
    const replaced = { a: 'new' };
    const stored = await partition(client, pk);
    assert.deepEqual(
      propsOf(stored),
      new Map<string, Props>([
        ['created', replaced],
        ['mergeAny', merged],
        ['mergeEtag', merged],
        ['replaceAny', replaced],
        ['replaceEtag', replaced],
        ['upsertMerge', merged],
        ['upsertMergeNew', replaced],
        ['upsertReplace', replaced],
        ['upsertReplaceNew', replaced],
      ]),
    );
    for (const [rk, s] of stored) {
      assert.equal(s.etag, shared, `ETag of ${rk}`);
      assert.equal(isoTicks(s.timestamp), etagTicks(shared), `Timestamp of ${rk} is the one in the ETag`);
      if (etags.has(rk)) assert.ok(etagTicks(shared) > etagTicks(etags.get(rk)!), `ETag of ${rk} moved forward`);
    }
  });

  test('exactly 100 operations succeed', async () => {
    const pk = 'hundred';
    const actions: TransactionAction[] = Array.from({ length: 100 }, (_, i) => [
      'create',
      { partitionKey: pk, rowKey: `r${i}`, i },
    ]);
    const result = await client.submitTransaction(actions);
    assert.equal(result.subResponses.length, 100);
    assert.ok(result.subResponses.every((r) => r.status === 204 && r.etag === result.subResponses[0]!.etag));
    const stored = await partition(client, pk);
    assert.equal(stored.size, 100);
    assert.ok([...stored.values()].every((s) => s.etag === result.subResponses[0]!.etag));
  });

  test('101 operations → 400 InvalidInput naming index 99, nothing written', async () => {
    const pk = 'tooMany';
    const actions: TransactionAction[] = Array.from({ length: 101 }, (_, i) => [
      'create',
      { partitionKey: pk, rowKey: `r${i}` },
    ]);
    await assertTransactionFails(client.submitTransaction(actions), { status: 400, code: 'InvalidInput', index: 99 });
    assert.equal((await partition(client, pk)).size, 0);
  });

  describe('a failing operation rolls back the whole batch', () => {
    const size = 10;
    const failures = {
      'insert of an existing entity': { status: 409, code: 'EntityAlreadyExists' },
      'update with a stale ETag': { status: 412, code: 'UpdateConditionNotSatisfied' },
      'delete of a missing entity': { status: 404, code: 'ResourceNotFound' },
    } as const;
    type FailureKind = keyof typeof failures;

    /** Operation i touches row r<i> (or n<i> for creates); every kind of write appears before and after `failAt`. */
    function actionAt(pk: string, i: number, failAt: number, kind: FailureKind, staleEtag: string): TransactionAction {
      const entity = { partitionKey: pk, rowKey: `r${i}`, v: `batch${i}` };
      if (i === failAt) {
        if (kind === 'insert of an existing entity') return ['create', entity];
        if (kind === 'update with a stale ETag') return ['update', entity, 'Merge', { etag: staleEtag }];
        return ['delete', { partitionKey: pk, rowKey: `missing${i}` }];
      }
      switch (i % 4) {
        case 0:
          return ['create', { ...entity, rowKey: `n${i}` }];
        case 1:
          return ['upsert', entity, 'Replace'];
        case 2:
          return ['update', entity, 'Merge'];
        default:
          return ['delete', entity];
      }
    }

    for (const kind of Object.keys(failures) as FailureKind[]) {
      for (const [where, failAt] of [
        ['first', 0],
        ['middle', 5],
        ['last', size - 1],
      ] as const) {
        test(`${kind} at the ${where} position (${failAt})`, async () => {
          const pk = `${kind.replaceAll(' ', '')}-${failAt}`;
          let staleEtag = '';
          for (let i = 0; i < size; i++) {
            const created = await client.createEntity({
              partitionKey: pk,
              rowKey: `r${i}`,
              v: `original${i}`,
              keep: i,
            });
            if (i === failAt) {
              staleEtag = created.etag!;
              await client.updateEntity({ partitionKey: pk, rowKey: `r${i}`, v: `updated${i}` }, 'Merge');
            }
          }
          const beforeBatch = await partition(client, pk);
          const actions = Array.from({ length: size }, (_, i) => actionAt(pk, i, failAt, kind, staleEtag));
          await assertTransactionFails(client.submitTransaction(actions), { ...failures[kind], index: failAt });
          assert.deepEqual(await partition(client, pk), beforeBatch, 'no trace of any operation; ETags unchanged');
        });
      }
    }
  });

  test('the same RowKey twice → 400 InvalidDuplicateRow at the second, nothing written', async () => {
    const pk = 'dup';
    const actions: TransactionAction[] = [
      ['create', { partitionKey: pk, rowKey: 'a' }],
      ['create', { partitionKey: pk, rowKey: 'b' }],
      ['upsert', { partitionKey: pk, rowKey: 'a', x: 1 }, 'Merge'],
    ];
    await assertTransactionFails(client.submitTransaction(actions), {
      status: 400,
      code: 'InvalidDuplicateRow',
      index: 2,
    });
    assert.equal((await partition(client, pk)).size, 0);
  });

  test('a missing table → 404 TableNotFound at index 0', async () => {
    const missing = tableClient(server, uniqueTableName('missing'));
    const actions: TransactionAction[] = ['1', '2', '3'].map((rowKey) => ['create', { partitionKey: 'p', rowKey }]);
    await assertTransactionFails(missing.submitTransaction(actions), { status: 404, code: 'TableNotFound', index: 0 });
  });

  test('mixed PartitionKeys → 400 CommandsInBatchActOnDifferentPartitions (raw: the SDK refuses to send it)', async () => {
    const url = absoluteUrl(server.port, client.tableName);
    const res = await postBatch(
      server.port,
      changesetBody([
        op.insert(url, { PartitionKey: 'mixA', RowKey: '1' }),
        op.insert(url, { PartitionKey: 'mixA', RowKey: '2' }),
        op.upsert(absoluteUrl(server.port, entityResource(client.tableName, 'mixB', '3')), 'Merge', {
          PartitionKey: 'mixB',
          RowKey: '3',
        }),
      ]),
    );
    assert.equal(res.status, 202, describeResponse(res));
    const { parts } = readBatchResponse(res);
    assert.equal(parts.length, 1, res.text);
    assert.equal(parts[0]!.status, 400, res.text);
    const error = partError(parts[0]!);
    assert.equal(error.code, 'CommandsInBatchActOnDifferentPartitions');
    assert.ok(error.message.value.startsWith('2:'), error.message.value);
    assert.equal((await partition(client, 'mixA')).size + (await partition(client, 'mixB')).size, 0);
  });

  describe('concurrent writers serialize', () => {
    test('20 clients increment one counter with If-Match and retry on 412, half of them through batches', async () => {
      const pk = 'counter';
      const clients = 20;
      const incrementsEach = 3;
      await client.createEntity({ partitionKey: pk, rowKey: 'c', n: 0 });
      let succeeded = 0;
      let conflicts = 0;

      async function incrementOnce(worker: TableClient, id: number, round: number): Promise<void> {
        for (;;) {
          const current = await worker.getEntity<{ n: number }>(pk, 'c');
          const next = { partitionKey: pk, rowKey: 'c', n: current.n + 1 };
          try {
            if (id % 2 === 0) await worker.updateEntity(next, 'Merge', { etag: current.etag });
            else {
              await worker.submitTransaction([
                ['update', next, 'Merge', { etag: current.etag }],
                ['create', { partitionKey: pk, rowKey: `log-${id}-${round}`, n: next.n }],
              ]);
            }
            succeeded++;
            return;
          } catch (error: any) {
            if (error?.statusCode !== 412) throw error;
            conflicts++;
          }
        }
      }

      await Promise.all(
        Array.from({ length: clients }, async (_, id) => {
          const worker = tableClient(server, client.tableName);
          for (let round = 0; round < incrementsEach; round++) await incrementOnce(worker, id, round);
        }),
      );
      const stored = await partition(client, pk);
      assert.equal(succeeded, clients * incrementsEach);
      assert.equal(
        stored.get('c')!.props.n,
        succeeded,
        `counter = successful increments (${conflicts} conflicts retried)`,
      );
      const logged = [...stored].filter(([rk]) => rk.startsWith('log-')).map(([, s]) => s.props.n as number);
      assert.equal(logged.length, (clients / 2) * incrementsEach, 'every successful batch increment left its log row');
      assert.equal(new Set(logged).size, logged.length, 'no two batch increments saw the same counter value');
    });

    test('concurrent batches that each rewrite the same 10 entities leave exactly one batch visible', async () => {
      const pk = 'wholeSet';
      const rows = Array.from({ length: 10 }, (_, i) => `r${i}`);
      const etagByBatch = new Map<string, string>();
      await Promise.all(
        Array.from({ length: 12 }, async (_, b) => {
          const worker = tableClient(server, client.tableName);
          const actions: TransactionAction[] = rows.map((rowKey) => [
            'upsert',
            { partitionKey: pk, rowKey, batch: `b${b}` },
            'Replace',
          ]);
          etagByBatch.set(`b${b}`, (await worker.submitTransaction(actions)).subResponses[0]!.etag!);
        }),
      );
      const stored = [...(await partition(client, pk)).values()];
      assert.equal(stored.length, rows.length);
      const winner = stored[0]!.props.batch as string;
      assert.ok(
        stored.every((s) => s.props.batch === winner && s.etag === etagByBatch.get(winner)),
        JSON.stringify(stored),
      );
      const newest = [...etagByBatch.values()].reduce((a, b) => (etagTicks(a) > etagTicks(b) ? a : b));
      assert.equal(etagByBatch.get(winner), newest, 'the visible batch is the one committed last');
    });
  });
});
