// Tier changes and seals under kill -9, on SQLite and PostgreSQL: writers cycle the tiers of blobs of
// their own with Set Blob Tier, others create, append to and seal append blobs, until the server
// gets SIGKILL a random moment after every writer had an acknowledgement. After a restart on the
// same data, each blob's tier is its last acknowledged one or the one in flight at the kill, every
// acknowledged seal holds, and a rehydration acknowledged before the load is still pending, then
// done once the test clock passes its end (its end time is stored, nothing ran to finish it).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blobSend, uniqueContainerName } from '../../helpers/blob.js';
import { storeEngines } from '../../helpers/blob-store-check.js';
import { loadUntilKilled, type KillPlan } from '../../helpers/kill-under-load.js';
import { TestClock } from '../../helpers/queue.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const writers = 3;
const killDelayMaxMs = 1_000;
const firstAcksWithinMs = 60_000;
const rehydrateMs = 60 * 60 * 1000;
const cycle = ['Cool', 'Cold', 'Hot'] as const;

interface TierLedger {
  readonly name: string;
  acked: string | undefined;
  inFlight: string | undefined;
}

interface SealLedger {
  readonly prefix: string;
  readonly sealed: string[];
}

async function expectStatus(response: ReturnType<typeof blobSend>, status: number, what: string): Promise<void> {
  const answer = await response;
  assert.equal(answer.status, status, `${what}: ${answer.text}`);
}

async function cycleTiers(server: RunningServer, container: string, ledger: TierLedger, stop: () => boolean) {
  for (let i = 0; !stop(); i++) {
    const tier = cycle[i % cycle.length]!;
    ledger.inFlight = tier;
    const headers = { 'x-ms-access-tier': tier };
    await expectStatus(
      blobSend(server, { method: 'PUT', target: `${container}/${ledger.name}?comp=tier`, headers }),
      200,
      tier,
    );
    ledger.acked = tier;
  }
}

async function sealAppendBlobs(server: RunningServer, container: string, ledger: SealLedger, stop: () => boolean) {
  for (let i = 0; !stop(); i++) {
    const target = `${container}/${ledger.prefix}-${i}`;
    await expectStatus(
      blobSend(server, { method: 'PUT', target, headers: { 'x-ms-blob-type': 'AppendBlob' } }),
      201,
      target,
    );
    await expectStatus(
      blobSend(server, { method: 'PUT', target: `${target}?comp=appendblock`, body: 'x' }),
      201,
      target,
    );
    await expectStatus(blobSend(server, { method: 'PUT', target: `${target}?comp=seal` }), 200, target);
    ledger.sealed.push(target);
  }
}

async function propertiesOf(server: RunningServer, target: string) {
  const answer = await blobSend(server, { method: 'HEAD', target });
  assert.equal(answer.status, 200, target);
  return answer.headers;
}

/** A blob archived and then rehydrating to Cool (202), before the load starts. */
async function startRehydration(server: RunningServer, container: string): Promise<string> {
  const target = `${container}/rehydrating`;
  await expectStatus(
    blobSend(server, { method: 'PUT', target, headers: { 'x-ms-blob-type': 'BlockBlob' }, body: 'r' }),
    201,
    target,
  );
  const tier = (value: string) => ({
    method: 'PUT',
    target: `${target}?comp=tier`,
    headers: { 'x-ms-access-tier': value },
  });
  await expectStatus(blobSend(server, tier('Archive')), 200, 'Archive');
  await expectStatus(blobSend(server, tier('Cool')), 202, 'Cool');
  return target;
}

function killPlan(server: RunningServer, container: string, tiers: TierLedger[], seals: SealLedger[]): KillPlan {
  return {
    writers: [
      ...tiers.map((ledger) => (stop: () => boolean) => cycleTiers(server, container, ledger, stop)),
      ...seals.map((ledger) => (stop: () => boolean) => sealAppendBlobs(server, container, ledger, stop)),
    ],
    waiting: () => tiers.some((l) => l.acked === undefined) || seals.some((l) => l.sealed.length === 0),
    killDelayMaxMs,
    firstAcksWithinMs,
  };
}

for (const engine of storeEngines) {
  describe(`tier and seal crash on ${engine.label}`, () => {
    test('kill -9 under Set Blob Tier and Append Blob Seal: acknowledged changes hold', async (t) => {
      const { options, cleanup } = await engine.data();
      const clock = new TestClock();
      const serverOptions = { ...options, env: clock.env, args: ['--blob-rehydrate-delay', String(rehydrateMs)] };
      const container = uniqueContainerName('tiercrash');
      const tiers = Array.from({ length: writers }, (_, i): TierLedger => ({
        name: `tiered-${i}`,
        acked: undefined,
        inFlight: undefined,
      }));
      const seals = Array.from({ length: writers }, (_, i): SealLedger => ({ prefix: `sealed-${i}`, sealed: [] }));
      try {
        const first = await startServer(serverOptions);
        let rehydrating: string;
        try {
          await expectStatus(
            blobSend(first, { method: 'PUT', target: `${container}?restype=container` }),
            201,
            'container',
          );
          for (const { name } of tiers) {
            const put = {
              method: 'PUT',
              target: `${container}/${name}`,
              headers: { 'x-ms-blob-type': 'BlockBlob' },
              body: 'v',
            };
            await expectStatus(blobSend(first, put), 201, name);
          }
          rehydrating = await startRehydration(first, container);
          await loadUntilKilled(first, killPlan(first, container, tiers, seals));
        } catch (error) {
          // A failure before the kill must not leave the server running.
          if (first.process.exitCode === null && first.process.signalCode === null) await first.kill9();
          throw error;
        }
        t.diagnostic(`${seals.reduce((sum, l) => sum + l.sealed.length, 0)} seals acknowledged before the kill`);

        const second = await startServer(serverOptions);
        try {
          for (const ledger of tiers) {
            const tier = (await propertiesOf(second, `${container}/${ledger.name}`))['x-ms-access-tier'];
            assert.ok(
              tier === ledger.acked || tier === ledger.inFlight,
              `${ledger.name}: ${tier}, acked ${ledger.acked}`,
            );
          }
          for (const target of seals.flatMap((l) => l.sealed)) {
            assert.equal((await propertiesOf(second, target))['x-ms-blob-sealed'], 'true', target);
          }
          const pending = await propertiesOf(second, rehydrating);
          assert.equal(pending['x-ms-archive-status'], 'rehydrate-pending-to-cool');
          clock.advance(rehydrateMs);
          const done = await propertiesOf(second, rehydrating);
          assert.deepEqual([done['x-ms-access-tier'], done['x-ms-archive-status']], ['Cool', undefined]);
        } finally {
          await second.stop();
        }
      } finally {
        await cleanup();
      }
    });
  });
}
