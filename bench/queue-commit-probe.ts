// Where a Put Message's time goes on Cerulean on SQLite: one server on disk, C workers putting
// into one queue for a few seconds, then per round the throughput, the server's CPU time per put
// (/proc/PID/stat, the writer thread included) and, from /_metrics, the group commits: how many
// puts each one carried and how long its transaction plus fsync took.
//   node dist/bench/queue-commit-probe.js [--concurrency 16] [--seconds 3] [--rounds 3]
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { expectStatus, keepAliveAgent } from './client.js';
import { clockTicksPerSecond, cpuTicks } from './proc-stat.js';
import { QueueHttpClient } from './queue-client.js';
import { startServer, type BenchServer } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const putBody = `<QueueMessage><MessageText>${'x'.repeat(64)}</MessageText></QueueMessage>`;

interface CommitTotals {
  readonly commits: number;
  readonly writes: number;
  readonly seconds: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      concurrency: { type: 'string', default: '16' },
      seconds: { type: 'string', default: '3' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const [concurrency, seconds, rounds] = [values.concurrency, values.seconds, values.rounds].map(Number) as [
    number,
    number,
    number,
  ];
  const workRoot = await mkdtemp(path.join(os.tmpdir(), 'cerulean-queue-probe-'));
  let server: BenchServer | undefined;
  try {
    server = await startServer('cerulean', repoRoot, workRoot);
    const queue = new QueueHttpClient(server.queue!, keepAliveAgent(concurrency), 60_000);
    await expectStatus('create queue', queue.send({ method: 'PUT', resource: 'probe' }), 201);
    for (let round = 1; round <= rounds; round++) {
      const before = await commitTotals(server);
      const cpuBefore = await cpuTicks(server.pids);
      const writtenBefore = await bytesWritten(server.pids[0]!);
      const started = performance.now();
      let puts = 0;
      const worker = async (): Promise<void> => {
        while (performance.now() - started < seconds * 1000) {
          await expectStatus('put', queue.send({ method: 'POST', resource: 'probe/messages', body: putBody }), 201);
          puts++;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      const elapsedS = (performance.now() - started) / 1000;
      const cpuS = ((await cpuTicks(server.pids)) - cpuBefore) / clockTicksPerSecond;
      const after = await commitTotals(server);
      const writtenKiB = ((await bytesWritten(server.pids[0]!)) - writtenBefore) / 1024;
      const commits = after.commits - before.commits;
      process.stdout.write(
        `round ${round}: ${Math.round(puts / elapsedS)} puts/s, ${Math.round((cpuS * 1e6) / puts)} µs server CPU/put, ` +
          `${commits} commits, ${((after.writes - before.writes) / commits).toFixed(1)} writes/commit, ` +
          `${(((after.seconds - before.seconds) * 1000) / commits).toFixed(2)} ms/commit, ` +
          `${(writtenKiB / commits).toFixed(1)} KiB written/commit, load ${os.loadavg()[0]!.toFixed(2)}\n`,
      );
    }
  } finally {
    await server?.stop();
    await rm(workRoot, { recursive: true, force: true });
  }
}

/** Bytes the process caused to be written to storage (/proc/PID/io write_bytes). */
async function bytesWritten(pid: number): Promise<number> {
  const io = await readFile(`/proc/${pid}/io`, 'utf8');
  return Number(/^write_bytes: (\d+)$/m.exec(io)?.[1] ?? NaN);
}

async function commitTotals(server: BenchServer): Promise<CommitTotals> {
  const text = await new Promise<string>((resolve, reject) => {
    http
      .get({ host: server.endpoint.host, port: server.endpoint.port, path: '/_metrics' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  const value = (name: string): number => Number(new RegExp(`^\\S*${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    commits: value('commit_duration_seconds_count'),
    writes: value('commit_group_writes_sum'),
    seconds: value('commit_duration_seconds_sum'),
  };
}

await main();
