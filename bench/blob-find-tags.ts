// Find Blobs by Tags as a container grows, side by side
// (https://learn.microsoft.com/rest/api/storageservices/find-blobs-by-tags-container): one container
// where 100 blobs carry `find = 'yes'` and every other blob `find = 'no'`; the container grows from
// the first size to the last (default 10,000 then 100,000 blobs), and at each size
// `GET /{container}?restype=container&comp=blobs&where="find"='yes'` is timed (`--runs` times, the
// median kept; each answer must name exactly the 100). An index serves it in time independent of the
// container's size; a scan grows with it.
//
// Every server is loaded the same way, through Put Blob with x-ms-tags (1-byte blobs, 16 in flight):
// the same path for all, and the only one Azurite has. Loading 1,000,000 blobs so takes many minutes
// per server; pass `--sizes 10000,100000,1000000` to do it anyway.
//
//   node dist/bench/blob-find-tags.js [--sizes 10000,100000] [--servers cerulean,cerulean-pg,azurite-disk] [--runs 9]
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BlobHttpClient } from './blob-client.js';
import { expectStatus, keepAliveAgent } from './client.js';
import { benchPostgres, type BenchPostgres } from './postgres.js';
import { postgresKinds, serverLabels, startServer, type ServerKind } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const requestTimeoutMs = 600_000;
/** As the other Blob preloads (blob-scenarios.ts): Azurite (disk) reset connections at 32. */
const loadInFlight = 16;
const matching = 100;
const container = 'benchfind';
// No spaces: the bench client's query encoding writes a space as '+', which services read differently.
const where = `"find"='yes'`;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000' },
    servers: { type: 'string', default: 'cerulean,cerulean-pg,azurite-disk' },
    runs: { type: 'string', default: '9' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);
if (sizes.some((n) => !Number.isSafeInteger(n) || n < matching) || sizes.some((n, i) => i > 0 && n <= sizes[i - 1]!)) {
  throw new Error(`--sizes: increasing counts of at least ${matching}`);
}

/** Blob `i` matches when it is one of 100 spread over the first size's names. */
const matches = (i: number): boolean => i < sizes[0]! && i % Math.floor(sizes[0]! / matching) === 0;
const nameOf = (i: number): string => `b${String(i).padStart(8, '0')}`;

async function load(blob: BlobHttpClient, from: number, to: number): Promise<void> {
  let next = from;
  const lane = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      const headers = {
        'x-ms-blob-type': 'BlockBlob',
        'x-ms-tags': `find=${matches(i) ? 'yes' : 'no'}&seq=${i}`,
      };
      const put = blob.send({ method: 'PUT', resource: `${container}/${nameOf(i)}`, headers, body: 'x' });
      await expectStatus('put blob', put, 201);
    }
  };
  await Promise.all(Array.from({ length: loadInFlight }, lane));
}

/** One Find Blobs by Tags in the container, following NextMarker; the blobs it named. */
async function find(blob: BlobHttpClient): Promise<number> {
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

interface Row {
  readonly kind: ServerKind;
  readonly size: number;
  readonly medianMs: number;
  readonly loadS: number;
}

/** Measures `kind` at each size into `rows`, as it goes: a server that fails later keeps its rows. */
async function measureServer(
  kind: ServerKind,
  workRoot: string,
  postgres: BenchPostgres | undefined,
  rows: Row[],
): Promise<void> {
  const dataDir = path.join(workRoot, kind);
  await mkdir(dataDir);
  const database = postgresKinds.includes(kind) ? await postgres!.database(`find_${kind}`) : undefined;
  const server = await startServer(kind, repoRoot, dataDir, database);
  try {
    if (server.blob === undefined) throw new Error(`${kind} serves no Blob service`);
    const blob = new BlobHttpClient(server.blob, keepAliveAgent(loadInFlight), requestTimeoutMs);
    await expectStatus(
      'create container',
      blob.send({ method: 'PUT', resource: container, query: { restype: 'container' } }),
      201,
    );
    let loaded = 0;
    for (const size of sizes) {
      const started = performance.now();
      await load(blob, loaded, size);
      const loadS = (performance.now() - started) / 1000;
      loaded = size;
      const times: number[] = [];
      for (let run = 0; run < runs; run++) {
        const t0 = performance.now();
        const found = await find(blob);
        times.push(performance.now() - t0);
        if (found !== matching)
          throw new Error(`${kind} at ${size}: WRONG ANSWER, ${found} blobs, expected ${matching}`);
      }
      const row = { kind, size, medianMs: median(times), loadS };
      process.stderr.write(
        `${serverLabels[kind]}: ${size} blobs loaded in ${loadS.toFixed(0)} s; find ${row.medianMs.toFixed(1)} ms\n`,
      );
      rows.push(row);
    }
  } finally {
    await server.stop();
  }
}

const kinds = values.servers.split(',') as ServerKind[];
const workRoot = await mkdtemp(path.join(os.tmpdir(), 'cerulean-bench-find-'));
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
  await rm(workRoot, { recursive: true, force: true });
}

const lines = [
  `Find Blobs by Tags, ${matching} of the container's blobs matching (${where}), median of ${runs} runs:`,
  '',
  '| server | blobs | find (ms) | vs Azurite (disk) |',
  '| --- | ---: | ---: | ---: |',
];
for (const row of rows) {
  const azurite = rows.find((other) => other.kind === 'azurite-disk' && other.size === row.size);
  const ratio = azurite === undefined ? 'n/a' : `${(azurite.medianMs / row.medianMs).toFixed(1)}× faster`;
  lines.push(
    `| ${serverLabels[row.kind]} | ${row.size} | ${row.medianMs.toFixed(1)} | ${row.kind === 'azurite-disk' ? '—' : ratio} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
