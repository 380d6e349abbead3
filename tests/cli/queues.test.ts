// The queue commands as a user types them (tests/helpers/cli.ts) against a real server: list, peek,
// put (argument and stdin), purge, move (a poison queue back to its queue), the environment
// variable, and one-line errors. Messages are checked through the official SDK.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { QueueClient } from '@azure/storage-queue';
import { describeRun, runCli } from '../helpers/cli.js';
import { queueConnectionString, queueServiceClient, uniqueQueueName } from '../helpers/queue.js';
import { devAccount, devKey, startServer, type RunningServer } from '../helpers/server.js';

describe('cerulean queues and cerulean queue', () => {
  let server: RunningServer;
  let connectionString: string;
  const cli = (args: string[], stdin?: string) =>
    runCli([...args, '-c', connectionString], stdin === undefined ? {} : { stdin });

  before(async () => {
    server = await startServer({ inMemory: true });
    connectionString = queueConnectionString(server);
  });
  after(async () => {
    await server?.stop();
  });

  async function freshQueue(prefix: string, texts: string[] = []): Promise<QueueClient> {
    const queue = queueServiceClient(server).getQueueClient(uniqueQueueName(prefix));
    await queue.create();
    for (const text of texts) await queue.sendMessage(text);
    return queue;
  }

  async function textsOf(queue: QueueClient): Promise<string[]> {
    const peeked = await queue.peekMessages({ numberOfMessages: 32 });
    return peeked.peekedMessageItems.map((message) => message.messageText).sort();
  }

  test('queues lists every queue with its approximate message count', async () => {
    const two = await freshQueue('two', ['a', 'b']);
    const none = await freshQueue('none');
    const listed = await cli(['queues']);
    assert.equal(listed.code, 0, describeRun(listed));
    assert.match(listed.stdout, new RegExp(`^${two.name} +2$`, 'm'));
    assert.match(listed.stdout, new RegExp(`^${none.name} +0$`, 'm'));
    const json = await cli(['queues', '--json']);
    assert.equal(json.code, 0, describeRun(json));
    const { queues } = JSON.parse(json.stdout) as { queues: { name: string; approximateMessages: number }[] };
    assert.deepEqual(
      queues.find((queue) => queue.name === two.name),
      { name: two.name, approximateMessages: 2 },
    );
  });

  test('put from an argument and from stdin; peek prints one JSON line each and hides nothing', async () => {
    const queue = await freshQueue('put');
    const first = await cli(['queue', 'put', queue.name, '{"order":42} <&>']);
    assert.equal(first.code, 0, describeRun(first));
    const second = await cli(['queue', 'put', queue.name, '-'], 'from stdin\n');
    assert.equal(second.code, 0, describeRun(second));
    const peeked = await cli(['queue', 'peek', queue.name, '--count', '5']);
    assert.equal(peeked.code, 0, describeRun(peeked));
    const lines = peeked.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines.map((line) => line['text']).sort(), ['from stdin', '{"order":42} <&>']);
    for (const line of lines) {
      assert.deepEqual(Object.keys(line), ['id', 'dequeueCount', 'insertedOn', 'expiresOn', 'text']);
      assert.equal(line['dequeueCount'], 0);
      assert.ok(Date.parse(String(line['expiresOn'])) > Date.parse(String(line['insertedOn'])));
    }
    assert.equal((await cli(['queue', 'peek', queue.name])).stdout.trim().split('\n').length, 1, 'default: one');
    assert.deepEqual(await textsOf(queue), ['from stdin', '{"order":42} <&>'], 'peek hid nothing');
  });

  test('purge clears the queue and says how many there were', async () => {
    const queue = await freshQueue('purge', ['a', 'b', 'c']);
    const purged = await cli(['queue', 'purge', queue.name]);
    assert.equal(purged.code, 0, describeRun(purged));
    assert.equal(purged.stdout, `purge ${queue.name}: 3 messages cleared\n`);
    assert.deepEqual(await textsOf(queue), []);
  });

  test('move takes a poison queue back: every message once in the destination, none left behind', async () => {
    const texts = Array.from({ length: 40 }, (_, index) => `message ${index}`);
    const destination = await freshQueue('orders');
    const poison = queueServiceClient(server).getQueueClient(`${destination.name}-poison`);
    await poison.create();
    for (const text of texts) await poison.sendMessage(text);
    const limited = await cli(['queue', 'move', poison.name, destination.name, '--max', '3']);
    assert.equal(limited.code, 0, describeRun(limited));
    assert.match(limited.stdout, /: 3 messages moved\n$/);
    const rest = await cli(['queue', 'move', poison.name, destination.name]);
    assert.equal(rest.code, 0, describeRun(rest));
    assert.match(rest.stdout, /: 37 messages moved\n$/);
    assert.equal((await poison.getProperties()).approximateMessagesCount, 0);
    const moved: string[] = [];
    for (let round = 0; round < 2; round++) {
      const received = await destination.receiveMessages({ numberOfMessages: 32 });
      moved.push(...received.receivedMessageItems.map((message) => message.messageText));
    }
    assert.deepEqual(moved.sort(), [...texts].sort());
    const help = await runCli(['queue', 'move', '--help']);
    assert.match(help.stdout, /At least once/);
  });

  test('AZURE_STORAGE_CONNECTION_STRING when there is no -c', async () => {
    const queue = await freshQueue('env', ['x']);
    const listed = await runCli(['queues'], { env: { AZURE_STORAGE_CONNECTION_STRING: connectionString } });
    assert.equal(listed.code, 0, describeRun(listed));
    assert.match(listed.stdout, new RegExp(`^${queue.name} +1$`, 'm'));
  });

  test('errors are one line: usage exit 2, failures exit 1', async () => {
    const queue = await freshQueue('err');
    const cases: [string[], number, RegExp][] = [
      [['queue', 'peek', 'nosuchqueue1'], 1, /^cerulean queue: queue nosuchqueue1 does not exist\n$/],
      [['queue', 'move', queue.name, 'nosuchqueue2'], 1, /^cerulean queue: queue nosuchqueue2 does not exist\n$/],
      [['queue', 'move', queue.name, queue.name], 2, /^cerulean queue: the source and destination are the same/],
      [['queue', 'peek', queue.name, '--count', '33'], 2, /--count must be at most 32/],
      [['queue', 'bogus'], 2, /^cerulean queue: unknown subcommand 'bogus': peek, put, purge or move\n$/],
      [['queue', 'put', queue.name], 2, /^cerulean: missing required argument 'text'\n\(cerulean queue put --help/],
    ];
    for (const [args, code, stderr] of cases) {
      const result = await cli(args);
      assert.equal(result.code, code, describeRun(result));
      assert.match(result.stderr, stderr, describeRun(result));
      assert.ok(result.stderr.split('\n').length <= 3, describeRun(result));
    }
    const tablesOnly = `AccountName=${devAccount};AccountKey=${devKey};TableEndpoint=${server.url}`;
    const tableOnly = await runCli(['queues', '-c', tablesOnly]);
    assert.equal(tableOnly.code, 1, describeRun(tableOnly));
    assert.match(tableOnly.stderr, /^cerulean queues: the connection string names no QueueEndpoint/);
    assert.equal(tableOnly.stderr.split('\n').length, 2);
  });
});
