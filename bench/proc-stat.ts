// CPU time of processes from Linux's /proc/PID/stat: what a busy shared machine disturbs far less
// than throughput (bench/observe-cost.ts, bench/pg-cost.ts).
import { readdir, readFile } from 'node:fs/promises';

/** Linux clock ticks per second of /proc/PID/stat utime and stime. */
export const clockTicksPerSecond = 100;

/** The fields of /proc/PID/stat after the command name (field 3 on), or undefined once it is gone. */
async function statFields(pid: number | string): Promise<string[] | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of the processes still running, in clock ticks (/proc/PID/stat fields 14 and 15). */
export async function cpuTicks(pids: readonly number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    const fields = await statFields(pid);
    if (fields !== undefined) total += Number(fields[11]) + Number(fields[12]);
  }
  return total;
}

/** The processes whose parent is `pid`. */
export async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await processIds()) {
    const fields = await statFields(entry);
    if (fields !== undefined && Number(fields[1]) === pid) children.push(Number(entry));
  }
  return children;
}

/** The ids of every running process, as /proc lists them. */
export async function processIds(): Promise<string[]> {
  return (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
}

/** The resident set size of a process in KiB (/proc/PID/status VmRSS), or undefined once it is gone. */
export async function residentKiB(pid: number): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
  const match = status === undefined ? null : /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match === null ? undefined : Number(match[1]);
}

/** The postmaster listening on `port` (its command line names the port, as scripts/pg-cluster.mjs starts it). */
export async function postmasterOf(port: string): Promise<number | undefined> {
  for (const entry of await processIds()) {
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.startsWith('postgres') || cmdline.includes('/bin/postgres')) {
      if (cmdline.split('\0').some((arg) => arg.includes(`port=${port}`))) return Number(entry);
    }
  }
  return undefined;
}
