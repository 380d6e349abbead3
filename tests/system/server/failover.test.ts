// The loss of the database machine: two Cerulean processes write through a libpq multi-host URL
// (`…/h1,h2/db?target_session_attrs=read-write`) to a primary with a synchronous hot standby; the
// primary is killed with SIGKILL at a random moment and the standby promoted. Every write
// acknowledged before the kill must be on the promoted standby, no batch torn, the If-Match
// counter equal to its acknowledged increments (plus at most the increments whose outcome was
// unknown), and both processes must serve writes again without a restart.
// CERULEAN_FAILOVER_TRIALS=N runs N trials (seeds) instead of one, for the longer run outside npm test.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RestError, type TableClient } from '@azure/data-tables';
import { postgresBin, promote, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { onDatabase, postgresUnavailable } from '../../helpers/postgres.js';
import { sample, scrape } from '../../helpers/metrics.js';
import { tableClient } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';
import { seededRandom } from '../../query/random.js';

const bin = postgresBin();
const skip = postgresUnavailable() ?? (bin === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined);
const trials = Number(process.env['CERULEAN_FAILOVER_TRIALS'] ?? 1);
const recoveryMsMax = 60_000;
/** What a write may answer across a failover: busy, an unknown outcome, or a lost If-Match race. */
const expectedFailure = /^(503 ServerBusy|500 InternalError|500 OperationTimedOut|412 UpdateConditionNotSatisfied)$/;

/** What the writers were told, and what stayed unknown. */
class Ledger {
  readonly inserted: string[] = [];
  readonly batches: string[] = [];
  increments = 0;
  unknownIncrements = 0;
  readonly failures = new Map<string, number>();
  failed(error: unknown): void {
    const status = error instanceof RestError ? error.statusCode : undefined;
    const code = error instanceof RestError ? error.response?.headers.get('x-ms-error-code') : undefined;
    const key = `${status ?? 'network'} ${code ?? (error as Error).message.slice(0, 40)}`;
    this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
  }
}

async function insertLoop(client: TableClient, name: string, ledger: Ledger, running: () => boolean): Promise<void> {
  for (let i = 0; running(); i++) {
    const rowKey = `${name}-${i}`;
    try {
      await client.createEntity({ partitionKey: 'single', rowKey, i });
      ledger.inserted.push(rowKey);
    } catch (error) {
      ledger.failed(error);
      await sleep(50);
    }
  }
}

async function batchLoop(client: TableClient, name: string, ledger: Ledger, running: () => boolean): Promise<void> {
  for (let i = 0; running(); i++) {
    const partitionKey = `batch-${name}-${i}`;
    try {
      await client.submitTransaction(['a', 'b', 'c'].map((rowKey) => ['create', { partitionKey, rowKey, i }] as const));
      ledger.batches.push(partitionKey);
    } catch (error) {
      ledger.failed(error);
      await sleep(50);
    }
  }
}

/** Reads the counter, writes it plus one with If-Match; a 412 reads again. */
async function incrementLoop(client: TableClient, ledger: Ledger, running: () => boolean): Promise<void> {
  while (running()) {
    try {
      const entity = await client.getEntity<{ n: number }>('counter', 'c');
      try {
        await client.updateEntity({ partitionKey: 'counter', rowKey: 'c', n: entity.n + 1 }, 'Replace', {
          etag: entity.etag,
        });
        ledger.increments++;
      } catch (error) {
        const status = error instanceof RestError ? error.statusCode : undefined;
        if (status !== 412 && status !== 503) ledger.unknownIncrements++;
        throw error;
      }
    } catch (error) {
      ledger.failed(error);
      await sleep(50);
    }
  }
}

function killNine(cluster: Cluster): void {
  const pid = Number(readFileSync(join(cluster.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  // The children first: once the postmaster is gone they would be orphans still holding the port.
  execFileSync('pkill', ['-KILL', '-P', String(pid)]);
  process.kill(pid, 'SIGKILL');
  // Its pid file stays behind (the postmaster may linger as a zombie): cleanup must not wait for it.
  rmSync(join(cluster.data, 'postmaster.pid'), { force: true });
}

async function waitForSyncStandby(primary: Cluster): Promise<void> {
  await onDatabase(primary.url, async (client) => {
    await client.query(`ALTER SYSTEM SET synchronous_standby_names = '*'`);
    await client.query('SELECT pg_reload_conf()');
    for (let waitedMs = 0; ; waitedMs += 100) {
      const { rows } = await client.query(`SELECT sync_state FROM pg_stat_replication`);
      if (rows.some((row) => row.sync_state === 'sync')) return;
      assert.ok(waitedMs < 30_000, 'the standby never became synchronous');
      await sleep(100);
    }
  });
}

/** Each process writes again after the promotion; how long that took, at the most (ms). */
async function writesAgain(clients: readonly TableClient[], promotedMs: number): Promise<number> {
  const recovered = await Promise.all(
    clients.map(async (client, p) => {
      for (let i = 0; ; i++) {
        try {
          await client.createEntity({ partitionKey: 'after', rowKey: `p${p}-${i}` });
          return Date.now() - promotedMs;
        } catch {
          assert.ok(Date.now() - promotedMs < recoveryMsMax, `process ${p} serves no writes after the failover`);
          await sleep(100);
        }
      }
    }),
  );
  return Math.max(...recovered);
}

async function failoverSeen(servers: readonly RunningServer[], promotedMs: number): Promise<void> {
  for (const server of servers) {
    const failoverSeconds = sample(await scrape(server.port), 'cerulean_database_last_failover_timestamp_seconds');
    const seen = failoverSeconds !== undefined && failoverSeconds * 1000 >= promotedMs - 60_000;
    assert.ok(seen, 'no failover in /_metrics');
  }
}

async function runTrial(seed: number): Promise<string> {
  const random = seededRandom(seed);
  const primary = await startCluster(bin!);
  const standby = await startCluster(bin!, { standbyOf: primary.url });
  const servers: RunningServer[] = [];
  try {
    // Set after the base backup, so that the standby, once promoted, does not wait for a standby of its own.
    await waitForSyncStandby(primary);
    const hosts = `127.0.0.1:${primary.port},127.0.0.1:${standby.port}`;
    const url = `postgres://postgres@${hosts}/postgres?target_session_attrs=read-write`;
    for (let i = 0; i < 2; i++) servers.push(await startServer({ database: url, args: ['--log-level', 'warn'] }));
    const clients = servers.map((server) => tableClient(server, 'failover'));
    await clients[0]!.createTable();
    await clients[0]!.createEntity({ partitionKey: 'counter', rowKey: 'c', n: 0 });
    const ledger = new Ledger();
    let running = true;
    const loops = clients.flatMap((client, p) => [
      insertLoop(client, `p${p}`, ledger, () => running),
      batchLoop(client, `p${p}`, ledger, () => running),
      incrementLoop(client, ledger, () => running),
    ]);
    await sleep(500 + random.int(2000));
    killNine(primary);
    const acknowledgedAtKill = ledger.inserted.length + ledger.batches.length + ledger.increments;
    // An outage of random length: requests meanwhile must fail fast with the service's errors.
    await sleep(200 + random.int(1300));
    await promote(bin!, standby.data);
    const promotedMs = Date.now();
    const recoveredMs = await writesAgain(clients, promotedMs);
    await sleep(500);
    running = false;
    await Promise.all(loops);
    assert.ok(acknowledgedAtKill > 0, 'nothing was acknowledged before the kill');
    for (const failure of ledger.failures.keys()) assert.match(failure, expectedFailure, 'not an Azure error');
    await verify(clients[1]!, ledger);
    await failoverSeen(servers, promotedMs);
    const acknowledged = `${ledger.inserted.length} inserts, ${ledger.batches.length} batches, ${ledger.increments} increments`;
    return (
      `seed ${seed}: ${acknowledged} acknowledged (${acknowledgedAtKill} before the kill); lost 0; ` +
      `writes again after ${recoveredMs} ms; failures ${JSON.stringify(Object.fromEntries(ledger.failures))}`
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    primary.destroy();
    standby.destroy();
  }
}

async function verify(client: TableClient, ledger: Ledger): Promise<void> {
  const stored = new Set<string>();
  for await (const entity of client.listEntities()) stored.add(`${entity.partitionKey}/${entity.rowKey}`);
  const missing = ledger.inserted.filter((rowKey) => !stored.has(`single/${rowKey}`));
  assert.deepEqual(missing, [], 'acknowledged inserts were lost');
  for (const partitionKey of ledger.batches) {
    for (const rowKey of ['a', 'b', 'c'])
      assert.ok(stored.has(`${partitionKey}/${rowKey}`), `batch ${partitionKey} lost ${rowKey}`);
  }
  const batchRows = new Map<string, number>();
  for (const key of stored) {
    const partitionKey = key.slice(0, key.indexOf('/'));
    if (partitionKey.startsWith('batch-')) batchRows.set(partitionKey, (batchRows.get(partitionKey) ?? 0) + 1);
  }
  for (const [partitionKey, rows] of batchRows) assert.equal(rows, 3, `batch ${partitionKey} is torn`);
  const { n } = await client.getEntity<{ n: number }>('counter', 'c');
  assert.ok(n >= ledger.increments, `counter ${n} lost acknowledged increments (${ledger.increments})`);
  assert.ok(
    n <= ledger.increments + ledger.unknownIncrements,
    `counter ${n} beyond ${ledger.increments} + unknown ${ledger.unknownIncrements}`,
  );
}

describe('failover to a synchronous standby', { skip }, () => {
  const results: string[] = [];
  before(() => undefined);
  after(() => {
    for (const line of results) process.stderr.write(`failover ${line}\n`);
  });
  for (let trial = 0; trial < trials; trial++) {
    const seed = Number(process.env['CERULEAN_FAILOVER_SEED'] ?? Date.now() % 100_000) + trial;
    test(
      `trial ${trial + 1} (seed ${seed}): nothing acknowledged is lost; both processes write again`,
      { timeout: 180_000 },
      async () => {
        results.push(await runTrial(seed));
      },
    );
  }
});
