// A child process for the queue durability test (tests/storage/queue-durability.test.ts): opens
// the stores the way the server does (storage/engine.ts openEngine) and runs puts, gets and deletes from
// several loops at once until it is killed, printing each operation only once it is acknowledged:
// `put <id>` and `deleted <id>`; and `deleting <id>` before a delete is sent (it may apply
// unacknowledged). Usage: node queue-load.js <data directory | postgres URL>
import { openEngine } from '../../src/storage/engine.js';

const loops = 8;
const t0 = 1_800_000_000_000;
const target = process.argv[2]!;
const config = target.startsWith('postgres')
  ? { location: undefined, database: target }
  : { location: target, database: undefined };
const { queues } = await openEngine(config);
await queues.createQueue('acct', 'load', new Map());
process.stdout.write('ready\n');

let next = 0;

async function loop(worker: number): Promise<never> {
  for (let i = 0; ; i++) {
    const id = `w${worker}-${next++}`;
    const put = await queues.putMessage('acct', 'load', {
      id,
      text: `message ${id}`,
      insertedMs: t0,
      visibleMs: t0,
      expiresMs: Infinity,
    });
    if (!put.ok) throw new Error(`put failed: ${put.failure}`);
    // A pipe to the parent is written synchronously on Linux: the line is out before the next operation.
    process.stdout.write(`put ${id}\n`);
    if (i % 3 !== 2) continue;
    const got = await queues.getMessages('acct', 'load', { count: 1, nowMs: t0, visibleMs: t0 + 3_600_000 });
    const [claimed] = got.ok ? got.value : [];
    if (claimed === undefined) continue;
    process.stdout.write(`deleting ${claimed.id}\n`);
    const deleted = await queues.deleteMessage('acct', 'load', {
      id: claimed.id,
      popReceipt: claimed.popReceipt,
      nowMs: t0,
    });
    if (deleted.ok) process.stdout.write(`deleted ${claimed.id}\n`);
  }
}

await Promise.all(Array.from({ length: loops }, (_, worker) => loop(worker)));
