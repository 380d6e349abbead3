// `npm run examples`: runs every example in its own process against AZURE_TABLES_CONNECTION_STRING,
// or, when that is not set, against a fresh server this script starts (Cerulean from this
// repository; `-- --azurite` for Azurite from node_modules). Exits 1 if any example fails.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer, type ServerKind, type TestServer } from '../test/servers.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const helpers = new Set(['common.js', 'models.js', 'run-all.js']);

/** Every example file (compiled), in name order. */
export function exampleFiles(): string[] {
  return readdirSync(here)
    .filter((name) => name.endsWith('.js') && !helpers.has(name))
    .sort();
}

export interface ExampleResult {
  name: string;
  exitCode: number | null;
  output: string;
}

/** Runs one example in a child process with the given endpoint. */
export async function runExample(name: string, connectionString: string): Promise<ExampleResult> {
  const child = spawn(process.execPath, [`${here}${name}`], {
    env: { ...process.env, AZURE_TABLES_CONNECTION_STRING: connectionString },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const [exitCode] = (await once(child, 'exit')) as [number | null];
  return { name, exitCode, output };
}

async function main(): Promise<void> {
  let server: TestServer | undefined;
  let connectionString = process.env.AZURE_TABLES_CONNECTION_STRING;
  if (!connectionString) {
    const kind: ServerKind = process.argv.includes('--azurite') ? 'azurite' : 'cerulean';
    server = await startServer(kind);
    connectionString = server.connectionString;
    console.log(`started ${kind} for the examples`);
  }
  let failed = 0;
  try {
    for (const name of exampleFiles()) {
      const started = Date.now();
      const result = await runExample(name, connectionString);
      process.stdout.write(result.output);
      console.log(
        `-> ${name}: ${result.exitCode === 0 ? 'passed' : `FAILED (exit ${result.exitCode})`} in ${Date.now() - started} ms\n`,
      );
      if (result.exitCode !== 0) failed++;
    }
  } finally {
    await server?.stop();
  }
  console.log(failed === 0 ? 'all examples passed' : `${failed} example(s) failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
