// Which container engine builds and runs the image: podman (with this project's containers.conf, unless
// CONTAINERS_CONF names another), else docker; undefined when neither is on PATH.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** runc, cgroupfs and no default ulimits: what podman needs on this project's machines (see the file). */
export const containersConf = join(dirname(fileURLToPath(import.meta.url)), 'containers.conf');

function onPath(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Runs `command`: its stdout; throws with its output when it fails. */
export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...options });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** `{ name, command, env }`: run `command` with `env` (the whole environment). */
export function containerEngine() {
  if (onPath('podman')) {
    return {
      name: 'podman',
      command: 'podman',
      env: { ...process.env, CONTAINERS_CONF: process.env.CONTAINERS_CONF ?? containersConf },
    };
  }
  if (onPath('docker')) return { name: 'docker', command: 'docker', env: { ...process.env } };
  return undefined;
}
