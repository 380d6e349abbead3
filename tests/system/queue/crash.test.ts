// Queue durability under kill -9, on SQLite and PostgreSQL: producers put and consumers get and
// delete against a server that gets SIGKILL at a random moment; after a restart on the same data
// no acknowledged put is lost and no acknowledged delete is undone. With two server processes over
// one PostgreSQL database, consumers on both never hold the same message at once.
// SIGKILL ends the process, not the machine: this proves nothing is acknowledged before its
// commit, not that the commit was fsynced.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDatabase, dropDatabase, testDatabaseUrl } from '../../helpers/postgres.js';
import { childText, messageBody, queueSend, TestClock, uniqueQueueName, xmlOf } from '../../helpers/queue.js';
import { makeTempDir, removeDir, startServer, type RunningServer, type ServerOptions } from '../../helpers/server.js';

const producers = 4;
const consumers = 4;
const killDelayMinMs = 300;
const killDelayMaxMs = 1_500;

interface Ledger {
  readonly ackedPuts: Set<string>;
  /** Texts a consumer sent a delete for (applied or not). */
  readonly deleteSent: Set<string>;
  readonly ackedDeletes: Set<string>;
}

async function produce(server: RunningServer, queue: string, producer: number, ledger: Ledger): Promise<void> {
  for (let n = 0; ; n++) {
    const text = `p${producer}-${n}`;
    const answer = await queueSend(server, { method: 'POST', target: `${queue}/messages`, body: messageBody(text) });
    if (answer.status !== 201) return;
    ledger.ackedPuts.add(text);
  }
}

async function consume(server: RunningServer, queue: string, ledger: Ledger): Promise<void> {
  for (;;) {
    const got = await queueSend(server, {
      method: 'GET',
      target: `${queue}/messages?numofmessages=8&visibilitytimeout=3600`,
    });
    if (got.status !== 200) return;
    for (const message of xmlOf(got).children) {
      const text = childText(message, 'MessageText')!;
      const receipt = encodeURIComponent(childText(message, 'PopReceipt')!);
      ledger.deleteSent.add(text);
      const target = `${queue}/messages/${childText(message, 'MessageId')}?popreceipt=${receipt}`;
      const deleted = await queueSend(server, { method: 'DELETE', target });
      if (deleted.status !== 204) return;
      ledger.ackedDeletes.add(text);
    }
  }
}

/** Every message text left in the queue, each claimed once (the clock has moved past every visibility). */
async function drain(server: RunningServer, queue: string): Promise<string[]> {
  const texts: string[] = [];
  for (;;) {
    const got = await queueSend(server, {
      method: 'GET',
      target: `${queue}/messages?numofmessages=32&visibilitytimeout=3600`,
    });
    assert.equal(got.status, 200, got.text);
    const batch = xmlOf(got).children.map((message) => childText(message, 'MessageText')!);
    if (batch.length === 0) return texts;
    texts.push(...batch);
  }
}

const engines: { label: string; data: () => Promise<{ options: ServerOptions; cleanup: () => Promise<void> }> }[] = [
  {
    label: 'SQLite',
    data: async () => {
      const dir = makeTempDir();
      return { options: { location: dir }, cleanup: async () => removeDir(dir) };
    },
  },
  ...(testDatabaseUrl() === undefined
    ? []
    : [
        {
          label: 'PostgreSQL',
          data: async () => {
            const url = await createDatabase();
            return { options: { database: url }, cleanup: () => dropDatabase(url) };
          },
        },
      ]),
];

for (const engine of engines) {
  describe(`queue crash on ${engine.label}`, () => {
    test('kill -9 under load: no acknowledged put lost, no acknowledged delete undone', async (t) => {
      const { options, cleanup } = await engine.data();
      const clock = new TestClock();
      const ledger: Ledger = { ackedPuts: new Set(), deleteSent: new Set(), ackedDeletes: new Set() };
      const queue = uniqueQueueName('crash');
      try {
        const first = await startServer({ ...options, env: clock.env });
        assert.equal((await queueSend(first, { method: 'PUT', target: queue })).status, 201);
        const swallow = (work: Promise<void>) => work.catch(() => undefined); // the kill fails requests in flight
        const load = [
          ...Array.from({ length: producers }, (_, i) => swallow(produce(first, queue, i, ledger))),
          ...Array.from({ length: consumers }, () => swallow(consume(first, queue, ledger))),
        ];
        const delayMs = killDelayMinMs + Math.floor(Math.random() * (killDelayMaxMs - killDelayMinMs));
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        await first.kill9();
        await Promise.all(load);
        assert.ok(ledger.ackedPuts.size > 0, 'some puts were acknowledged before the kill');
        t.diagnostic(
          `killed after ${delayMs} ms: ${ledger.ackedPuts.size} puts, ${ledger.ackedDeletes.size} deletes acknowledged`,
        );

        const second = await startServer({ ...options, env: clock.env });
        try {
          clock.advance(2 * 3600_000); // every claimed message is visible again
          const left = await drain(second, queue);
          assert.equal(new Set(left).size, left.length, 'each message drained once');
          for (const text of ledger.ackedDeletes)
            assert.ok(!left.includes(text), `acknowledged delete undone: ${text}`);
          const remaining = new Set(left);
          for (const text of ledger.ackedPuts) {
            if (!ledger.deleteSent.has(text)) assert.ok(remaining.has(text), `acknowledged put lost: ${text}`);
          }
        } finally {
          await second.stop();
        }
      } finally {
        await cleanup();
      }
    });
  });
}

describe('two server processes over one PostgreSQL database', { skip: testDatabaseUrl() === undefined }, () => {
  test('consumers on both never hold the same message at once', async () => {
    const url = await createDatabase();
    const servers = [await startServer({ database: url }), await startServer({ database: url })];
    try {
      const queue = uniqueQueueName('shared');
      assert.equal((await queueSend(servers[0]!, { method: 'PUT', target: queue })).status, 201);
      const total = 300;
      for (let i = 0; i < total; i += 30) {
        await Promise.all(
          Array.from({ length: 30 }, (_, j) =>
            queueSend(servers[(i + j) % 2]!, {
              method: 'POST',
              target: `${queue}/messages`,
              body: messageBody(`m${i + j}`),
            }),
          ),
        );
      }
      const claimed: string[] = [];
      const consumer = async (server: RunningServer) => {
        for (;;) {
          const got = await queueSend(server, {
            method: 'GET',
            target: `${queue}/messages?numofmessages=5&visibilitytimeout=3600`,
          });
          assert.equal(got.status, 200, got.text);
          const ids = xmlOf(got).children.map((message) => childText(message, 'MessageId')!);
          if (ids.length === 0) return;
          claimed.push(...ids);
        }
      };
      await Promise.all(servers.flatMap((server) => [consumer(server), consumer(server), consumer(server)]));
      assert.equal(new Set(claimed).size, claimed.length, 'a message was claimed twice within its visibility timeout');
      assert.equal(claimed.length, total);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
      await dropDatabase(url);
    }
  });
});
