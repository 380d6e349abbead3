// Turns the runs into the best-of-rounds table: JSON for tools, markdown for people.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { UploadMemoryRecord } from './blob-memory.js';
import { blobTransferSection, uploadMemorySection } from './blob-report.js';
import { milliseconds, opsPerSec, ratio } from './format.js';
import type { LoadResult } from './load.js';
import { serverLabels, type ServerKind } from './servers.js';

export interface RunRecord {
  scenario: string;
  concurrency: number;
  server: ServerKind;
  round: number;
  result?: LoadResult;
  /** Why there is no result ("crashed: …", "did not start: …", "prepare failed: …"). */
  unavailable?: string;
  wrongAnswer?: string;
  /** What the scenario's preparation saw (PreparedRun.note). */
  note?: string;
  /**
   * The server processes' CPU time (/proc/PID/stat) over the whole run, per operation started:
   * what a busy shared machine disturbs far less than throughput.
   */
  serverCpuMsPerOp?: number;
}

export interface Cell {
  best?: LoadResult;
  bestRound?: number;
  unavailable?: string;
}

export interface SummaryRow {
  scenario: string;
  concurrency: number;
  cells: Partial<Record<ServerKind, Cell>>;
  /** Cerulean ops/s divided by on-disk Azurite's (the reference). */
  ratioVsAzuriteDisk?: number;
  /** Cerulean ops/s divided by in-memory Azurite's (informational). */
  ratioVsAzuriteMemory?: number;
  /** Cerulean on PostgreSQL (one process) ops/s divided by on-disk Azurite's. */
  postgresVsAzuriteDisk?: number;
  /** Cerulean on PostgreSQL (one process) ops/s divided by Cerulean on SQLite's. */
  postgresVsSqlite?: number;
  /** Two processes over one PostgreSQL divided by one. */
  twoProcessesVsOne?: number;
}

export interface ReportMeta {
  command: string;
  startedAt: string;
  wallSeconds: number;
  node: string;
  cpus: string;
  loadAverageAtStart: number[];
  options: Record<string, unknown>;
  /** What one operation of each scenario is. */
  scenarios: Record<string, string>;
  preloadSeconds: Record<string, number>;
  /** Server kinds that could not be started, with the reason. */
  notStarted: Record<string, string>;
  /** Bytes one operation moves, for the blob transfer scenarios. */
  bytesPerOperation?: Record<string, number>;
}

export interface Report {
  meta: ReportMeta;
  summary: SummaryRow[];
  runs: RunRecord[];
  /** The resident memory of each server during a 1 GiB upload, when measured. */
  uploadMemory?: UploadMemoryRecord[];
}

const comparedServers: readonly ServerKind[] = ['cerulean', 'azurite-disk', 'azurite-memory'];
const postgresServers: readonly ServerKind[] = ['cerulean-pg', 'cerulean-pg-2'];

/** Per scenario and concurrency, each server's round with the most ops/s. */
export function summarize(runs: readonly RunRecord[]): SummaryRow[] {
  const rows = new Map<string, SummaryRow>();
  for (const run of runs) {
    const id = `${run.scenario}\u0000${run.concurrency}`;
    let row = rows.get(id);
    if (row === undefined) {
      row = { scenario: run.scenario, concurrency: run.concurrency, cells: {} };
      rows.set(id, row);
    }
    const cell = (row.cells[run.server] ??= {});
    const result = run.result;
    if (result !== undefined && result.ops > 0) {
      if (cell.best === undefined || result.opsPerSec > cell.best.opsPerSec) {
        cell.best = result;
        cell.bestRound = run.round;
      }
    } else if (cell.best === undefined) {
      const failure = result?.firstError;
      cell.unavailable = run.unavailable ?? (failure ? `no operation succeeded: ${failure}` : 'no operation completed');
    }
  }
  for (const row of rows.values()) {
    for (const cell of Object.values(row.cells)) if (cell.best) delete cell.unavailable;
    const cerulean = row.cells.cerulean?.best?.opsPerSec;
    const disk = row.cells['azurite-disk']?.best?.opsPerSec;
    const memory = row.cells['azurite-memory']?.best?.opsPerSec;
    if (cerulean !== undefined && disk !== undefined) row.ratioVsAzuriteDisk = cerulean / disk;
    if (cerulean !== undefined && memory !== undefined) row.ratioVsAzuriteMemory = cerulean / memory;
    const postgres = row.cells['cerulean-pg']?.best?.opsPerSec;
    const postgresTwo = row.cells['cerulean-pg-2']?.best?.opsPerSec;
    if (postgres !== undefined && disk !== undefined) row.postgresVsAzuriteDisk = postgres / disk;
    if (postgres !== undefined && cerulean !== undefined) row.postgresVsSqlite = postgres / cerulean;
    if (postgres !== undefined && postgresTwo !== undefined) row.twoProcessesVsOne = postgresTwo / postgres;
  }
  return [...rows.values()];
}

export function renderMarkdown(report: Report): string {
  const { meta, summary, runs } = report;
  const lines: string[] = [
    '# Cerulean vs Azurite',
    '',
    `\`${meta.command}\` — started ${meta.startedAt}, ${Math.round(meta.wallSeconds)} s wall time; ` +
      `node ${meta.node}; ${meta.cpus}; ` +
      `load average at start ${meta.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}.`,
    '',
    "Each cell is the best of the rounds (highest ops/s, with that round's latencies); rounds ran interleaved " +
      '(Cerulean, Azurite memory, Azurite disk, then the reverse). Ratio = Cerulean ops/s ÷ Azurite ops/s: ' +
      '> 1 means Cerulean is faster. On-disk Azurite is the reference; in-memory Azurite is informational. ' +
      'The machine is shared and noisy: compare ratios within one run only.',
    '',
  ];
  const bytes = meta.bytesPerOperation ?? {};
  const transfers = summary.filter((row) => bytes[row.scenario] !== undefined);
  lines.push(
    ...comparedSection(summary.filter((row) => bytes[row.scenario] === undefined)),
    ...blobTransferSection(transfers, bytes),
    ...uploadMemorySection(report.uploadMemory ?? []),
    ...postgresSection(summary),
    ...versusSection(
      summary,
      'cerulean-unobserved',
      `What metrics and insights cost (${serverLabels.cerulean} as it runs by default ÷ ${serverLabels['cerulean-unobserved']}):`,
      '--no-metrics',
    ),
    ...versusSection(
      summary,
      'cerulean-other',
      `This build ÷ ${serverLabels['cerulean-other']} (best round of each):`,
      'other build',
    ),
    ...serverCpuSection(runs, 'cerulean-other'),
    ...ceilingSection(summary.filter((row) => bytes[row.scenario] === undefined)),
  );
  lines.push(
    'Scenarios (one operation is):',
    '',
    ...Object.entries(meta.scenarios).map(([name, summary]) => `- ${name}: ${summary}`),
    '',
  );
  const notes = runNotes(runs, meta);
  if (notes.length > 0) lines.push('Notes:', '', ...notes.map((note) => `- ${note}`), '');
  return lines.join('\n');
}

/** Cerulean against both Azurites, one row per scenario and concurrency. */
function comparedSection(summary: readonly SummaryRow[]): string[] {
  const lines: string[] = [];
  const compared = summary.filter((row) => comparedServers.some((server) => row.cells[server] !== undefined));
  if (compared.length > 0) {
    lines.push(
      '| scenario | C | Cerulean ops/s | p50 ms | p99 ms | Azurite disk ops/s | p50 ms | p99 ms | ratio vs disk ' +
        '| Azurite mem ops/s | p50 ms | p99 ms | ratio vs mem |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const row of compared) {
      lines.push(
        `| ${row.scenario} | ${row.concurrency} | ${cellColumns(row.cells.cerulean)} | ` +
          `${cellColumns(row.cells['azurite-disk'])} | ${ratio(row.ratioVsAzuriteDisk)} | ` +
          `${cellColumns(row.cells['azurite-memory'])} | ${ratio(row.ratioVsAzuriteMemory)} |`,
      );
    }
    lines.push('');
  }
  return lines;
}

/** Cerulean on PostgreSQL, one and two processes. */
function postgresSection(summary: readonly SummaryRow[]): string[] {
  const lines: string[] = [];
  const onPostgres = summary.filter((row) => postgresServers.some((server) => row.cells[server] !== undefined));
  if (onPostgres.length > 0) {
    lines.push(
      'Cerulean on PostgreSQL (one PostgreSQL on loopback; two processes: the client sends requests round-robin to both):',
      '',
      '| scenario | C | PG ops/s | p50 ms | p99 ms | PG ×2 ops/s | p50 ms | p99 ms | PG ÷ Azurite disk | PG ÷ SQLite | ×2 ÷ ×1 |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...onPostgres.map(
        (row) =>
          `| ${row.scenario} | ${row.concurrency} | ${cellColumns(row.cells['cerulean-pg'])} | ${cellColumns(row.cells['cerulean-pg-2'])} | ` +
          `${ratio(row.postgresVsAzuriteDisk)} | ${ratio(row.postgresVsSqlite)} | ${ratio(row.twoProcessesVsOne)} |`,
      ),
      '',
    );
  }
  return lines;
}

/** Cerulean as it runs by default against another Cerulean (`other`): a ratio above 1 is it faster. */
function versusSection(summary: readonly SummaryRow[], other: ServerKind, title: string, otherName: string): string[] {
  const compared = summary.filter((row) => row.cells[other] !== undefined);
  if (compared.length === 0) return [];
  return [
    title,
    '',
    `| scenario | C | Cerulean ops/s | p50 ms | p99 ms | ${otherName} ops/s | p50 ms | p99 ms | ratio |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...compared.map((row) => {
      const mine = row.cells.cerulean?.best?.opsPerSec;
      const theirs = row.cells[other]?.best?.opsPerSec;
      const quotient = mine !== undefined && theirs !== undefined ? mine / theirs : undefined;
      return `| ${row.scenario} | ${row.concurrency} | ${cellColumns(row.cells.cerulean)} | ${cellColumns(row.cells[other])} | ${ratio(quotient)} |`;
    }),
    '',
  ];
}

/**
 * Server CPU per operation, the median of each build's rounds, against another Cerulean: on a busy
 * machine this moves far less than throughput. A ratio below 1 is this build cheaper.
 */
function serverCpuSection(runs: readonly RunRecord[], other: ServerKind): string[] {
  const cpuOf = (scenario: string, concurrency: number, server: ServerKind): number[] =>
    runs
      .filter((run) => run.scenario === scenario && run.concurrency === concurrency && run.server === server)
      .flatMap((run) => (run.serverCpuMsPerOp === undefined ? [] : [run.serverCpuMsPerOp]));
  const cases = [
    ...new Set(runs.filter((run) => run.server === other).map((run) => `${run.scenario}\u0000${run.concurrency}`)),
  ];
  const rows = cases.flatMap((key) => {
    const [scenario, concurrency] = key.split('\u0000') as [string, string];
    const mine = median(cpuOf(scenario, Number(concurrency), 'cerulean'));
    const theirs = median(cpuOf(scenario, Number(concurrency), other));
    if (mine === undefined || theirs === undefined) return [];
    return [`| ${scenario} | ${concurrency} | ${mine.toFixed(3)} | ${theirs.toFixed(3)} | ${ratio(mine / theirs)} |`];
  });
  if (rows.length === 0) return [];
  return [
    `Server CPU per operation, median of the rounds (this build ÷ ${serverLabels[other]}; below 1 is cheaper):`,
    '',
    '| scenario | C | this build ms/op | other ms/op | ratio |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ];
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The bare node:http ceiling. */
function ceilingSection(summary: readonly SummaryRow[]): string[] {
  const lines: string[] = [];
  const ceiling = summary.filter((row) => row.cells.bare !== undefined);
  if (ceiling.length > 0) {
    lines.push(
      `Ceiling (${serverLabels.bare}, same client, fixed small JSON reply):`,
      '',
      '| request shape | C | ops/s | p50 ms | p99 ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...ceiling.map((row) => `| ${row.scenario} | ${row.concurrency} | ${cellColumns(row.cells.bare)} |`),
      '',
    );
  }
  return lines;
}

export async function writeReport(
  directory: string,
  report: Report,
  name = 'latest',
): Promise<{ json: string; markdown: string }> {
  await mkdir(directory, { recursive: true });
  const json = path.join(directory, `${name}.json`);
  const markdown = path.join(directory, `${name}.md`);
  await writeFile(json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(markdown, renderMarkdown(report));
  return { json, markdown };
}

function cellColumns(cell: Cell | undefined): string {
  if (cell === undefined) return '– | – | –';
  if (cell.best === undefined) return `n/a (${shorten(cell.unavailable ?? 'no result')}) | – | –`;
  return `${opsPerSec(cell.best.opsPerSec)} | ${milliseconds(cell.best.p50Ms)} | ${milliseconds(cell.best.p99Ms)}`;
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function runNotes(runs: readonly RunRecord[], meta: ReportMeta): string[] {
  const notes = Object.entries(meta.notStarted).map(([kind, reason]) => `${kind} did not start: ${reason}`);
  for (const run of runs) {
    const where = `${run.scenario} C=${run.concurrency} round ${run.round} on ${run.server}`;
    if (run.unavailable !== undefined) notes.push(`${where}: ${run.unavailable}`);
    if (run.wrongAnswer !== undefined) notes.push(`${where}: WRONG ANSWER, ${run.wrongAnswer}`);
    if (run.note !== undefined) notes.push(`${where}: ${run.note}`);
    const result = run.result;
    if (result === undefined) continue;
    if (result.errors > 0) {
      notes.push(`${where}: ${result.errors} failed operations, first: ${shorten(result.firstError ?? '?')}`);
    }
    if (result.cutShort !== undefined) notes.push(`${where}: ${result.cutShort}`);
  }
  return notes;
}
