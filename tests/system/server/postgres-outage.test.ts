// Writes answered while the database dies: a 503 ServerBusy tells the client to retry, so it must
// mean the write certainly did not happen (its retry would otherwise fail on its own write with
// 409 or 412). A write whose connection was lost once it was sent has an unknown outcome: 500
// InternalError. Many lone inserts, upserts, merges and deletes run through one server over a
// private cluster that is stopped at once (as a crash) and started again several times; then
// every write answered 2xx has happened and every write answered 503 has not.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { devPath, errorCode, send, type RawResponse } from '../../helpers/http.js';
import { postgresBin, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { postgresUnavailable } from '../../helpers/postgres.js';
import { tableClient, uniqueTableName } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const skip =
  postgresUnavailable() ?? (postgresBin() === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined);

type Kind = 'insert' | 'upsert' | 'merge' | 'delete';

interface Answer {
  readonly kind: Kind;
  readonly rowKey: string;
  readonly status: number;
  readonly code: string | undefined;
}

/** Entities each deleting writer stores first, to delete during the load. */
const deletablePerWriter = 300;
const writersPerKind = 10;
const outages = 8;

function entityPath(table: string, rowKey: string): string {
  return devPath(`${table}(PartitionKey='p',RowKey='${rowKey}')`);
}

/** One write of `kind` on a new entity (or, for a delete, on a stored one). */
function write(server: RunningServer, table: string, kind: Kind, rowKey: string): Promise<RawResponse> {
  const body = { PartitionKey: 'p', RowKey: rowKey, n: 1 };
  switch (kind) {
    case 'insert':
      return send(server.port, {
        method: 'POST',
        path: devPath(table),
        body,
        headers: { Prefer: 'return-no-content' },
      });
    case 'upsert':
      return send(server.port, { method: 'PUT', path: entityPath(table, rowKey), body });
    case 'merge':
      return send(server.port, { method: 'MERGE', path: entityPath(table, rowKey), body });
    case 'delete':
      return send(server.port, { method: 'DELETE', path: entityPath(table, rowKey), headers: { 'If-Match': '*' } });
  }
}

/** Writers of every kind, each on its own keys, recording every answer until stopped. */
class WriteLoad {
  readonly answers: Answer[] = [];
  private running = true;
  private readonly done: Promise<void>[] = [];

  start(server: RunningServer, table: string): void {
    for (const kind of ['insert', 'upsert', 'merge', 'delete'] as const) {
      for (let w = 0; w < writersPerKind; w++) this.done.push(this.writer(server, table, kind, w));
    }
  }

  private async writer(server: RunningServer, table: string, kind: Kind, w: number): Promise<void> {
    for (let i = 0; this.running && (kind !== 'delete' || i < deletablePerWriter); i++) {
      const rowKey = `${kind}-${w}-${String(i).padStart(6, '0')}`;
      let res: RawResponse;
      try {
        res = await write(server, table, kind, rowKey);
      } catch {
        continue; // no answer: nothing to check
      }
      this.answers.push({ kind, rowKey, status: res.status, code: errorCode(res) });
      if (res.status >= 500) await sleep(20);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.done);
  }
}

describe('writes answered while the database stops at once', { skip }, () => {
  let cluster: Cluster;
  let server: RunningServer;
  before(async () => {
    cluster = await startCluster(postgresBin()!);
    server = await startServer({ database: cluster.url, args: ['--log-level', 'silent'] });
  });
  after(async () => {
    await server?.stop();
    cluster?.destroy();
  });

  test('every write answered 503 did not happen; every write answered 2xx did', async (t) => {
    const table = uniqueTableName('outage');
    const client = tableClient(server, table);
    await client.createTable();
    for (let w = 0; w < writersPerKind; w++) {
      const keys = Array.from({ length: deletablePerWriter }, (_, i) => `delete-${w}-${String(i).padStart(6, '0')}`);
      for (let at = 0; at < keys.length; at += 100) {
        const actions = keys
          .slice(at, at + 100)
          .map((rowKey) => ['create', { partitionKey: 'p', rowKey, n: 0 }] as const);
        await client.submitTransaction(actions.map(([verb, entity]) => [verb, entity]));
      }
    }
    const load = new WriteLoad();
    load.start(server, table);
    for (let outage = 0; outage < outages; outage++) {
      await sleep(500);
      cluster.stop(); // immediate: writes in flight lose their connections
      await sleep(300);
      cluster.start();
    }
    await sleep(1500);
    await load.stop();

    const stored = new Set<string>();
    for await (const entity of client.listEntities({ queryOptions: { select: ['RowKey'] } }))
      stored.add(entity.rowKey!);
    const wrong: string[] = [];
    for (const { kind, rowKey, status, code } of load.answers) {
      assert.ok(status < 500 || status === 503 || status === 500, `${kind} ${rowKey}: ${status} ${code}`);
      if (status !== 503 && (status < 200 || status > 299)) continue;
      const happened = kind === 'delete' ? !stored.has(rowKey) : stored.has(rowKey);
      if (happened !== (status !== 503)) wrong.push(`${kind} ${rowKey} answered ${status} ${code ?? ''}`);
    }
    const count = (test: (answer: Answer) => boolean) => load.answers.filter(test).length;
    const summary =
      `${count((a) => a.status < 300)} acknowledged, ${count((a) => a.status === 503)} answered 503, ` +
      `${count((a) => a.status === 500)} answered 500, of ${load.answers.length}`;
    t.diagnostic(summary);
    assert.ok(count((a) => a.status === 503) > 0, `no write failed during the outages: ${summary}`);
    assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} writes answered against what happened (${summary})`);
  });
});
