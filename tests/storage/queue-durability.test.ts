// Queue durability under kill -9: a child process (tests/helpers/queue-load.ts) puts, gets and
// deletes from several loops at once and is killed with SIGKILL mid-load; the stores opened again
// hold every message whose put was acknowledged, except those whose delete was acknowledged,
// which stay deleted. On SQLite on disk and on PostgreSQL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { openEngine } from '../../src/storage/engine.js';
import { createDatabase, dropDatabase, postgresUnavailable } from '../helpers/postgres.js';

const childScript = path.join(import.meta.dirname, '..', 'helpers', 'queue-load.js');
/** Acknowledged puts before the kill: enough that many writes are in flight when it lands. */
const putsBeforeKill = 600;

interface Acknowledged {
  readonly puts: Set<string>;
  readonly deletes: Set<string>;
  /** Deletes sent: those unacknowledged at the kill may or may not have applied. */
  readonly deleting: Set<string>;
}

/** Runs the child against `target` until it has acknowledged enough, then kills it with SIGKILL. */
async function loadThenKill(target: string): Promise<Acknowledged> {
  const child = spawn(process.execPath, [childScript, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  const acknowledged: Acknowledged = { puts: new Set(), deletes: new Set(), deleting: new Set() };
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  for await (const line of createInterface({ input: child.stdout })) {
    const [what, id] = line.split(' ');
    if (what === 'put') acknowledged.puts.add(id!);
    if (what === 'deleted') acknowledged.deletes.add(id!);
    if (what === 'deleting') acknowledged.deleting.add(id!);
    if (acknowledged.puts.size === putsBeforeKill) child.kill('SIGKILL');
  }
  assert.equal(await exited, 'SIGKILL', 'the child ran until it was killed');
  return acknowledged;
}

async function checkSurvivors(
  config: { location: string | undefined; database: string | undefined },
  acked: Acknowledged,
) {
  const stores = await openEngine(config);
  try {
    const peeked = await stores.queues.peekMessages('acct', 'load', {
      count: 1_000_000,
      nowMs: Number.MAX_SAFE_INTEGER,
    });
    assert.ok(peeked.ok);
    const present = new Set(peeked.value.map((message) => message.id));
    for (const id of acked.deletes) assert.ok(!present.has(id), `acknowledged delete of ${id} undone`);
    const lost = [...acked.puts].filter((id) => !acked.deleting.has(id) && !present.has(id));
    assert.deepEqual(lost, [], 'acknowledged puts lost');
    assert.ok(acked.deletes.size > 0, 'the load deleted too');
  } finally {
    await stores.close();
  }
}

test('SQLite on disk: kill -9 mid-load loses no acknowledged put and undoes no acknowledged delete', async () => {
  const location = mkdtempSync(path.join(os.tmpdir(), 'cerulean-queue-kill-'));
  try {
    const acked = await loadThenKill(location);
    await checkSurvivors({ location, database: undefined }, acked);
  } finally {
    rmSync(location, { recursive: true, force: true });
  }
});

const unavailable = postgresUnavailable();
test(
  'PostgreSQL: kill -9 mid-load loses no acknowledged put and undoes no acknowledged delete',
  { skip: unavailable },
  async () => {
    const url = await createDatabase();
    try {
      const acked = await loadThenKill(url);
      await checkSurvivors({ location: undefined, database: url }, acked);
    } finally {
      await dropDatabase(url);
    }
  },
);
