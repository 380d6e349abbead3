// On disk, point reads share one SQLite read transaction until the store acknowledges a write
// (sqlite-store.ts read/afterWrite). What must hold: a read that starts after any write is
// acknowledged sees it — entities, tables, deletes, and writes acknowledged while reads go on.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Properties } from '../../src/domain/entity.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import type { TableInfo, Write } from '../../src/storage/table-store.js';

const account = 'devstoreaccount1';

function put(rowKey: string, n: number): Write {
  const properties: Properties = new Map([['N', { type: 'Edm.Int32', value: n }]]);
  return { partitionKey: 'p', rowKey, condition: { kind: 'none' }, action: { kind: 'put', properties } };
}

function valueOf(entity: { properties: Properties } | undefined): unknown {
  return entity?.properties.get('N')?.value;
}

describe('SQLite on disk: reads after an acknowledged write see it', () => {
  let location: string;
  let store: SqliteStore;
  let table: TableInfo;

  before(async () => {
    location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-snapshot-'));
    store = await SqliteStore.open({ location });
    await store.createTable(account, 'Snap');
    table = (await store.getTable(account, 'Snap'))!;
  });

  after(async () => {
    await store.close();
    rmSync(location, { recursive: true, force: true });
  });

  test('each acknowledged version is read back at once, 200 times over', async () => {
    assert.equal(await store.getEntity(table, 'p', 'r'), undefined); // opens the shared snapshot
    for (let n = 1; n <= 200; n++) {
      const result = await store.commit(table, [put('r', n)]);
      assert(result.ok);
      assert.equal(valueOf(await store.getEntity(table, 'p', 'r')), n);
    }
    await store.commit(table, [
      { partitionKey: 'p', rowKey: 'r', condition: { kind: 'present' }, action: { kind: 'delete' } },
    ]);
    assert.equal(await store.getEntity(table, 'p', 'r'), undefined);
  });

  test('reads during a write in flight, then after its acknowledgement', async () => {
    await store.commit(table, [put('x', 1)]);
    assert.equal(valueOf(await store.getEntity(table, 'p', 'x')), 1);
    const pending = store.commit(table, [put('x', 2)]);
    const during = valueOf(await store.getEntity(table, 'p', 'x'));
    assert(
      during === 1 || during === 2,
      `a read during the write sees one version or the other, saw ${String(during)}`,
    );
    await pending;
    assert.equal(valueOf(await store.getEntity(table, 'p', 'x')), 2);
  });

  test('many writes and reads interleaved: every read after an acknowledgement sees at least that version', async () => {
    const acknowledged = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        const rowKey = `w${worker}`;
        for (let n = 1; n <= 25; n++) {
          await store.commit(table, [put(rowKey, n)]);
          acknowledged.set(rowKey, n);
          for (const [key, version] of acknowledged) {
            const read = valueOf(await store.getEntity(table, 'p', key)) as number;
            assert(read >= version, `${key}: read ${read} after ${version} was acknowledged`);
          }
        }
      }),
    );
  });

  test('a table created or deleted after reads began', async () => {
    assert.equal(await store.getEntity(table, 'p', 'none'), undefined);
    await store.createTable(account, 'Later');
    const later = await store.getTable(account, 'Later');
    assert(later !== undefined);
    assert((await store.commit(later, [put('a', 7)])).ok);
    assert.equal(valueOf(await store.getEntity(later, 'p', 'a')), 7);
    await store.deleteTable(account, 'Later');
    assert.equal(await store.getTable(account, 'Later'), undefined);
    assert.equal(await store.getEntity(later, 'p', 'a'), undefined);
  });
});
