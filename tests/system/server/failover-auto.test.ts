// Automatic failover with pg_auto_failover: Cerulean is given the URL the monitor hands clients
// (`pg_autoctl show uri`: both nodes, target_session_attrs=read-write); the primary's machine is
// lost (keeper and server killed with SIGKILL); the monitor promotes the synchronous standby by
// itself; Cerulean follows without a restart and nothing it acknowledged is lost.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RestError } from '@azure/data-tables';
import { autoFailoverUnavailable, startFormation, type Formation } from '../../helpers/pg-auto-failover.js';
import { postgresUnavailable } from '../../helpers/postgres.js';
import { tableClient } from '../../helpers/sdk.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const skip = postgresUnavailable() ?? autoFailoverUnavailable();
const recoveryMsMax = 120_000;

describe('automatic failover (pg_auto_failover)', { skip }, () => {
  let formation: Formation;
  let server: RunningServer;
  before(async () => {
    formation = await startFormation();
    server = await startServer({ database: formation.url, args: ['--log-level', 'warn'] });
  });
  after(async () => {
    await server?.stop();
    formation?.destroy();
  });

  test(
    'the monitor promotes the standby; Cerulean follows by itself and loses nothing acknowledged',
    { timeout: 240_000 },
    async () => {
      const client = tableClient(server, 'autofailover');
      await client.createTable();
      const acknowledged: string[] = [];
      const failures = new Map<string, number>();
      let running = true;
      const writers = [0, 1, 2].map(async (w) => {
        for (let i = 0; running; i++) {
          try {
            await client.createEntity({ partitionKey: `w${w}`, rowKey: String(i).padStart(6, '0') });
            acknowledged.push(`w${w}/${String(i).padStart(6, '0')}`);
          } catch (error) {
            const key =
              error instanceof RestError
                ? `${error.statusCode} ${error.response?.headers.get('x-ms-error-code')}`
                : 'network';
            failures.set(key, (failures.get(key) ?? 0) + 1);
            await sleep(100);
          }
        }
      });
      await sleep(1500);
      const killed = await formation.killPrimary();
      const killedMs = Date.now();
      const atKill = acknowledged.length;
      while (acknowledged.length < atKill + 20) {
        assert.ok(Date.now() - killedMs < recoveryMsMax, `no writes ${recoveryMsMax} ms after ${killed} was killed`);
        await sleep(200);
      }
      const recoveredMs = Date.now() - killedMs;
      running = false;
      await Promise.all(writers);
      assert.notEqual(await formation.primaryName(), killed, 'the monitor did not promote the standby');
      for (const key of failures.keys())
        assert.match(key, /^(503 ServerBusy|500 InternalError|500 OperationTimedOut)$/);
      const stored = new Set<string>();
      for await (const entity of client.listEntities()) stored.add(`${entity.partitionKey}/${entity.rowKey}`);
      assert.deepEqual(
        acknowledged.filter((key) => !stored.has(key)),
        [],
        'acknowledged writes were lost',
      );
      process.stderr.write(
        `pg_auto_failover: ${acknowledged.length} writes acknowledged (${atKill} before the kill), 0 lost, ` +
          `writes again ${recoveredMs} ms after the kill; failures ${JSON.stringify(Object.fromEntries(failures))}\n`,
      );
    },
  );
});
