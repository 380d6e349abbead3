// Shared by the tests: one server of each kind per test file, clients with optional fault injection.
import { after, before } from 'node:test';
import type { TableClient } from '@azure/data-tables';
import { connect, ensureTable, type RetryPolicy } from '../src/index.js';
import { faultInjectionPolicy, seededRandom, type FaultOptions } from '../src/testing.js';
import { serverKinds, startServer, uniqueTableName, type ServerKind, type TestServer } from './servers.js';

/** Starts Cerulean and Azurite for the file's tests (before) and stops them (after). */
export function serversForFile(): Map<ServerKind, TestServer> {
  const servers = new Map<ServerKind, TestServer>();
  before(async () => {
    const started = await Promise.all(serverKinds.map((kind) => startServer(kind)));
    for (const server of started) servers.set(server.kind, server);
  });
  after(async () => {
    await Promise.all([...servers.values()].map((server) => server.stop()));
  });
  return servers;
}

export { serverKinds, seededRandom };

/** A new table on `server`, optionally behind a fault-injection policy. */
export async function newTable(
  server: TestServer,
  prefix: string,
  faults?: Omit<FaultOptions, 'random'> & { seed: number },
) {
  const injected = faults && faultInjectionPolicy({ ...faults, random: seededRandom(faults.seed) });
  const name = uniqueTableName(prefix);
  const client: TableClient = connect(
    server.connectionString,
    name,
    injected ? { additionalPolicies: [{ policy: injected.policy, position: 'perRetry' }] } : {},
  );
  if (injected) injected.enabled.value = false;
  await ensureTable(client);
  if (injected) injected.enabled.value = true;
  return { client, name, faults: injected };
}

/** Retries fast and often enough to ride out a high injected failure rate, reproducibly. */
export function testRetry(seed: number): RetryPolicy {
  return { maxAttempts: 20, baseDelayMs: 2, maxDelayMs: 40, random: seededRandom(seed) };
}
