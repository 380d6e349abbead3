// The Queue service's read-access secondary on a real hot standby (--secondary-database): the
// `{account}-secondary` endpoint peeks from the standby once its LastSyncTime passes a put, refuses
// Get Messages (a GET that claims messages) like any write, and the official JS SDK's retry to its
// secondaryHost still peeks while the primary database is stopped.
import dns from 'node:dns';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueueClient, StorageSharedKeyCredential } from '@azure/storage-queue';
import { postgresBin, startCluster, type Cluster } from '../../helpers/pg-cluster.js';
import { postgresUnavailable } from '../../helpers/postgres.js';
import {
  assertQueueError,
  childText,
  queuePort,
  queueSend,
  queueServiceClient,
  uniqueQueueName,
  xmlOf,
} from '../../helpers/queue.js';
import { devAccount, devKey, startServer, type RunningServer } from '../../helpers/server.js';

const bin = postgresBin();
const skip = postgresUnavailable() ?? (bin === undefined ? 'SKIPPED: no PostgreSQL server binaries' : undefined);
const statsPattern = /<Status>(\w+)<\/Status><LastSyncTime>([^<]*)<\/LastSyncTime>/;

/** The secondary queue endpoint's LastSyncTime (ms), undefined while the standby has not caught up once. */
async function lastSyncMs(server: RunningServer): Promise<number | undefined> {
  const res = await queueSend(server, { method: 'GET', target: '?restype=service&comp=stats', secondary: true });
  assert.equal(res.status, 200, res.text);
  const [, status, time] = statsPattern.exec(res.text) ?? assert.fail(`no GeoReplication in ${res.text}`);
  assert.notEqual(status, 'unavailable');
  return time === '' ? undefined : Date.parse(time!);
}

/** Waits until every write acknowledged before `writtenMs` is readable on the standby. */
async function syncedPast(server: RunningServer, writtenMs: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (((await lastSyncMs(server)) ?? 0) <= writtenMs) {
    assert.ok(Date.now() < deadline, 'LastSyncTime did not pass the put');
    await sleep(200);
  }
}

/** The message texts a peek of `queue` on the secondary (or the primary) answers. */
async function peekTexts(server: RunningServer, queue: string, secondary: boolean): Promise<string[]> {
  const res = await queueSend(server, { method: 'GET', target: `${queue}/messages?peekonly=true`, secondary });
  assert.equal(res.status, 200, res.text);
  return xmlOf(res).children.map((message) => childText(message, 'MessageText') ?? '');
}

/**
 * Names under `.localhost` resolve to the loopback address (RFC 6761), in this test process only:
 * the SDK's secondaryHost replaces the URL's host, so its endpoints must be host-style names.
 */
function resolveLocalhostNames(): () => void {
  const original = dns.lookup;
  const patched = (hostname: string, options: unknown, callback?: unknown): void => {
    if (!hostname.endsWith('.localhost')) {
      (original as (...args: unknown[]) => void)(hostname, options, callback);
      return;
    }
    const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
    process.nextTick(() => (all ? done(null, [{ address: '127.0.0.1', family: 4 }]) : done(null, '127.0.0.1', 4)));
  };
  dns.lookup = patched as typeof dns.lookup;
  return () => {
    dns.lookup = original;
  };
}

describe('the queue secondary endpoint on a hot standby', { skip }, () => {
  let primary: Cluster;
  let standby: Cluster;
  let server: RunningServer;
  let restoreLookup: () => void;
  before(async () => {
    restoreLookup = resolveLocalhostNames();
    primary = await startCluster(bin!);
    standby = await startCluster(bin!, { standbyOf: primary.url });
    server = await startServer({
      database: primary.url,
      args: ['--secondary-database', standby.url, '--log-level', 'warn'],
    });
  });
  after(async () => {
    await server?.stop();
    primary?.destroy();
    standby?.destroy();
    restoreLookup?.();
  });

  test('a put is peeked on the secondary once LastSyncTime passes it', async () => {
    const queue = queueServiceClient(server).getQueueClient(uniqueQueueName('peek'));
    await queue.create();
    await queue.sendMessage('replicated');
    await syncedPast(server, Date.now());
    assert.deepEqual(await peekTexts(server, queue.name, true), ['replicated']);
  });

  test('Get Messages on the secondary is refused and dequeues nothing', async () => {
    const queue = queueServiceClient(server).getQueueClient(uniqueQueueName('get'));
    await queue.create();
    await queue.sendMessage('kept');
    await syncedPast(server, Date.now());
    const res = await queueSend(server, { method: 'GET', target: `${queue.name}/messages`, secondary: true });
    assertQueueError(res, 403, 'InsufficientAccountPermissions');
    const peeked = await queue.peekMessages();
    assert.equal(peeked.peekedMessageItems.length, 1, 'the message is still visible on the primary');
    assert.equal(peeked.peekedMessageItems[0]!.dequeueCount, 0);
  });

  test('with the primary database down, the JS SDK peeks from its secondaryHost', async () => {
    const name = uniqueQueueName('fallback');
    const url = `http://${devAccount}.queue.localhost:${queuePort(server)}/${name}`;
    const queue = new QueueClient(url, new StorageSharedKeyCredential(devAccount, devKey), {
      retryOptions: { secondaryHost: `${devAccount}-secondary.queue.localhost`, maxTries: 3, retryDelayInMs: 100 },
    });
    await queue.create();
    await queue.sendMessage('from the standby');
    await syncedPast(server, Date.now());
    primary.stop();
    try {
      const peeked = await queue.peekMessages();
      assert.deepEqual(
        peeked.peekedMessageItems.map((message) => message.messageText),
        ['from the standby'],
      );
    } finally {
      primary.start();
    }
  });
});
