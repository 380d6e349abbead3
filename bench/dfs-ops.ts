// Data Lake path operations against the same work through the Blob API, on one on-disk Cerulean
// server (SQLite): the rename of a directory holding N files (Rename Path, one request) beside
// Copy Blob + Delete Blob of each blob, and List Paths (recursive) beside List Blobs of the same N
// names, both paged 5,000 at a time. Each size is a fresh tree of empty files in 10 subfolders.
// Usage: node dist/bench/dfs-ops.js [--sizes 10,1000,10000] [--blob-max 10000] [--report dfs-ops]
// Writes bench/results/<report>.md. Sizes above --blob-max skip the Blob API's rename (N copies).
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './servers.js';
import { SignedHttpClient } from './signed-client.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const flag = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1]!;
};
const sizes = flag('--sizes', '10,1000,10000').split(',').map(Number);
const blobRenameMax = Number(flag('--blob-max', '10000'));
const report = flag('--report', 'dfs-ops');
/** Requests in flight when a step sends one per blob (populating, copying, deleting). */
const inFlight = 32;
const requestTimeoutMs = 600_000;

type Client = SignedHttpClient;

async function expect(client: Client, status: number, request: Parameters<Client['send']>[0]) {
  const response = await client.send(request);
  if (response.status !== status)
    throw new Error(`${request.method} ${request.resource}: ${response.status} ${response.body.slice(0, 300)}`);
  return response;
}

async function eachInFlight(count: number, job: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

const fileName = (root: string, i: number) => `${root}/sub${i % 10}/f${i}`;

/** A file system with the directory `root` (a Data Lake directory) and `count` empty files under it. */
async function populate(client: Client, container: string, root: string, count: number): Promise<void> {
  await expect(client, 201, { method: 'PUT', resource: container, query: { resource: 'filesystem' } });
  await expect(client, 201, { method: 'PUT', resource: `${container}/${root}`, query: { resource: 'directory' } });
  await eachInFlight(count, (i) =>
    expect(client, 201, {
      method: 'PUT',
      resource: `${container}/${fileName(root, i)}`,
      headers: { 'x-ms-blob-type': 'BlockBlob' },
      body: '',
    }),
  );
}

async function seconds(work: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Every page of a listing; the names counted. */
async function listAll(client: Client, container: string, datalake: boolean): Promise<number> {
  let count = 0;
  let marker = '';
  for (;;) {
    const query: Record<string, string> = datalake
      ? { resource: 'filesystem', recursive: 'true', maxResults: '5000' }
      : { restype: 'container', comp: 'list', maxresults: '5000' };
    if (marker !== '') query[datalake ? 'continuation' : 'marker'] = marker;
    const response = await expect(client, 200, { method: 'GET', resource: container, query, readBody: true });
    if (datalake) {
      count += (JSON.parse(response.body) as { paths: unknown[] }).paths.length;
      marker = String(response.headers['x-ms-continuation'] ?? '');
    } else {
      count += response.body.split('<Blob>').length - 1;
      marker = /<NextMarker>([^<]*)<\/NextMarker>/.exec(response.body)?.[1] ?? '';
    }
    if (marker === '') return count;
  }
}

interface Row {
  readonly files: number;
  readonly step: string;
  readonly datalakeSeconds: number;
  readonly blobSeconds: number | undefined;
}

async function measure(client: Client, origin: string, files: number): Promise<Row[]> {
  const [dfs, blob] = [`dfs${files}x${Date.now()}`, `blob${files}x${Date.now()}`];
  await populate(client, dfs, 'r', files);
  const listPaths = await seconds(() => listAll(client, dfs, true));
  const rename = await seconds(() =>
    expect(client, 201, {
      method: 'PUT',
      resource: `${dfs}/moved`,
      query: { mode: 'legacy' },
      headers: { 'x-ms-rename-source': `/${dfs}/r` },
    }),
  );
  let blobRename: number | undefined;
  let listBlobs: number | undefined;
  if (files <= blobRenameMax) {
    await populate(client, blob, 'r', files);
    listBlobs = await seconds(() => listAll(client, blob, false));
    const names = ['r', ...Array.from({ length: files }, (_, i) => fileName('r', i))];
    blobRename = await seconds(() =>
      eachInFlight(names.length, async (i) => {
        const name = names[i]!;
        const moved = `moved${name.slice(1)}`;
        await expect(client, 202, {
          method: 'PUT',
          resource: `${blob}/${moved}`,
          headers: { 'x-ms-copy-source': `${origin}/${blob}/${name}` },
        });
        await expect(client, 202, { method: 'DELETE', resource: `${blob}/${name}` });
      }),
    );
  }
  return [
    { files, step: 'rename the directory', datalakeSeconds: rename, blobSeconds: blobRename },
    { files, step: 'list every name', datalakeSeconds: listPaths, blobSeconds: listBlobs },
  ];
}

function format(rows: Row[], loadStart: number): string {
  const cell = (s: number | undefined) =>
    s === undefined ? '–' : s < 1 ? `${(s * 1000).toFixed(1)} ms` : `${s.toFixed(2)} s`;
  const ratio = (row: Row) => {
    if (row.blobSeconds === undefined) return '–';
    const times = row.blobSeconds / row.datalakeSeconds;
    return `${times.toFixed(times < 10 ? 2 : 0)}×`;
  };
  return [
    `# Data Lake path operations beside the Blob API`,
    '',
    `\`node dist/bench/dfs-ops.js --sizes ${sizes.join(',')} --blob-max ${blobRenameMax}\`, ${new Date().toISOString()}, ` +
      `load average at start ${loadStart.toFixed(2)} (${os.cpus().length} cores, shared). One on-disk Cerulean ` +
      `server (SQLite). Rename: one Rename Path request beside Copy Blob + Delete Blob of each blob ` +
      `(${inFlight} in flight). List: List Paths (recursive) beside List Blobs, 5,000 a page. One run each.`,
    '',
    '| files | step | Data Lake | Blob API | Blob ÷ Data Lake |',
    '| ---: | --- | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| ${row.files.toLocaleString('en-US')} | ${row.step} | ${cell(row.datalakeSeconds)} | ${cell(row.blobSeconds)} | ${ratio(row)} |`,
    ),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cerulean-dfs-ops-'));
  const server = await startServer('cerulean', repoRoot, dir);
  const blob = server.blob!;
  const endpoint = { host: blob.host, port: blob.port, account: 'devstoreaccount1' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const client = new SignedHttpClient(endpoint, agent, requestTimeoutMs, '2021-08-06');
  const origin = `http://${blob.host}:${blob.port}/devstoreaccount1`;
  const loadStart = os.loadavg()[0]!;
  const rows: Row[] = [];
  try {
    for (const files of sizes) {
      rows.push(...(await measure(client, origin, files)));
      // Written after every size, so that a long run stopped midway keeps what it measured.
      fs.writeFileSync(path.join(repoRoot, `bench/results/${report}.md`), format(rows, loadStart));
      process.stderr.write(`${files} files done\n`);
    }
  } finally {
    agent.destroy();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(format(rows, loadStart));
}

await main();
