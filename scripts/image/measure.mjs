#!/usr/bin/env node
// The numbers of docs/container.md: for each way of running an emulator, the time from the command to
// Azurite's last listening line (`Azurite Table service is successfully listening`) and the resident
// memory of the server process after it has idled 10 s, as the median of three runs.
//
//   node scripts/image/measure.mjs [azurite-bin]
//
// Ways: the image under `podman run` (its PID 1's VmRSS), Cerulean as a process (`node bin/cerulean.js`),
// and, given the path of an `azurite` command (e.g. from `npm install --prefix /tmp/az azurite`), Azurite
// as a process. Each runs in memory-backed defaults of its own: on disk in a fresh directory.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { imageName } from './build.mjs';
import { containerEngine } from './engine.mjs';

const readyLine = 'Azurite Table service is successfully listening';
const idleMs = 10_000;
const engine = containerEngine();

/** Starts `command args`, resolves with the ms until `readyLine` and the child. */
function startTimed(command, args, env = process.env) {
  const started = performance.now();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk) => {
      seen += chunk.toString();
      if (seen.includes(readyLine)) resolve({ ms: performance.now() - started, child });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} exited (${code}) before it listened:\n${seen}`)));
  });
}

function rssKiB(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
}

async function measureProcess(command, args) {
  const dir = mkdtempSync(join(tmpdir(), 'cerulean-measure-'));
  try {
    const { ms, child } = await startTimed(command, [...args, dir]);
    await sleep(idleMs);
    const rss = rssKiB(child.pid);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    return { ms, rss };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measureContainer() {
  const name = `cerulean-measure-${process.pid}`;
  const { ms, child } = await startTimed(engine.command, ['run', '--rm', '--name', name, imageName], engine.env);
  await sleep(idleMs);
  const status = spawnSync(
    engine.command,
    ['exec', name, 'sh', '-c', 'while read -r l; do echo "$l"; done < /proc/1/status'],
    {
      encoding: 'utf8',
      env: engine.env,
    },
  ).stdout;
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]);
  spawnSync(engine.command, ['stop', name], { env: engine.env });
  await new Promise((resolve) => child.once('exit', resolve));
  return { ms, rss };
}

async function median(measure) {
  const runs = [];
  for (let i = 0; i < 3; i++) runs.push(await measure());
  const mid = (values) => values.sort((a, b) => a - b)[1];
  return { ms: mid(runs.map((run) => run.ms)), rss: mid(runs.map((run) => run.rss)) };
}

const ways = [
  [
    'Cerulean, process (node bin/cerulean.js -l DIR)',
    () => measureProcess(process.execPath, ['bin/cerulean.js', '-l']),
  ],
];
if (engine !== undefined) ways.unshift([`Cerulean, image ${imageName} (${engine.name} run)`, measureContainer]);
const azurite = process.argv[2];
if (azurite !== undefined) {
  ways.push([
    `Azurite, process (azurite --disableTelemetry -l DIR)`,
    () => measureProcess(azurite, ['--disableTelemetry', '-l']),
  ]);
}
process.stdout.write('| how | start-up to the listening lines | idle RSS |\n| --- | --- | --- |\n');
for (const [label, measure] of ways) {
  const { ms, rss } = await median(measure);
  process.stdout.write(`| ${label} | ${(ms / 1000).toFixed(2)} s | ${(rss / 1024).toFixed(0)} MiB |\n`);
}
