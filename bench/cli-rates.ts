// Export and import rates of the `cerulean` command line at 100k entities: one on-disk
// Cerulean server, the CLI run as a user runs it (a process per command), wall time per command.
// Usage: node dist/bench/cli-rates.js [--entities N]   (compiled by npx tsc -p tsconfig.json)
// Writes bench/results/cli-rates.md.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { entityProperties } from './entities.js';
import { startServer } from './servers.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const entitiesIndex = process.argv.indexOf('--entities');
const entityCount = entitiesIndex === -1 ? 100_000 : Number(process.argv[entitiesIndex + 1]);
/** Entities per partition: rows of one partition are consecutive, as an export writes them. */
const partitionSize = 100;

interface Measurement {
  readonly step: string;
  readonly seconds: number;
}

async function cli(args: string[], connectionString: string, cwd: string): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/cerulean.js'), ...args, '-c', connectionString], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`cerulean ${args.join(' ')} exited ${code}: ${stderr}`);
  process.stderr.write(stderr);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cerulean-cli-rates-'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir);
  const server = await startServer('cerulean', repoRoot, dataDir);
  const { host, port } = server.endpoint;
  const connectionString =
    'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;' +
    'AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;' +
    `TableEndpoint=http://${host}:${port}/devstoreaccount1;`;
  const loadStart = os.loadavg()[0]!;
  const results: Measurement[] = [];
  try {
    const input = path.join(dir, 'input.jsonl');
    const lines: string[] = [];
    for (let i = 0; i < entityCount; i++) {
      const partition = String(Math.floor(i / partitionSize)).padStart(6, '0');
      lines.push(`{"PartitionKey":"p${partition}","RowKey":"${String(i).padStart(8, '0')}",${entityProperties(i)}}`);
    }
    fs.writeFileSync(input, lines.join('\n') + '\n');
    const steps: [string, string[]][] = [
      ['import jsonl (insert)', ['import', 'rates', input, '--create-table']],
      ['export jsonl', ['export', 'rates', '--out', path.join(dir, 'out.jsonl')]],
      ['export typed-csv', ['export', 'rates', '--out', path.join(dir, 'out.typed.csv')]],
      ['import typed-csv (insert)', ['import', 'ratescsv', path.join(dir, 'out.typed.csv'), '--create-table']],
      ['import jsonl (upsert over existing)', ['import', 'rates', path.join(dir, 'out.jsonl'), '--mode', 'upsert']],
    ];
    for (const [step, args] of steps) results.push({ step, seconds: await cli(args, connectionString, dir) });
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const report = [
    `# CLI export and import rates, ${entityCount.toLocaleString('en-US')} entities`,
    '',
    `\`node dist/bench/cli-rates.js\`, ${new Date().toISOString()}, load average at start ${loadStart.toFixed(2)} ` +
      `(${os.cpus().length} cores). One on-disk Cerulean server; each step is one \`cerulean\` process, wall time ` +
      `including its start (~0.5 s). ~500-byte entities of every EDM type (bench/entities.ts), ${partitionSize} per partition.`,
    '',
    '| step | seconds | entities/s |',
    '| --- | ---: | ---: |',
    ...results.map(
      ({ step, seconds }) =>
        `| ${step} | ${seconds.toFixed(1)} | ${Math.round(entityCount / seconds).toLocaleString('en-US')} |`,
    ),
    '',
  ].join('\n');
  fs.writeFileSync(path.join(repoRoot, 'bench/results/cli-rates.md'), report);
  process.stdout.write(report);
}

await main();
