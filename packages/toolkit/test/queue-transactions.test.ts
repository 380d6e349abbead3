// The eventually consistent transactions pattern on real queues, against a Cerulean process that
// serves tables and queues: a message is deleted only after its steps succeeded; a worker that
// stops half-way leaves the message to reappear after its visibility timeout, and a second worker
// finishes it with the table state right exactly once; a message that always fails ends in
// `<queue>-poison` after the allowed number of deliveries.
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { TableClient } from '@azure/data-tables';
import { QueueServiceClient } from '@azure/storage-queue';
import {
  copyRowStep,
  enqueueWork,
  moveRowSteps,
  QueueWorker,
  rawPages,
  readRaw,
  wireString,
  type Delivery,
  type PassResult,
  type QueueWorkerOptions,
  type RowKeys,
} from '../src/index.js';
import { newTable } from './fixtures.js';
import { startServer, uniqueTableName, type TestServer } from './servers.js';

interface MoveWork {
  from: RowKeys;
  to: RowKeys;
}

let server: TestServer;
let service: QueueServiceClient;
before(async () => {
  server = await startServer('cerulean');
  service = QueueServiceClient.fromConnectionString(server.connectionString);
});
after(async () => server?.stop());

/** A worker on a fresh queue (and its poison queue). */
async function newWorker(options: QueueWorkerOptions<MoveWork>): Promise<QueueWorker<MoveWork>> {
  const worker = new QueueWorker<MoveWork>(service, uniqueTableName('q').toLowerCase(), options);
  await worker.ensureQueues();
  return worker;
}

/** Passes of `worker` until one receives a message (it may still be hidden), at most `timeoutMs`. */
async function passWithMessage(worker: QueueWorker<MoveWork>, timeoutMs = 60_000): Promise<PassResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pass = await worker.runOnce();
    if (pass.received > 0) return pass;
    assert.ok(Date.now() < deadline, 'no message became visible in time');
    await delay(200);
  }
}

async function rowsOf(client: TableClient) {
  const rows = [];
  for await (const page of rawPages(client, {})) rows.push(...page.items);
  return rows;
}

async function approximateCount(worker: QueueWorker<MoveWork>, poison = false): Promise<number> {
  const properties = await (poison ? worker.poison : worker.queue).getProperties();
  return properties.approximateMessagesCount ?? -1;
}

/** An employee row in `current` and the work message that archives it. */
async function setUp() {
  const current = (await newTable(server, 'Current')).client;
  const archive = (await newTable(server, 'Archive')).client;
  const from = { partitionKey: 'Sales', rowKey: 'employee 00000007' };
  await current.createEntity({ ...from, firstName: 'Ana', salary: { value: '41000', type: 'Int64' } });
  const work: MoveWork = { from, to: { partitionKey: '2026', rowKey: 'Sales employee 00000007' } };
  return { current, archive, from, work };
}

describe('eventually consistent transactions on a queue', () => {
  test('happy path: the steps run once, then the message is gone', async () => {
    const { current, archive, from, work } = await setUp();
    const worker = await newWorker({ handle: (w) => moveRowSteps(current, w.from, archive, w.to) });
    await enqueueWork(worker.queue, work);
    const pass = await worker.drain();
    assert.deepEqual(pass, { received: 1, done: 1, failed: 0, poisoned: 0 });
    assert.equal(await readRaw(current, from.partitionKey, from.rowKey), undefined);
    const archived = await readRaw(archive, work.to.partitionKey, work.to.rowKey);
    assert.equal(wireString(archived?.firstName), 'Ana');
    assert.equal(await approximateCount(worker), 0);
    assert.equal(await approximateCount(worker, true), 0);
  });

  test('a worker that stops after the first step: the message reappears and a second worker finishes', async () => {
    const { current, archive, from, work } = await setUp();
    const options = { visibilityTimeoutSeconds: 1, maxDequeueCount: 5 };
    // The first worker copies, then fails before the delete step and never deletes the message.
    const dying = await newWorker({
      ...options,
      handle: async (w) => {
        await copyRowStep(current, w.from, archive, w.to);
        throw new Error('worker died after the first step');
      },
    });
    await enqueueWork(dying.queue, work);
    assert.deepEqual(await dying.runOnce(), { received: 1, done: 0, failed: 1, poisoned: 0 });
    assert.equal(wireString((await readRaw(current, from.partitionKey, from.rowKey))?.firstName), 'Ana');
    // Meanwhile the employee changes: the repeat must archive this newer version, not the old copy.
    await current.updateEntity({ ...from, firstName: 'Ana', salary: { value: '52000', type: 'Int64' } }, 'Replace');

    const deliveries: Delivery[] = [];
    const second = new QueueWorker<MoveWork>(service, dying.queueName, {
      ...options,
      handle: async (w, delivery) => {
        deliveries.push(delivery);
        await moveRowSteps(current, w.from, archive, w.to);
      },
    });
    assert.deepEqual(await passWithMessage(second), { received: 1, done: 1, failed: 0, poisoned: 0 });
    assert.equal(deliveries.length, 1);
    assert.ok(deliveries[0]!.dequeueCount >= 2, 'the second worker got a redelivery');
    assert.equal(await readRaw(current, from.partitionKey, from.rowKey), undefined);
    const archived = await rowsOf(archive);
    assert.equal(archived.length, 1, 'exactly one archive row');
    assert.deepEqual(archived[0]!.salary, { value: '52000', type: 'Int64' });
    assert.equal(await approximateCount(second), 0);
    assert.equal(await approximateCount(second, true), 0);
  });

  test('a message that always fails lands in the poison queue after N deliveries', async () => {
    const maxDequeueCount = 3;
    const counts: number[] = [];
    const worker = await newWorker({
      visibilityTimeoutSeconds: 1,
      maxDequeueCount,
      handle: async (_w, delivery) => {
        counts.push(delivery.dequeueCount);
        throw new Error('always fails');
      },
    });
    const work: MoveWork = { from: { partitionKey: 'p', rowKey: 'r' }, to: { partitionKey: 'p', rowKey: 'r2' } };
    await enqueueWork(worker.queue, work);
    let poisoned = 0;
    while (poisoned === 0) poisoned = (await passWithMessage(worker)).poisoned;
    assert.deepEqual(counts, [1, 2, 3]);
    assert.equal(await approximateCount(worker), 0, 'the message left the source queue');
    const peeked = await worker.poison.peekMessages();
    assert.equal(peeked.peekedMessageItems.length, 1);
    assert.deepEqual(JSON.parse(peeked.peekedMessageItems[0]!.messageText), work);
  });

  test('a message delivered beyond the limit (its last worker died) is poisoned without another try', async () => {
    const failing = await newWorker({
      visibilityTimeoutSeconds: 1,
      handle: async () => {
        throw new Error('died on the last allowed delivery');
      },
    });
    const work: MoveWork = { from: { partitionKey: 'p', rowKey: 'r' }, to: { partitionKey: 'p', rowKey: 'r2' } };
    await enqueueWork(failing.queue, work);
    assert.equal((await failing.runOnce()).failed, 1);
    let handled = 0;
    const strict = new QueueWorker<MoveWork>(service, failing.queueName, {
      maxDequeueCount: 1,
      handle: async () => void handled++,
    });
    assert.deepEqual(await passWithMessage(strict), { received: 1, done: 0, failed: 0, poisoned: 1 });
    assert.equal(handled, 0);
    assert.equal((await strict.poison.peekMessages()).peekedMessageItems.length, 1);
  });

  test('a body that is not JSON fails every delivery and is poisoned as sent', async () => {
    let handled = 0;
    const worker = await newWorker({
      visibilityTimeoutSeconds: 1,
      maxDequeueCount: 1,
      handle: async () => void handled++,
    });
    await worker.queue.sendMessage('not json');
    assert.deepEqual(await passWithMessage(worker), { received: 1, done: 0, failed: 0, poisoned: 1 });
    assert.equal(handled, 0);
    const peeked = await worker.poison.peekMessages();
    assert.equal(peeked.peekedMessageItems[0]?.messageText, 'not json');
  });

  test('run() works messages as they arrive until aborted', async () => {
    const { current, archive, from, work } = await setUp();
    const stop = new AbortController();
    let done!: () => void;
    const completed = new Promise<void>((resolve) => (done = resolve));
    const worker = await newWorker({
      handle: (w) => moveRowSteps(current, w.from, archive, w.to),
      onOutcome: (outcome) => outcome === 'done' && done(),
    });
    const running = worker.run(stop.signal, 50);
    await enqueueWork(worker.queue, work);
    await completed;
    stop.abort();
    await running;
    assert.equal(await readRaw(current, from.partitionKey, from.rowKey), undefined);
    assert.equal((await rowsOf(archive)).length, 1);
  });

  test('a poison queue name must fit the 63-character limit', async () => {
    assert.throws(() => new QueueWorker(service, 'a'.repeat(57), { handle: async () => undefined }), RangeError);
  });
});
