// The Azure CLI (`az`) against a test server's Blob service: its configuration in a directory of the
// test's own, no telemetry, no colour, errors only; given the connection string, answering JSON.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { blobConnectionString } from './blob.js';
import type { RunningServer } from './server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

/** The environment the Azure CLI runs in for the tests. */
export function azEnv(configDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AZURE_CONFIG_DIR: configDir,
    AZURE_CORE_COLLECT_TELEMETRY: 'no',
    AZURE_CORE_NO_COLOR: '1',
    AZURE_CORE_ONLY_SHOW_ERRORS: '1',
  };
}

/** `az …` with the server's connection string; its JSON output parsed (undefined when it prints nothing). */
export async function azBlob(configDir: string, server: RunningServer, ...args: string[]): Promise<any> {
  const connection = ['--connection-string', blobConnectionString(server), '--output', 'json'];
  const { stdout } = await run('az', [...args, ...connection], { env: azEnv(configDir), timeout: commandTimeoutMs });
  return stdout.trim() === '' ? undefined : JSON.parse(stdout);
}
