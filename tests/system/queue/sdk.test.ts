// The Queue service through the official JS SDK (@azure/storage-queue) with a connection string
// naming the server's queue endpoint, as a user of UseDevelopmentStorage=true has it: every
// operation, on SQLite and on PostgreSQL. Time moves through the test clock, never by sleeping
// for minutes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AccountSASPermissions,
  generateAccountSASQueryParameters,
  QueueClient,
  QueueSASPermissions,
  QueueServiceClient,
  StorageSharedKeyCredential,
} from '@azure/storage-queue';
import { refused } from '../../helpers/rest-errors.js';
import { TestClock, queueServiceClient, uniqueQueueName } from '../../helpers/queue.js';
import { devAccount, devKey, type RunningServer, serverEngines, startServer } from '../../helpers/server.js';

/** What each case works with: the SDK's service client over one server, and that server's clock. */
interface Context {
  readonly service: QueueServiceClient;
  readonly clock: TestClock;
}

async function freshQueue({ service }: Context, prefix = 'q'): Promise<QueueClient> {
  const queue = service.getQueueClient(uniqueQueueName(prefix));
  await queue.create();
  return queue;
}

async function createAndDelete(context: Context): Promise<void> {
  const { service } = context;
  const queue = service.getQueueClient(uniqueQueueName());
  assert.equal((await queue.create({ metadata: { Color: 'blue' } }))._response.status, 201);
  assert.equal((await queue.create({ metadata: { color: 'blue' } }))._response.status, 204);
  await refused(queue.create({ metadata: { color: 'red' } }), 409, 'QueueAlreadyExists');
  assert.equal((await queue.createIfNotExists({ metadata: { Color: 'blue' } })).succeeded, false);
  await queue.delete();
  await refused(queue.delete(), 404, 'QueueNotFound');
  await refused(queue.getProperties(), 404, 'QueueNotFound');
  await refused(service.getQueueClient('Bad_Name').create(), 400, 'InvalidResourceName');
}

async function metadataAndCount(context: Context): Promise<void> {
  const queue = await freshQueue(context);
  await queue.setMetadata({ Owner: 'me', n: '1' });
  await queue.sendMessage('one');
  await queue.sendMessage('two', { visibilityTimeout: 60 });
  const properties = await queue.getProperties();
  assert.deepEqual(properties.metadata, { owner: 'me', n: '1' });
  assert.equal(properties.approximateMessagesCount, 2);
}

async function listQueues(context: Context): Promise<void> {
  const { service } = context;
  const prefix = uniqueQueueName('list');
  const names = [1, 2, 3, 4, 5].map((i) => `${prefix}-${i}`);
  for (const name of names) await service.createQueue(name, { metadata: { i: name.slice(-1) } });
  const seen: string[] = [];
  let pages = 0;
  for await (const page of service.listQueues({ prefix, includeMetadata: true }).byPage({ maxPageSize: 2 })) {
    pages++;
    assert.ok((page.queueItems ?? []).length <= 2);
    for (const item of page.queueItems ?? []) {
      seen.push(item.name);
      assert.equal(item.metadata?.['i'], item.name.slice(-1));
    }
  }
  assert.deepEqual(seen, names);
  assert.equal(pages, 3);
  const withoutMetadata = await service.listQueues({ prefix }).byPage().next();
  assert.equal(withoutMetadata.value.queueItems[0].metadata, undefined);
}

async function messageLifecycle(context: Context): Promise<void> {
  const queue = await freshQueue(context);
  const sent = await queue.sendMessage('hello <&> ☺');
  assert.equal(sent._response.status, 201);
  assert.ok(sent.messageId && sent.popReceipt);
  assert.ok(sent.expiresOn.getTime() - sent.insertedOn.getTime() === 7 * 24 * 3600 * 1000);
  const peeked = await queue.peekMessages();
  assert.equal(peeked.peekedMessageItems[0]?.messageText, 'hello <&> ☺');
  assert.equal(peeked.peekedMessageItems[0]?.dequeueCount, 0);
  const received = await queue.receiveMessages({ visibilityTimeout: 30 });
  const message = received.receivedMessageItems[0]!;
  assert.equal(message.messageId, sent.messageId);
  assert.equal(message.dequeueCount, 1);
  assert.equal((await queue.receiveMessages()).receivedMessageItems.length, 0, 'invisible for 30 s');
  const updated = await queue.updateMessage(message.messageId, message.popReceipt, 'changed', 0);
  assert.ok(updated.popReceipt && updated.popReceipt !== message.popReceipt);
  await refused(queue.deleteMessage(message.messageId, message.popReceipt), 400, 'PopReceiptMismatch');
  const again = (await queue.receiveMessages()).receivedMessageItems[0]!;
  assert.equal(again.messageText, 'changed');
  assert.equal(again.dequeueCount, 2);
  await queue.deleteMessage(again.messageId, again.popReceipt);
  await refused(queue.deleteMessage(again.messageId, again.popReceipt), 404, 'MessageNotFound');
  for (let i = 0; i < 5; i++) await queue.sendMessage(`m${i}`);
  assert.equal((await queue.receiveMessages({ numberOfMessages: 32 })).receivedMessageItems.length, 5);
  await queue.clearMessages();
  assert.equal((await queue.getProperties()).approximateMessagesCount, 0);
}

async function visibilityAndExpiry(context: Context): Promise<void> {
  const { clock } = context;
  const queue = await freshQueue(context);
  await queue.sendMessage('later', { visibilityTimeout: 120, messageTimeToLive: 600 });
  await queue.sendMessage('forever', { messageTimeToLive: -1 });
  const forever = (await queue.peekMessages()).peekedMessageItems[0]!;
  assert.equal(forever.messageText, 'forever');
  assert.equal(forever.expiresOn.toUTCString(), 'Fri, 31 Dec 9999 23:59:59 GMT');
  clock.advance(121_000);
  const visible = (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText);
  assert.deepEqual(visible.sort(), ['forever', 'later']);
  const got = (await queue.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 1 })).receivedMessageItems;
  assert.equal(got.length, 2);
  clock.advance(2_000);
  assert.equal((await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.length, 2, 'visible again');
  clock.advance(600_000);
  const left = (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText);
  assert.deepEqual(left, ['forever'], 'the 10-minute message expired');
}

async function updateAndExpiry(context: Context): Promise<void> {
  const { clock } = context;
  const queue = await freshQueue(context);
  const sent = await queue.sendMessage('short-lived', { messageTimeToLive: 60 });
  const message = (await queue.receiveMessages({ visibilityTimeout: 30 })).receivedMessageItems[0]!;
  // Invisible past its expiry: taken, as the service takes it (see QueueService.updateMessage).
  const updated = await queue.updateMessage(message.messageId, message.popReceipt, undefined, 120);
  assert.equal(updated._response.status, 204);
  assert.ok(updated.nextVisibleOn!.getTime() > sent.expiresOn.getTime());
  clock.advance(61_000);
  // Expired, still invisible: an update or delete with its current pop receipt finds no message.
  await refused(queue.updateMessage(message.messageId, updated.popReceipt!, 'late', 0), 404, 'MessageNotFound');
  await refused(queue.deleteMessage(message.messageId, updated.popReceipt!), 404, 'MessageNotFound');
  const other = await queue.sendMessage('visible, then expired', { messageTimeToLive: 10 });
  clock.advance(11_000);
  await refused(queue.updateMessage(other.messageId, other.popReceipt, 'late', 0), 404, 'MessageNotFound');
  assert.equal((await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.length, 0);
  assert.equal((await queue.getProperties()).approximateMessagesCount, 0);
}

async function accessPolicies(context: Context): Promise<void> {
  const queue = await freshQueue(context);
  const startsOn = new Date('2024-01-01T00:00:00Z');
  const expiresOn = new Date('2099-01-01T00:00:00Z');
  await queue.setAccessPolicy([{ id: 'p1', accessPolicy: { permissions: 'raup', startsOn, expiresOn } }]);
  const { signedIdentifiers } = await queue.getAccessPolicy();
  assert.equal(signedIdentifiers.length, 1);
  assert.equal(signedIdentifiers[0]!.id, 'p1');
  assert.equal(signedIdentifiers[0]!.accessPolicy?.permissions, 'raup');
  assert.equal(signedIdentifiers[0]!.accessPolicy?.expiresOn?.toISOString(), expiresOn.toISOString());
  const six = [1, 2, 3, 4, 5, 6].map((i) => ({ id: `p${i}`, accessPolicy: { permissions: 'r' } }));
  await refused(queue.setAccessPolicy(six), 400, 'InvalidXmlDocument');
  await queue.setAccessPolicy([]);
  assert.equal((await queue.getAccessPolicy()).signedIdentifiers.length, 0);
}

async function serviceProperties(context: Context): Promise<void> {
  const { service } = context;
  const cors = [
    {
      allowedOrigins: 'http://example.test',
      allowedMethods: 'GET,PUT',
      allowedHeaders: '*',
      exposedHeaders: '*',
      maxAgeInSeconds: 60,
    },
  ];
  assert.equal((await service.setProperties({ cors }))._response.status, 202);
  const properties = await service.getProperties();
  assert.equal(properties.cors?.[0]?.allowedOrigins, 'http://example.test');
  assert.equal(properties.hourMetrics?.enabled, false);
  const stats = await service.getStatistics();
  assert.equal(stats.geoReplication?.status, 'live');
}

async function sharedAccessSignatures(context: Context): Promise<void> {
  const { service } = context;
  const queue = await freshQueue(context, 'sas');
  const expiresOn = new Date(Date.now() + 3600_000);
  const addOnly = new QueueClient(
    await queue.generateSasUrl({ permissions: QueueSASPermissions.parse('a'), expiresOn }),
  );
  await addOnly.sendMessage('by sas');
  await refused(addOnly.receiveMessages(), 403, 'AuthorizationPermissionMismatch');
  const processor = new QueueClient(
    await queue.generateSasUrl({ permissions: QueueSASPermissions.parse('rp'), expiresOn }),
  );
  const [message] = (await processor.receiveMessages()).receivedMessageItems;
  assert.equal(message?.messageText, 'by sas');
  await processor.deleteMessage(message!.messageId, message!.popReceipt);
  const other = service.getQueueClient(uniqueQueueName('other'));
  await other.create();
  const wrongQueue = new QueueClient(addOnly.url.replace(queue.name, other.name));
  await refused(wrongQueue.sendMessage('x'), 403, 'AuthenticationFailed');

  await queue.setAccessPolicy([{ id: 'readers', accessPolicy: { permissions: 'r', expiresOn } }]);
  const byPolicy = new QueueClient(await queue.generateSasUrl({ identifier: 'readers' }));
  assert.equal((await byPolicy.peekMessages()).peekedMessageItems.length, 0);

  const accountUrl = service.generateAccountSasUrl(expiresOn, AccountSASPermissions.parse('rlacup'), 'sco');
  const account = new QueueServiceClient(accountUrl);
  const created = account.getQueueClient(uniqueQueueName('acct'));
  await created.create();
  await created.sendMessage('via account sas');
  assert.ok((await account.listQueues().byPage().next()).value.queueItems.length > 0);
  await refused(created.delete(), 403, 'AuthorizationPermissionMismatch');
  const tableOnly = generateAccountSASQueryParameters(
    { expiresOn, permissions: AccountSASPermissions.parse('rl'), services: 't', resourceTypes: 's' },
    new StorageSharedKeyCredential(devAccount, devKey),
  ).toString();
  const forTables = new QueueServiceClient(`${service.url}?${tableOnly}`);
  await refused(forTables.getProperties(), 403, 'AuthorizationServiceMismatch');
}

/**
 * Any positive time to live since version 2017-07-29: one past the year 9999 is stored as "never"
 * and shows 9999-12-31T23:59:59Z, as -1 does; a month's TTL keeps its exact expiry.
 */
async function timeToLiveOfAnySize(context: Context): Promise<void> {
  const queue = await freshQueue(context, 'ttl');
  const neverExpires = new Date(Date.UTC(9999, 11, 31, 23, 59, 59));
  const sent = await queue.sendMessage('huge', { messageTimeToLive: Number.MAX_SAFE_INTEGER });
  assert.deepEqual(sent.expiresOn, neverExpires);
  const month = 31 * 24 * 60 * 60;
  const monthly = await queue.sendMessage('month', { messageTimeToLive: month });
  assert.equal(monthly.expiresOn.getTime() - monthly.insertedOn.getTime(), month * 1000);
  const forever = await queue.sendMessage('forever', { messageTimeToLive: -1 });
  assert.deepEqual(forever.expiresOn, neverExpires);
  const peeked = (await queue.peekMessages({ numberOfMessages: 3 })).peekedMessageItems;
  assert.deepEqual(
    peeked.map((item) => [item.messageText, item.expiresOn.getTime() - item.insertedOn.getTime() === month * 1000]),
    [
      ['huge', false],
      ['month', true],
      ['forever', false],
    ],
  );
  assert.deepEqual(peeked[0]!.expiresOn, neverExpires);
  // Ten years on, the huge one is still there; the month's is gone.
  context.clock.advance(10 * 366 * 24 * 60 * 60 * 1000);
  const received = (await queue.receiveMessages({ numberOfMessages: 3 })).receivedMessageItems;
  assert.deepEqual(
    received.map((item) => item.messageText),
    ['huge', 'forever'],
  );
  assert.deepEqual(received[0]!.expiresOn, neverExpires);
  await refused(queue.sendMessage('zero', { messageTimeToLive: 0 }), 400, 'InvalidQueryParameterValue');
}

const cases: readonly [string, (context: Context) => Promise<void>][] = [
  ['create: 201, the same again 204, other metadata 409 QueueAlreadyExists; delete', createAndDelete],
  ['metadata and the approximate message count', metadataAndCount],
  ['list queues: prefix, pages with continuation, metadata on request', listQueues],
  ['send, peek, receive, update, delete, clear', messageLifecycle],
  ['visibility and expiry follow the clock', visibilityAndExpiry],
  ['update: a visibility past the expiry is taken; an expired message is 404 MessageNotFound', updateAndExpiry],
  ['stored access policies', accessPolicies],
  ['service properties, CORS, stats', serviceProperties],
  ['service SAS (generateSasUrl) and account SAS (generateAccountSasUrl)', sharedAccessSignatures],
  ['a time to live of any size: Number.MAX_SAFE_INTEGER, a month, -1', timeToLiveOfAnySize],
];

for (const engine of serverEngines) {
  describe(`queues through the JS SDK on ${engine.label}`, () => {
    const clock = new TestClock();
    let server: RunningServer;
    let context: Context;
    before(async () => {
      server = await startServer({ ...engine.options, env: clock.env });
      context = { service: queueServiceClient(server), clock };
    });
    after(async () => {
      await server?.stop();
    });
    for (const [name, run] of cases) test(name, () => run(context));
  });
}
