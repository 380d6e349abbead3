// The outbox worker converges after being killed mid-way: a worker process is SIGKILLed after
// it applied some messages, then two workers resume at once, then a stalled worker delivers every
// message again, newest first; the index must then equal what the entities say, with no message
// left and no stale or missing index row.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  codecs,
  connect,
  defineModel,
  isTombstone,
  keys,
  outboxRange,
  OutboxIndexedTable,
  OutboxWorker,
  purgeTombstones,
  rawPages,
  t,
  wireString,
  type RawEntity,
} from '../src/index.js';
import { newTable, seededRandom, serverKinds, serversForFile, testRetry } from './fixtures.js';
import type { TestServer } from './servers.js';

const childScript = fileURLToPath(new URL('./outbox-worker-child.js', import.meta.url));

const Customer = defineModel({
  kind: 'customer',
  schema: { region: t.string(), id: t.int32(), email: t.string(), name: t.string() },
  partitionKey: ['region'],
  rowKey: [{ field: 'id', codec: codecs.uint(5) }],
});

function startWorker(server: TestServer, sourceTable: string) {
  const child = spawn(process.execPath, [childScript], {
    env: { ...process.env, AZURE_TABLES_CONNECTION_STRING: server.connectionString, SOURCE_TABLE: sourceTable },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let applied = 0;
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  return {
    child,
    exited,
    stderr: () => stderr,
    /** Resolves once the worker reported `count` applied messages. */
    appliedAtLeast: (count: number) =>
      new Promise<void>((resolve, reject) => {
        lines.on('line', (line) => {
          if (line.startsWith('applied ') && ++applied >= count) resolve();
        });
        void exited.then(() => reject(new Error(`worker exited after ${applied} messages: ${stderr}`)));
      }),
  };
}

async function pendingMessages(client: import('@azure/data-tables').TableClient): Promise<number> {
  let count = 0;
  for await (const page of rawPages(client, { filter: keys.rowKeyRange(outboxRange) })) count += page.items.length;
  return count;
}

/** 40 customers in 4 regions, then changes of e-mail (moving index rows) and deletes: ~90 messages. */
async function churn(customers: OutboxIndexedTable<typeof Customer.schema>): Promise<void> {
  const random = seededRandom(42);
  const emailOf = (id: number, version: number) => `c${id}.v${version}@x.com`;
  const ids = Array.from({ length: 40 }, (_, id) => id);
  for (const id of ids)
    await customers.create({ region: `r${id % 4}`, id, email: emailOf(id, 0), name: `Customer ${id}` });
  for (const id of ids) {
    const changes = Math.floor(random() * 3);
    for (let v = 1; v <= changes; v++)
      await customers.update({ region: `r${id % 4}`, id }, (c) => ({
        ...c,
        email: emailOf(id, v),
        name: `Customer ${id} v${v}`,
      }));
    if (random() < 0.15) await customers.delete({ region: `r${id % 4}`, id });
  }
}

/** Each live customer's e-mail → `partitionKey/rowKey/name`, from the source table. */
async function liveCustomers(client: import('@azure/data-tables').TableClient): Promise<Map<string, string>> {
  const expected = new Map<string, string>();
  for await (const page of rawPages(client, {})) {
    for (const row of page.items) {
      if (!Customer.isKind(row)) continue;
      const customer = Customer.fromEntity(row);
      expected.set(customer.email, `${row.partitionKey}/${row.rowKey}/${customer.name}`);
    }
  }
  return expected;
}

/** Each live index row's key → the source's `partitionKey/rowKey/name` it copies. */
async function indexRows(client: import('@azure/data-tables').TableClient): Promise<Map<string, string>> {
  const actual = new Map<string, string>();
  for await (const page of rawPages(client, {})) {
    for (const row of page.items) {
      if (isTombstone(row)) continue;
      actual.set(
        row.partitionKey,
        `${wireString(row.sourcePartitionKey)}/${wireString(row.sourceRowKey)}/${wireString(row.name)}`,
      );
    }
  }
  return actual;
}

describe('outbox worker', () => {
  const servers = serversForFile();

  for (const kind of serverKinds) {
    test(`${kind}: converges after a SIGKILL mid-way, with two workers resuming at once`, async () => {
      const server = servers.get(kind)!;
      const source = await newTable(server, 'Customers');
      const index = await newTable(server, 'CustomersByEmail');
      const customers = new OutboxIndexedTable(
        source.client,
        Customer,
        { table: index.name, keys: (c) => ({ partitionKey: c.email, rowKey: '' }), copy: ['name'] },
        { tables: () => index.client, retry: testRetry(1) },
      );
      await churn(customers);
      const total = await pendingMessages(source.client);
      assert.ok(total >= 60, `${total} messages pending`);

      // What a worker that read the outbox now and stalled would deliver late, after the others.
      const snapshot: RawEntity[] = [];
      for await (const page of rawPages(source.client, { filter: keys.rowKeyRange(outboxRange) }))
        snapshot.push(...page.items);

      const first = startWorker(server, source.name);
      await first.appliedAtLeast(15);
      first.child.kill('SIGKILL');
      const [, signal] = await first.exited;
      assert.equal(signal, 'SIGKILL');
      const left = await pendingMessages(source.client);
      assert.ok(left > 0 && left < total, `killed mid-way: ${left} of ${total} messages left`);

      const resumed = [startWorker(server, source.name), startWorker(server, source.name)];
      for (const worker of resumed) {
        const [code] = await worker.exited;
        assert.equal(code, 0, worker.stderr());
      }
      assert.equal(await pendingMessages(source.client), 0, 'no message left');

      // The stalled worker delivers every message again, newest first: nothing may change.
      const late = new OutboxWorker(source.client, { tables: () => index.client });
      for (const message of snapshot.reverse()) await late.applyMessage(message);

      // The index is exactly what the entities say: one live row per live customer, with its data.
      const expected = await liveCustomers(source.client);
      const actual = await indexRows(connect(server.connectionString, index.name));
      assert.deepEqual([...actual].sort(), [...expected].sort());
      assert.ok(expected.size > 20 && expected.size < 40, `${expected.size} live customers (some were deleted)`);

      // Tombstones can be purged once no message can be late any more; live rows stay.
      const purged = await purgeTombstones(index.client, new Date(Date.now() + 60_000));
      assert.ok(purged > 0, `${purged} tombstones purged`);
      let rowsLeft = 0;
      for await (const page of rawPages(index.client, {})) rowsLeft += page.items.length;
      assert.equal(rowsLeft, expected.size, 'only the live index rows are left');
    });
  }
});
