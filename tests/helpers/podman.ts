// The container image's tests (tests/system/image/): podman, the image built once (cached by its content
// hash, scripts/image/build.mjs), and podman's Docker-compatible API on a socket of our own, for
// Testcontainers. Without podman the tests skip, loudly, unless CI is set: then they fail, as the
// PostgreSQL tests do (scripts/test.mjs).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type * as Build from '../../scripts/image/build.mjs';
import type * as Engine from '../../scripts/image/engine.mjs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

// From dist/tests/helpers/ at run time: the modules live in the repository, not in dist/.
const build = (await import(new URL('../../../scripts/image/build.mjs', import.meta.url).href)) as typeof Build;
const engine = (await import(new URL('../../../scripts/image/engine.mjs', import.meta.url).href)) as typeof Engine;
export const { imageName, serviceUser } = build;

/** Environment for podman: this project's containers.conf (runc, cgroupfs, no default ulimits). */
export const podmanEnv: NodeJS.ProcessEnv = { ...process.env, CONTAINERS_CONF: engine.containersConf };

function hasPodman(): boolean {
  return spawnSync('podman', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * `false` when podman is here; the reason to skip when it is not (and CI is unset). Under CI, a missing
 * podman is a failure: .ci/run installs it.
 */
export function podmanSkip(): false | string {
  if (hasPodman()) return false;
  const missing = 'podman is not installed (apt-get install podman runc mmdebstrap): the image tests are SKIPPED';
  if (process.env.CI) throw new Error(`${missing.split(':')[0]} and CI is set: failing`);
  process.stderr.write(`\n*** ${missing} ***\n\n`);
  return missing;
}

/** `podman ARGS`: its stdout; throws with its output when it fails. */
export function podman(args: readonly string[], timeoutMs = 120_000): string {
  const run = spawnSync('podman', [...args], { env: podmanEnv, encoding: 'utf8', timeout: timeoutMs });
  if (run.status !== 0)
    throw new Error(`podman ${args.join(' ')}: ${run.status ?? run.signal}\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

let ensured: Promise<void> | undefined;

/** Builds `cerulean:local` unless the image with this content is there, once per process (suites share it). */
export function ensureImage(): Promise<void> {
  ensured ??= buildOnce();
  return ensured;
}

/** Builds or keeps the image; says which and how long it took. */
async function buildOnce(): Promise<void> {
  const started = Date.now();
  const { built, hash } = await build.buildImage();
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  process.stderr.write(`image ${imageName} ${built ? 'built' : 'up to date'} (${hash.slice(0, 16)}) in ${seconds} s\n`);
}

export interface PodmanService {
  /** `unix:///…/podman.sock`, for DOCKER_HOST. */
  readonly dockerHost: string;
  stop(): Promise<void>;
}

/** `podman system service` on a socket in `dir`, answering the Docker API; resolves once it answers. */
export async function startPodmanService(dir: string): Promise<PodmanService> {
  const socket = join(dir, 'podman.sock');
  const dockerHost = `unix://${socket}`;
  const child: ChildProcess = spawn('podman', ['system', 'service', '--time=0', dockerHost], {
    env: podmanEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!(existsSync(socket) && (await pings(socket)))) {
    if (Date.now() > deadline) throw new Error(`podman system service on ${socket} does not answer: ${stderr}`);
    await sleep(100);
  }
  return {
    dockerHost,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Whether the Docker API on `socket` answers GET /_ping with 200. */
function pings(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ socketPath: socket, path: '/_ping' }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.once('error', () => resolve(false));
  });
}
