// Queue series on /_metrics, read from the store when scraped: the message count, the age of the
// oldest message and the highest visible dequeue count of the deepest queues, the number of queue
// series bounded. Time moves through the test clock; messages go in through the official SDK.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeRun, runCli } from '../../helpers/cli.js';
import { insights, sample, samples, scrape } from '../../helpers/metrics.js';
import { TestClock, queueServiceClient, uniqueQueueName } from '../../helpers/queue.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

describe('/_metrics: queue depths', () => {
  let server: RunningServer;
  const clock = new TestClock();
  before(async () => {
    server = await startServer({ inMemory: true, env: clock.env });
  });
  after(async () => {
    await server?.stop();
  });

  test('count, oldest age and highest visible dequeue count of the 20 deepest queues', async () => {
    const service = queueServiceClient(server);
    const queue = async (prefix: string, texts: string[]) => {
      const client = service.getQueueClient(uniqueQueueName(prefix));
      await client.create();
      for (const text of texts) await client.sendMessage(text);
      return client;
    };
    const work = await queue('work', ['first']);
    // Read twice: the second get after the first one's visibility passed; then visible again.
    assert.equal((await work.receiveMessages({ visibilityTimeout: 30 })).receivedMessageItems.length, 1);
    clock.advance(31_000);
    const again = (await work.receiveMessages({ visibilityTimeout: 30 })).receivedMessageItems;
    assert.equal(again[0]?.dequeueCount, 2);
    const hidden = await scrape(server.port);
    const labels = { account: 'devstoreaccount1', queue: work.name };
    assert.equal(sample(hidden, 'cerulean_queue_dequeue_count_max', labels), 0, 'only visible messages count');
    clock.advance(31_000);
    for (const text of ['second', 'third']) await work.sendMessage(text);
    const other = await queue('other', ['a', 'b']);
    await queue('empty', []);
    for (let i = 0; i < 21; i++) await queue('one', ['x']);

    const text = await scrape(server.port);
    const depths = samples(text, 'cerulean_queue_messages').join('\n');
    assert.equal(sample(text, 'cerulean_queue_messages', labels), 3, depths);
    assert.equal(sample(text, 'cerulean_queue_dequeue_count_max', labels), 2);
    const ageSeconds = sample(text, 'cerulean_queue_oldest_message_age_seconds', labels);
    assert.ok(ageSeconds !== undefined && ageSeconds >= 62 && ageSeconds < 62 + 600, `age ${ageSeconds}`);
    const otherLabels = { account: 'devstoreaccount1', queue: other.name };
    assert.equal(sample(text, 'cerulean_queue_messages', otherLabels), 2);
    assert.equal(sample(text, 'cerulean_queue_dequeue_count_max', otherLabels), 0);
    for (const name of ['messages', 'oldest_message_age_seconds', 'dequeue_count_max']) {
      const series = samples(text, `cerulean_queue_${name}`);
      assert.equal(series.length, 20, `${name}: the 20 deepest of 23 queues with messages\n${series.join('\n')}`);
      assert.ok(!series.some((line) => line.includes('queue="empty')), 'no series for an empty queue');
    }
  });

  test('insights: a poison backlog, and a message read five times and never deleted', async () => {
    const service = queueServiceClient(server);
    const orders = service.getQueueClient(uniqueQueueName('orders'));
    const poison = service.getQueueClient(`${orders.name}-poison`);
    for (const client of [orders, poison]) await client.create();
    await poison.sendMessage('failed five times');
    await orders.sendMessage('keeps failing');
    for (let read = 1; read <= 5; read++) {
      const [got] = (await orders.receiveMessages({ visibilityTimeout: 30 })).receivedMessageItems;
      assert.equal(got?.dequeueCount, read);
      clock.advance(31_000);
    }
    const { findings } = await insights(server.port);
    const about = (kind: string, queue: string) =>
      findings.find((finding) => finding.kind === kind && (finding as { queue?: string }).queue === queue);
    const backlog = about('poison-backlog', poison.name);
    assert.ok(backlog, JSON.stringify(findings));
    assert.equal(backlog.evidence['messages'], 1);
    assert.match(backlog.pattern, new RegExp(`cerulean queue move ${poison.name} ${orders.name}`));
    assert.equal(about('repeated-dequeue', orders.name)?.evidence['dequeueCountMax'], 5, JSON.stringify(findings));
    assert.equal(about('repeated-dequeue', poison.name), undefined, 'read once: no finding');
    const text = await scrape(server.port);
    assert.ok((sample(text, 'cerulean_insights_findings', { kind: 'poison-backlog' }) ?? 0) >= 1);
    const cli = await runCli(['insights', '-c', server.connectionString]);
    assert.equal(cli.code, 0, describeRun(cli));
    assert.match(cli.stdout, new RegExp(`^Queue devstoreaccount1/${poison.name}$`, 'm'));
  });
});
