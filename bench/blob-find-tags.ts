// Find Blobs by Tags as a container grows, side by side
// (https://learn.microsoft.com/rest/api/storageservices/find-blobs-by-tags-container): one container
// where 100 blobs carry `find = 'yes'` and every other blob `find = 'no'`, each blob also `seq = i`
// (8 digits); the container grows from the first size to the last (default 10,000 then 100,000
// blobs), and at each size three expressions that each name exactly 100 blobs are timed (`--runs`
// times each, the median kept; every answer must name exactly the 100):
// - equality: `"find"='yes'`;
// - range: `"seq">'00000099' AND "seq"<='00000199'`;
// - and: `"find"='yes' AND "seq"<'{first size}'` (the equality finds, the range filters).
// An index serves each in time independent of the container's size; a scan grows with it.
//
// Loading: `--load http` puts every blob through Put Blob with x-ms-tags (1-byte blobs, `--in-flight`
// at once): the same path for every server, and the only one Azurite has. On this path a busy
// machine loads a few hundred blobs a second, so 1,000,000 would take hours; `--load store` (the
// default) loads Cerulean's servers through the store contract instead, in the bench's own process
// while the server is stopped (tag-store-load.ts), and Azurite through HTTP only up to
// `--azurite-max` blobs (default 5,000): its sizes above that are left out. Above 5,000 Azurite
// (3.35) answers wrongly: it filters only the container's first 5,000 blobs by name and then ends
// the listing without a NextMarker (docs/performance.md, "Find Blobs by Tags as the container grows").
//
//   node dist/bench/blob-find-tags.js [--sizes 10000,100000,1000000] [--servers cerulean,cerulean-pg,azurite-disk]
//     [--runs 9] [--load store|http] [--in-flight 16] [--azurite-max 5000] [--keep DIR [--measure-only]]
//
// `--keep DIR` works in DIR and leaves it (SQLite's data stays for EXPLAIN QUERY PLAN); with
// CERULEAN_BENCH_DATABASE_URL the PostgreSQL databases stay too (bench/postgres.ts). `--measure-only`
// times the finds on what an earlier run with the same --keep left (--sizes: the one count it holds).
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BlobHttpClient } from './blob-client.js';
import { expectStatus, keepAliveAgent } from './client.js';
import { benchPostgres, type BenchPostgres } from './postgres.js';
import { childrenOf, clockTicksPerSecond, cpuTicks, postmasterOf } from './proc-stat.js';
import { postgresKinds, serverLabels, startServer, type BenchServer, type ServerKind } from './servers.js';
import { loadThroughStore, type TaggedBlobPlan } from './tag-store-load.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const requestTimeoutMs = 600_000;
const matching = 100;
const container = 'benchfind';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    servers: { type: 'string', default: 'cerulean,cerulean-pg,azurite-disk' },
    runs: { type: 'string', default: '9' },
    load: { type: 'string', default: 'store' },
    // As the other Blob preloads (blob-scenarios.ts): Azurite (disk) reset connections at 32.
    'in-flight': { type: 'string', default: '16' },
    'azurite-max': { type: 'string', default: '5000' },
    keep: { type: 'string' },
    'measure-only': { type: 'boolean', default: false },
  },
});
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);
const inFlight = Number(values['in-flight']);
const azuriteMax = Number(values['azurite-max']);
const loadPath = values.load;
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 200) || sizes.some((n, i) => i > 0 && n <= sizes[i - 1]!)) {
  throw new Error('--sizes: increasing counts of at least 200');
}
if (loadPath !== 'store' && loadPath !== 'http') throw new Error('--load: store or http');
const measureOnly = values['measure-only'];
if (measureOnly && (values.keep === undefined || sizes.length !== 1)) {
  throw new Error('--measure-only: with --keep DIR of an earlier run, and --sizes of the one count it holds');
}

const digits = 8;
const seqOf = (i: number): string => String(i).padStart(digits, '0');
/** Blob `i` matches `find = 'yes'` when it is one of 100 spread over the first size's names. */
const matches = (i: number): boolean => i < sizes[0]! && i % Math.floor(sizes[0]! / matching) === 0;
const plan: TaggedBlobPlan = {
  container,
  nameOf: (i) => `b${seqOf(i)}`,
  tagsOf: (i) => [
    ['find', matches(i) ? 'yes' : 'no'],
    ['seq', seqOf(i)],
  ],
};

// Each names exactly `matching` blobs at every size.
const expressions: readonly { readonly label: string; readonly where: string }[] = [
  { label: 'equality', where: `"find"='yes'` },
  { label: 'range', where: `"seq">'${seqOf(matching - 1)}' AND "seq"<='${seqOf(2 * matching - 1)}'` },
  { label: 'and', where: `"find"='yes' AND "seq"<'${seqOf(sizes[0]!)}'` },
];

async function loadThroughHttp(blob: BlobHttpClient, from: number, to: number): Promise<void> {
  let next = from;
  const lane = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      const tags = plan.tagsOf(i).map(([key, value]) => `${key}=${value}`);
      const headers = { 'x-ms-blob-type': 'BlockBlob', 'x-ms-tags': tags.join('&') };
      const put = () => blob.send({ method: 'PUT', resource: `${container}/${plan.nameOf(i)}`, headers, body: 'x' });
      // A kept-alive connection the server closed as the request went out (a loaded machine makes
      // that race likely): the put is idempotent, so it goes again, once.
      await expectStatus(
        'put blob',
        put().catch(async (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
          return put();
        }),
        201,
      );
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/** One Find Blobs by Tags in the container, following NextMarker; the blobs it named. */
async function find(blob: BlobHttpClient, where: string): Promise<number> {
  let marker = '';
  let found = 0;
  for (;;) {
    const query: Record<string, string> = { restype: 'container', comp: 'blobs', where };
    if (marker !== '') query.marker = marker;
    const answer = await expectStatus(
      'find blobs',
      blob.send({ method: 'GET', resource: container, query, readBody: true }),
      200,
    );
    found += answer.body.split('<Blob>').length - 1;
    marker = /<NextMarker>([^<]*)<\/NextMarker>/.exec(answer.body)?.[1] ?? '';
    if (marker === '') return found;
  }
}

function median(numbers: number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Timing {
  readonly medianMs: number;
  /** CPU time per find of the server's processes (and PostgreSQL's, for its kinds), ms. */
  readonly cpuMs: number;
}

interface Row {
  readonly kind: ServerKind;
  readonly size: number;
  /** Undefined: measured on the data it found (--measure-only). */
  readonly loadS: number | undefined;
  readonly timing: Readonly<Record<string, Timing>>;
}

interface Running {
  readonly server: BenchServer;
  readonly blob: BlobHttpClient;
}

/** Each expression `runs` times at the size loaded (after one untimed find); throws on a wrong answer. */
async function timeFinds(running: Running, postmaster: number | undefined, size: number): Promise<Row['timing']> {
  const pids = async () => [
    ...running.server.pids,
    ...(postmaster === undefined ? [] : [postmaster, ...(await childrenOf(postmaster))]),
  ];
  const timing: Record<string, Timing> = {};
  for (const { label, where } of expressions) {
    const times: number[] = [];
    await find(running.blob, where); // warm: the first after a restart reads cold pages
    const ticksBefore = await cpuTicks(await pids());
    for (let run = 0; run < runs; run++) {
      const t0 = performance.now();
      const found = await find(running.blob, where);
      times.push(performance.now() - t0);
      if (found !== matching) {
        throw new Error(
          `${running.server.kind} at ${size}, ${label}: WRONG ANSWER, ${found} blobs, expected ${matching}`,
        );
      }
    }
    const ticks = (await cpuTicks(await pids())) - ticksBefore;
    timing[label] = { medianMs: median(times), cpuMs: (ticks / clockTicksPerSecond / runs) * 1000 };
  }
  return timing;
}

/** Adds `row` to `rows` and says it on stderr as it comes. */
function reportRow(row: Row, rows: Row[]): void {
  rows.push(row);
  const line = expressions
    .map(({ label }) => {
      const { medianMs, cpuMs } = row.timing[label]!;
      return `${label} ${medianMs.toFixed(1)} ms (CPU ${cpuMs.toFixed(1)})`;
    })
    .join(', ');
  const loaded = row.loadS === undefined ? 'as kept' : `loaded in ${row.loadS.toFixed(0)} s`;
  process.stderr.write(`${serverLabels[row.kind]}: ${row.size} blobs ${loaded}; find ${line}\n`);
}

/** Measures `kind` at each size into `rows`, as it goes: a server that fails later keeps its rows. */
async function measureServer(
  kind: ServerKind,
  workRoot: string,
  postgres: BenchPostgres | undefined,
  rows: Row[],
): Promise<void> {
  const dataDir = path.join(workRoot, kind);
  await mkdir(dataDir, { recursive: true });
  const name = `find_${kind}`;
  const database = !postgresKinds.includes(kind)
    ? undefined
    : measureOnly
      ? postgres!.existing(name)
      : await postgres!.database(name);
  const postmaster = database === undefined ? undefined : await postmasterOf(new URL(database).port);
  const start = async (): Promise<Running> => {
    const server = await startServer(kind, repoRoot, dataDir, database);
    if (server.blob === undefined) {
      await server.stop();
      throw new Error(`${kind} serves no Blob service`);
    }
    return { server, blob: new BlobHttpClient(server.blob, keepAliveAgent(inFlight), requestTimeoutMs) };
  };
  const throughStore = loadPath === 'store' && kind.startsWith('cerulean');
  let running = await start();
  const report = (row: Row) => reportRow(row, rows);
  try {
    if (measureOnly) {
      report({ kind, size: sizes[0]!, loadS: undefined, timing: await timeFinds(running, postmaster, sizes[0]!) });
      return;
    }
    await expectStatus(
      'create container',
      running.blob.send({ method: 'PUT', resource: container, query: { restype: 'container' } }),
      201,
    );
    // The first blob through HTTP in every case: the store path copies its record's state.
    await loadThroughHttp(running.blob, 0, 1);
    let loaded = 1;
    for (const size of sizes) {
      if (kind.startsWith('azurite') && size > azuriteMax) {
        process.stderr.write(`${serverLabels[kind]}: ${size} blobs left out (--azurite-max ${azuriteMax})\n`);
        break;
      }
      const started = performance.now();
      if (throughStore) {
        await running.server.stop();
        const config = { location: database === undefined ? dataDir : undefined, database };
        await loadThroughStore(config, plan, loaded, size);
        running = await start();
      } else {
        await loadThroughHttp(running.blob, loaded, size);
      }
      const loadS = (performance.now() - started) / 1000;
      loaded = size;
      report({ kind, size, loadS, timing: await timeFinds(running, postmaster, size) });
    }
  } finally {
    await running.server.stop();
  }
}

const kinds = values.servers.split(',') as ServerKind[];
const workRoot =
  values.keep === undefined ? await mkdtemp(path.join(os.tmpdir(), 'cerulean-bench-find-')) : path.resolve(values.keep);
if (values.keep !== undefined) await mkdir(workRoot, { recursive: true });
let postgres: BenchPostgres | undefined;
const rows: Row[] = [];
try {
  if (kinds.some((kind) => postgresKinds.includes(kind))) postgres = await benchPostgres();
  for (const kind of kinds) {
    try {
      await measureServer(kind, workRoot, postgres, rows);
    } catch (error) {
      process.stderr.write(`${serverLabels[kind]}: n/a (${error instanceof Error ? error.message : String(error)})\n`);
    }
  }
} finally {
  postgres?.stop();
  if (values.keep === undefined) await rm(workRoot, { recursive: true, force: true });
}

const lines = [
  `Find Blobs by Tags, ${matching} of the container's blobs matching, median of ${runs} runs, ms ` +
    "(× Azurite (disk) ÷ this); CPU: ms of CPU per find of the server (with PostgreSQL's for its kinds):",
  '',
  ...expressions.map(({ label, where }) => `- ${label}: \`${where}\``),
  '',
  loadPath === 'store'
    ? "Loaded through the store (Cerulean's servers) and Put Blob (Azurite)."
    : 'Loaded through Put Blob.',
  '',
  `| server | blobs | load (s) | ${expressions.map(({ label }) => `${label} | CPU`).join(' | ')} |`,
  `| --- | ---: | ---: | ${expressions.map(() => '---: | ---:').join(' | ')} |`,
];
for (const row of rows) {
  const azurite = rows.find((other) => other.kind === 'azurite-disk' && other.size === row.size);
  const cells = expressions.map(({ label }) => {
    const { medianMs, cpuMs } = row.timing[label]!;
    const ratio =
      azurite === undefined || row.kind === 'azurite-disk'
        ? ''
        : ` (${(azurite.timing[label]!.medianMs / medianMs).toFixed(1)}×)`;
    return `${medianMs.toFixed(1)}${ratio} | ${cpuMs.toFixed(1)}`;
  });
  const load = row.loadS === undefined ? 'kept' : row.loadS.toFixed(0);
  lines.push(`| ${serverLabels[row.kind]} | ${row.size} | ${load} | ${cells.join(' | ')} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
