// Several Cerulean processes over one PostgreSQL database behave as one service: conditional
// updates through both race correctly, a batch is seen whole or not at all from the other process,
// settings changed through one are in force on the next request to the other, table races resolve
// as the service does, a stuck transaction makes a write fail instead of hang, and neither a
// kill -9 of one process nor a restart of the database loses an acknowledged write.
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { RestError, type TableClient, type TransactionAction } from '@azure/data-tables';
import pg from 'pg';
import { describeResponse, devPath, errorCode, send } from '../../helpers/http.js';
import { etagTicks } from '../../helpers/odata.js';
import { postgresBin, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../../helpers/postgres.js';
import { serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { waitUntil } from '../../helpers/wait.js';

const skip = postgresUnavailable();
const quiet = ['--log-level', 'silent'];

function statusOf(error: unknown): number | undefined {
  return error instanceof RestError ? error.statusCode : undefined;
}

/** Writers that insert entities one after another and keep the keys the server acknowledged. */
class InsertLoad {
  readonly acknowledged: string[] = [];
  readonly failures: { status: number | undefined; code: string | undefined; ms: number }[] = [];
  private running = true;
  private readonly done: Promise<void>[] = [];

  /** Starts `writers` writers through `client`; each stops at its first failure if `stopOnFailure`. */
  start(client: TableClient, name: string, writers: number, stopOnFailure: boolean): void {
    for (let w = 0; w < writers; w++) {
      this.done.push(
        (async () => {
          for (let i = 0; this.running; i++) {
            const rowKey = `${name}-${w}-${String(i).padStart(6, '0')}`;
            const started = performance.now();
            try {
              await client.createEntity({ partitionKey: `${name}-${w}`, rowKey, value: i });
              this.acknowledged.push(rowKey);
            } catch (error) {
              const code = error instanceof RestError ? error.response?.headers.get('x-ms-error-code') : undefined;
              this.failures.push({ status: statusOf(error), code, ms: performance.now() - started });
              if (stopOnFailure) return;
              await sleep(50);
            }
          }
        })(),
      );
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.done);
  }
}

/** Every acknowledged key is stored (read back through `client`). */
async function assertAllStored(client: TableClient, acknowledged: readonly string[]): Promise<void> {
  const stored = new Set<string>();
  for await (const entity of client.listEntities({ queryOptions: { select: ['RowKey'] } })) stored.add(entity.rowKey!);
  const lost = acknowledged.filter((rowKey) => !stored.has(rowKey));
  assert.deepEqual(lost.slice(0, 10), [], `${lost.length} of ${acknowledged.length} acknowledged inserts lost`);
}

describe('two Cerulean processes over one PostgreSQL database', { skip }, () => {
  let database: string;
  let a: RunningServer;
  let b: RunningServer;
  before(async () => {
    database = await createDatabase();
    [a, b] = await Promise.all([startServer({ database, args: quiet }), startServer({ database, args: quiet })]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    if (database !== undefined) await dropDatabase(database);
  });

  // A replace with If-Match is one statement per request; merges and point reads that meet in a
  // process share one (storage/postgres/coalescer.ts): both must count every increment once.
  for (const mode of ['Replace', 'Merge'] as const) {
    test(`If-Match increments through both (${mode}): the count equals the acknowledged updates, ETags strictly increase`, async () => {
      const table = uniqueTableName(`counter${mode}`);
      await tableClient(a, table).createTable();
      await tableClient(a, table).createEntity({ partitionKey: 'c', rowKey: 'c', count: 0 });
      const acknowledged: { count: number; ticks: bigint }[] = [];
      let conflicts = 0;
      const worker = async (server: RunningServer, increments: number) => {
        const client = tableClient(server, table);
        for (let done = 0; done < increments;) {
          const current = await client.getEntity<{ count: number }>('c', 'c');
          try {
            const reply = await client.updateEntity(
              { partitionKey: 'c', rowKey: 'c', count: current.count + 1 },
              mode,
              {
                etag: current.etag,
              },
            );
            acknowledged.push({ count: current.count + 1, ticks: etagTicks(reply.etag!) });
            done++;
          } catch (error) {
            if (statusOf(error) !== 412) throw error;
            conflicts++;
          }
        }
      };
      await Promise.all([a, b, a, b, a, b].map((server) => worker(server, 12)));
      const final = await tableClient(b, table).getEntity<{ count: number }>('c', 'c');
      assert.equal(final.count, acknowledged.length, 'every acknowledged increment counted once');
      // Each value was written exactly once, and a later value has a later version.
      const byCount = [...acknowledged].sort((x, y) => x.count - y.count);
      assert.deepEqual(
        byCount.map((update) => update.count),
        Array.from({ length: acknowledged.length }, (_, i) => i + 1),
      );
      for (let i = 1; i < byCount.length; i++)
        assert.ok(byCount[i]!.ticks > byCount[i - 1]!.ticks, `ETag of count ${i + 1} not later`);
      assert.ok(conflicts > 0, 'the workers never raced: the test proves nothing');
    });
  }

  test('a batch written through one process is seen all or nothing from the other', async () => {
    const table = uniqueTableName('batch');
    const writer = tableClient(a, table);
    const reader = tableClient(b, table);
    await writer.createTable();
    const batchSize = 40;
    const batches = 24;
    let writing = true;
    const seen: string[] = [];
    const read = (async () => {
      while (writing) {
        for (let p = 0; p < batches; p++) {
          let count = 0;
          for await (const _ of reader.listEntities({
            queryOptions: { filter: `PartitionKey eq 'p${p}'`, select: ['RowKey'] },
          }))
            count++;
          // A failed batch's partition holds only the entity that made it fail.
          if (p % 3 === 2 ? count > 1 : count !== 0 && count !== batchSize) seen.push(`p${p}: ${count} entities`);
        }
      }
    })();
    try {
      for (let p = 0; p < batches; p++) {
        const actions: TransactionAction[] = Array.from({ length: batchSize }, (_, i) => [
          'create',
          { partitionKey: `p${p}`, rowKey: `r${i}` },
        ]);
        if (p % 3 === 2) {
          // The last insert meets an existing entity: the whole batch must fail.
          await writer.createEntity({ partitionKey: `p${p}`, rowKey: `r${batchSize - 1}` });
          await assert.rejects(writer.submitTransaction(actions), (error) => statusOf(error) === 409);
        } else {
          await writer.submitTransaction(actions);
        }
      }
    } finally {
      writing = false;
      await read;
    }
    assert.deepEqual(seen, []);
  });

  test('ACL and CORS set through one process are in force on the next request to the other', async () => {
    const table = uniqueTableName('acl');
    await tableClient(a, table).createTable();
    for (const id of ['first', 'second']) {
      const policy = {
        id,
        accessPolicy: {
          permission: 'r',
          start: new Date('2030-01-01T00:00:00Z'),
          expiry: new Date('2030-01-02T00:00:00Z'),
        },
      };
      await tableClient(a, table).setAccessPolicy([policy]);
      const read = await tableClient(b, table).getAccessPolicy();
      assert.deepEqual(
        read.map((identifier) => identifier.id),
        [id],
      );
    }
    const origin = 'http://app.example';
    const preflight = () =>
      send(b.port, {
        method: 'OPTIONS',
        path: devPath('Tables'),
        headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' },
        auth: 'none',
      });
    const rule = {
      allowedOrigins: origin,
      allowedMethods: 'GET',
      allowedHeaders: '',
      exposedHeaders: '',
      maxAgeInSeconds: 60,
    };
    await serviceClient(a).setProperties({ cors: [rule] });
    const allowed = await preflight();
    assert.equal(allowed.status, 200, describeResponse(allowed));
    assert.equal(allowed.headers['access-control-allow-origin'], origin);
    await serviceClient(a).setProperties({ cors: [] });
    const refused = await preflight();
    assert.equal(refused.status, 403, describeResponse(refused));
    // A deleted table's policies go with it, whichever process deletes it.
    await tableClient(b, table).deleteTable();
    await tableClient(a, table).createTable();
    assert.deepEqual(await tableClient(b, table).getAccessPolicy(), []);
  });

  test('table create and delete races through both processes: exactly one wins each', async () => {
    for (let round = 0; round < 8; round++) {
      const name = uniqueTableName('race');
      const created = await Promise.all(
        [a, b].map((server) =>
          send(server.port, {
            method: 'POST',
            path: devPath('Tables'),
            body: JSON.stringify({ TableName: name }),
            headers: { 'Content-Type': 'application/json' },
          }),
        ),
      );
      assert.deepEqual(created.map((res) => res.status).sort(), [201, 409], created.map(describeResponse).join('\n'));
      assert.equal(errorCode(created.find((res) => res.status === 409)!), 'TableAlreadyExists');
      // Inserts race the delete: afterwards the name is free and a new table of it is empty.
      const inserting = Array.from({ length: 5 }, (_, i) =>
        tableClient(a, name)
          .createEntity({ partitionKey: 'p', rowKey: String(i) })
          .catch((error: unknown) => assert.equal(statusOf(error), 404)),
      );
      const deleted = await Promise.all(
        [a, b].map((server) => send(server.port, { method: 'DELETE', path: devPath(`Tables('${name}')`) })),
      );
      await Promise.all(inserting);
      assert.deepEqual(deleted.map((res) => res.status).sort(), [204, 404], deleted.map(describeResponse).join('\n'));
      await tableClient(b, name).createTable();
      let count = 0;
      for await (const _ of tableClient(a, name).listEntities()) count++;
      assert.equal(count, 0, 'entities of a deleted table came back');
    }
  });

  test('a row held locked by a stuck transaction: the write fails with 503 ServerBusy instead of hanging', async () => {
    const table = uniqueTableName('stuck');
    const client = tableClient(a, table);
    await client.createTable();
    await client.createEntity({ partitionKey: 'p', rowKey: 'r', n: 1 });
    const holder = new pg.Client({ connectionString: database });
    await holder.connect();
    try {
      const key = (text: string) => Buffer.from(text, 'utf16le').swap16();
      await holder.query('BEGIN');
      const { rowCount } = await holder.query('SELECT 1 FROM cerulean.entities WHERE pk = $1 AND rk = $2 FOR UPDATE', [
        key('p'),
        key('r'),
      ]);
      assert.equal(rowCount, 1);
      const started = performance.now();
      await assert.rejects(
        tableClient(b, table).updateEntity({ partitionKey: 'p', rowKey: 'r', n: 2 }, 'Replace'),
        (error) => {
          assert.equal(statusOf(error), 503);
          assert.equal((error as RestError).response?.headers.get('x-ms-error-code'), 'ServerBusy');
          return true;
        },
      );
      // The lock wait is bounded (5 s); this bound only has to tell bounded from unbounded under load.
      assert.ok(performance.now() - started < 60_000, 'the write waited too long');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    await tableClient(b, table).updateEntity({ partitionKey: 'p', rowKey: 'r', n: 2 }, 'Replace');
    assert.equal((await client.getEntity<{ n: number }>('p', 'r')).n, 2);
  });

  test('kill -9 of one process under load: nothing acknowledged is lost and the other keeps serving', async () => {
    const table = uniqueTableName('kill');
    const victim = await startServer({ database, args: quiet });
    await tableClient(b, table).createTable();
    const load = new InsertLoad();
    load.start(tableClient(victim, table), 'victim', 4, true);
    load.start(tableClient(b, table), 'survivor', 2, false);
    const acknowledgedBy = (name: string) => load.acknowledged.filter((rowKey) => rowKey.startsWith(name)).length;
    // Counts, not sleeps: on a loaded machine a second may not see a single write.
    const bothWrote = () => acknowledgedBy('victim') >= 20 && acknowledgedBy('survivor') >= 10;
    await waitUntil(bothWrote, 'writes acknowledged by both');
    await victim.kill9();
    const acknowledgedAtKill = load.acknowledged.length;
    const survivorAtKill = acknowledgedBy('survivor');
    const survivorWrote = () => acknowledgedBy('survivor') >= survivorAtKill + 10;
    await waitUntil(survivorWrote, 'the survivor acknowledging after the kill');
    await load.stop();
    assert.ok(acknowledgedAtKill > 0, 'no write acknowledged before the kill');
    assert.ok(load.acknowledged.length > acknowledgedAtKill, 'the surviving process stopped serving');
    assert.ok(
      load.acknowledged.some((rowKey) => rowKey.startsWith('victim')),
      'the killed process acknowledged nothing',
    );
    await assertAllStored(tableClient(b, table), load.acknowledged);
  });
});

describe(
  'the database restarted under load',
  { skip: skip ?? (postgresBin() === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined) },
  () => {
    let cluster: Cluster;
    let server: RunningServer;
    before(async () => {
      cluster = await startCluster(postgresBin()!);
      server = await startServer({ database: cluster.url, args: quiet });
    });
    after(async () => {
      await server?.stop();
      cluster?.destroy();
    });

    test('requests fail fast with Azure errors while it is down, then succeed again; nothing acknowledged is lost', async () => {
      const table = uniqueTableName('restart');
      await tableClient(server, table).createTable();
      const load = new InsertLoad();
      load.start(tableClient(server, table), 'w', 3, false);
      await waitUntil(() => load.acknowledged.length >= 10, 'writes acknowledged before the restart');
      cluster.stop(); // immediate: as a crash of the database
      const acknowledgedAtStop = load.acknowledged.length;
      // Writers whose request was in flight at the stop fail; then each retries every 50 ms.
      await waitUntil(() => load.failures.length >= 3, 'requests failing while the database is down');
      const failuresWhileDown = load.failures.length;
      cluster.start();
      await waitUntil(
        () => load.acknowledged.length > acknowledgedAtStop + 10,
        'acknowledged writes after the restart',
      );
      await load.stop();
      assert.ok(acknowledgedAtStop > 0, 'nothing acknowledged before the restart');
      assert.ok(failuresWhileDown > 0, 'no request failed while the database was down');
      assert.ok(
        load.acknowledged.length > acknowledgedAtStop + 10,
        'the server did not recover after the database came back',
      );
      for (const failure of load.failures) {
        assert.ok(
          (failure.status === 503 && failure.code === 'ServerBusy') ||
            (failure.status === 500 && (failure.code === 'OperationTimedOut' || failure.code === 'InternalError')),
          `a failure was not an Azure 503/500 error: ${JSON.stringify(failure)}`,
        );
        assert.ok(failure.ms < 20_000, `a request hung for ${Math.round(failure.ms)} ms`);
      }
      await assertAllStored(tableClient(server, table), load.acknowledged);
    });
  },
);

describe('choosing the PostgreSQL engine', { skip }, () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(
      process.execPath,
      [fileURLToPath(new URL('../../../../bin/cerulean.js', import.meta.url)), '--port', '0', ...args],
      {
        encoding: 'utf8',
        env: { ...process.env, ...env },
        timeout: 120_000, // a start may take that long on a loaded machine
      },
    );

  test('CERULEAN_DATABASE_URL selects it; the banner names the database without its password', async () => {
    const database = await createDatabase();
    const url = new URL(database);
    url.password = 'secret';
    url.username = 'postgres';
    try {
      const server = await startServer({ env: { CERULEAN_DATABASE_URL: url.href }, args: quiet });
      try {
        const banner = server.output().stdout;
        assert.match(banner, /Data: PostgreSQL postgres:\/\/postgres:\*\*\*@127\.0\.0\.1/);
        assert.doesNotMatch(banner, /secret/);
        await tableClient(server, uniqueTableName('env')).createTable();
      } finally {
        await server.stop();
      }
    } finally {
      await dropDatabase(database);
    }
  });

  test('a URL of another scheme or with --in-memory is refused; an unreachable database ends the start at once', () => {
    const scheme = run(['--database', 'mysql://localhost/db']);
    assert.equal(scheme.status, 2);
    assert.match(scheme.stderr, /postgres:\/\/ or postgresql:\/\//);
    const both = run(['--database', 'postgresql://localhost/db', '--in-memory']);
    assert.equal(both.status, 2);
    assert.match(both.stderr, /excludes --location and --in-memory/);
    const unreachable = run(['--database', 'postgres://postgres@127.0.0.1:1/db']);
    assert.equal(unreachable.status, 1);
    assert.match(unreachable.stderr, /cannot open the store: .*ECONNREFUSED/);
  });
});
