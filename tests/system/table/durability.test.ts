// Acknowledged writes survive SIGKILL (a write is acknowledged only once its commit is durable:
// docs/architecture.md#threads-and-durability). A simple version: drive writes, kill -9 right after the last
// acknowledgement, restart
// on the same directory, compare with a model. The randomized crash suite is table/crash.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTempDir, removeDir, startServer } from '../../helpers/server.js';
import { inParallel, serviceClient, tableClient, uniqueTableName } from '../../helpers/sdk.js';

type Props = Record<string, number>;

describe('durability', () => {
  test('every acknowledged write is there after kill -9 and restart', async () => {
    const dir = makeTempDir();
    const main = uniqueTableName('dur');
    const dropped = uniqueTableName('gone');
    const extra = uniqueTableName('extra');
    const model = new Map<string, Props>();
    const rowKeys = Array.from({ length: 400 }, (_, i) => String(i).padStart(3, '0'));
    try {
      const first = await startServer({ location: dir });
      try {
        const client = tableClient(first, main);
        await client.createTable();
        await inParallel(rowKeys, 8, async (rk) => {
          await client.createEntity({ partitionKey: 'p', rowKey: rk, v: Number(rk) });
          model.set(rk, { v: Number(rk) });
        });
        await inParallel(rowKeys, 8, async (rk) => {
          const i = Number(rk);
          switch (i % 4) {
            case 0:
              await client.updateEntity({ partitionKey: 'p', rowKey: rk, m: i }, 'Merge');
              model.set(rk, { v: i, m: i });
              break;
            case 1:
              await client.updateEntity({ partitionKey: 'p', rowKey: rk, r: -i }, 'Replace');
              model.set(rk, { r: -i });
              break;
            case 2:
              await client.deleteEntity('p', rk);
              model.delete(rk);
              break;
          }
        });
        const service = serviceClient(first);
        await service.createTable(dropped);
        await service.deleteTable(dropped);
        await service.createTable(extra);
        await tableClient(first, extra).upsertEntity({ partitionKey: 'x', rowKey: 'last', n: 1 }, 'Replace');
      } finally {
        await first.kill9();
      }

      const second = await startServer({ location: dir });
      try {
        const found = new Map<string, Props>();
        for await (const e of tableClient(second, main).listEntities()) {
          const { partitionKey: _p, rowKey, etag: _e, timestamp: _t, ...props } = e;
          found.set(rowKey!, props as Props);
        }
        assert.deepEqual(found, model);
        const tables: string[] = [];
        for await (const t of serviceClient(second).listTables()) tables.push(t.name!);
        assert.deepEqual(tables.sort(), [main, extra].sort());
        assert.equal((await tableClient(second, extra).getEntity<{ n: number }>('x', 'last')).n, 1);
      } finally {
        await second.stop();
      }
    } finally {
      removeDir(dir);
    }
  });
});
