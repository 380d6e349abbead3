// A folder of small files up to a container and back: `cerulean blobs upload/download` against
// `az storage blob upload-batch/download-batch` (the Azure CLI), both against one on-disk Cerulean
// server on this machine, interleaved round by round, wall time per command (process start included).
// Usage: node dist/bench/blob-folder.js [--files N] [--kib K] [--rounds R] [--az /usr/bin/az]
// Writes bench/results/blob-folder.md.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const flag = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1]!;
};
const fileCount = Number(flag('--files', '1000'));
const fileKiB = Number(flag('--kib', '64'));
const rounds = Number(flag('--rounds', '2'));
const az = flag('--az', '/usr/bin/az');
/** Transfers at once for both tools (az's --max-connections, cerulean's --parallel). */
const inFlight = 8;
const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** Runs a command to completion; its wall time in seconds. */
async function timed(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.slice(0, 4).join(' ')} exited ${code}: ${stderr.slice(-2000)}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** SHA-256 over every file of a folder by relative path: the downloads must equal the source. */
function treeHash(folder: string): string {
  const hash = createHash('sha256');
  const files = fs
    .readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
  for (const file of files) hash.update(path.relative(folder, file)).update(fs.readFileSync(file));
  return `${files.length}:${hash.digest('hex')}`;
}

/** `fileCount` incompressible files of `fileKiB` KiB in 10 subfolders of `source`. */
function makeFiles(source: string): string {
  for (let i = 0; i < fileCount; i++) {
    const folder = path.join(source, `d${i % 10}`);
    fs.mkdirSync(folder, { recursive: true });
    const bytes = Buffer.alloc(fileKiB * 1024);
    for (let offset = 0; offset < bytes.length; offset += 32)
      createHash('sha256').update(`${i}:${offset}`).digest().copy(bytes, offset);
    fs.writeFileSync(path.join(folder, `f${i}.bin`), bytes);
  }
  return source;
}

interface Row {
  readonly tool: string;
  readonly step: string;
  readonly seconds: number[];
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cerulean-blob-folder-'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir);
  const source = makeFiles(path.join(dir, 'files'));
  const expected = treeHash(source);
  const server = await startServer('cerulean', repoRoot, dataDir);
  const blob = server.blob!;
  const connectionString =
    `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${devKey};` +
    `BlobEndpoint=http://${blob.host}:${blob.port}/devstoreaccount1;`;
  const cerulean = (args: string[]) =>
    timed(process.execPath, [path.join(repoRoot, 'bin/cerulean.js'), ...args, '-c', connectionString]);
  const azEnv = { ...process.env, AZURE_CORE_COLLECT_TELEMETRY: 'false', AZURE_CORE_ONLY_SHOW_ERRORS: 'true' };
  const azRun = (args: string[]) =>
    timed(
      az,
      ['storage', ...args, '--connection-string', connectionString, '--max-connections', String(inFlight)],
      azEnv,
    );
  const rows: Row[] = [
    { step: 'upload', tool: '`cerulean blobs upload`', seconds: [] },
    { step: 'upload', tool: '`az storage blob upload-batch`', seconds: [] },
    { step: 'download', tool: '`cerulean blobs download`', seconds: [] },
    { step: 'download', tool: '`az storage blob download-batch`', seconds: [] },
  ];
  const loadStart = os.loadavg()[0]!;
  try {
    for (let round = 0; round < rounds; round++) {
      const [c, a] = [`cerulean-${round}`, `az-${round}`];
      rows[0]!.seconds.push(await cerulean(['blobs', 'upload', source, c, '--parallel', String(inFlight)]));
      await timed(az, ['storage', 'container', 'create', '-n', a, '--connection-string', connectionString], azEnv);
      rows[1]!.seconds.push(await azRun(['blob', 'upload-batch', '-d', a, '-s', source]));
      const [outC, outA] = [path.join(dir, `out-${c}`), path.join(dir, `out-${a}`)];
      fs.mkdirSync(outA);
      rows[2]!.seconds.push(await cerulean(['blobs', 'download', c, outC, '--parallel', String(inFlight)]));
      rows[3]!.seconds.push(await azRun(['blob', 'download-batch', '-d', outA, '-s', a]));
      for (const out of [outC, outA])
        if (treeHash(out) !== expected) throw new Error(`${out} differs from the files uploaded`);
    }
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const mib = (fileCount * fileKiB) / 1024;
  const best = (row: Row) => Math.min(...row.seconds);
  const report = [
    `# A folder of ${fileCount.toLocaleString('en-US')} files of ${fileKiB} KiB up and down`,
    '',
    `\`node dist/bench/blob-folder.js\`, ${new Date().toISOString()}, load average at start ${loadStart.toFixed(2)} ` +
      `(${os.cpus().length} cores). One on-disk Cerulean server; each step one process (start included), ` +
      `${inFlight} transfers at once for both tools, ${rounds} rounds interleaved; best and all runs. ` +
      'Every download is checked against the files uploaded.',
    '',
    '| step | tool | best s | files/s | MiB/s | runs (s) |',
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...rows.map(
      (row) =>
        `| ${row.step} | ${row.tool} | ` +
        `${best(row).toFixed(1)} | ${Math.round(fileCount / best(row))} | ${(mib / best(row)).toFixed(1)} | ` +
        `${row.seconds.map((s) => s.toFixed(1)).join(', ')} |`,
    ),
    '',
  ].join('\n');
  fs.writeFileSync(path.join(repoRoot, 'bench/results/blob-folder.md'), report);
  process.stdout.write(report);
}

await main();
