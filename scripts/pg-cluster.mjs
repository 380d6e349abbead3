// Throwaway PostgreSQL clusters from Debian's server binaries: `npm test` (scripts/test.mjs) starts
// one for the whole run, the tests that restart or replicate the database start their own, and the
// benchmark starts one when it is given no database. initdb refuses root: as root, PostgreSQL runs
// as the `postgres` user over a directory it owns.
//
// Plain JavaScript with its types in pg-cluster.d.mts, as server-process.mjs (see there why): the
// tests (tests/helpers/pg-cluster.ts) and the benchmark load it at run time from the repository.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Promotes the standby at `data` to a primary; resolves once it accepts writes. */
export async function promote(bin, data) {
  const [file, argv] = isRoot
    ? ['runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', data, '-w', 'promote']]
    : [join(bin, 'pg_ctl'), ['-D', data, '-w', 'promote']];
  await promisify(execFile)(file, argv);
}

/** The newest Debian PostgreSQL's bin directory, if the server is installed. */
export function postgresBin() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(root, versions[0], 'bin');
}

/** A free loopback port below the ephemeral range (one inside it may be held by a client socket). */
export async function freePort() {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port for PostgreSQL');
}

const isRoot = process.getuid?.() === 0;

function asPostgresUser(command, args) {
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]];
  execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A new cluster's data directory: initdb, or a base backup of a primary that starts as its hot standby. */
function createDataDirectory(bin, data, standbyOf) {
  if (standbyOf === undefined) {
    // A C.UTF-8 default collation; the engine must not depend on it (its keys are bytea).
    const args = ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '-N'];
    asPostgresUser(join(bin, 'initdb'), args);
    return;
  }
  // -R writes standby.signal and primary_conninfo: the copy starts as a streaming hot standby.
  const primary = new URL(standbyOf);
  const args = ['-D', data, '-h', primary.hostname, '-p', primary.port, '-U', 'postgres', '-R', '-X', 'stream'];
  asPostgresUser(join(bin, 'pg_basebackup'), [...args, '-c', 'fast']);
}

/**
 * Starts a new cluster (or a hot standby: clusterOptions.standbyOf) on a free loopback port, with
 * trust authentication; see pg-cluster.d.mts for what it answers.
 */
export async function startCluster(bin, clusterOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'cerulean-pg-'));
  if (isRoot) {
    const id = (flag) => Number(execFileSync('id', [flag, 'postgres']).toString());
    chownSync(dir, id('-u'), id('-g'));
  }
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  const port = await freePort();
  createDataDirectory(bin, data, clusterOptions.standbyOf);
  const options = [
    ...(clusterOptions.settings ?? []).map((setting) => `-c ${setting}`),
    '-c listen_addresses=127.0.0.1',
    `-c port=${port}`,
    `-c unix_socket_directories=${dir}`,
    // Durable as in production: an acknowledged commit has reached the disk.
    '-c fsync=on',
    '-c synchronous_commit=on',
    '-c max_connections=300',
  ].join(' ');
  const pgCtl = join(bin, 'pg_ctl');
  // pg_ctl waits 60 s by default; a loaded machine can need more to start or stop the cluster.
  const wait = ['-w', '-t', '300'];
  const start = () => asPostgresUser(pgCtl, ['-D', data, '-l', join(dir, 'log'), '-o', options, ...wait, 'start']);
  const stop = () => asPostgresUser(pgCtl, ['-D', data, '-m', 'immediate', ...wait, 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    data,
    start,
    stop,
    destroy: () => {
      try {
        stop();
      } catch {
        // not running
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
