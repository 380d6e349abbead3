// Shared by the examples: the endpoint, unique table names, checks that set the exit code.
import { TableServiceClient } from '@azure/data-tables';
import { connect, ensureTable } from '../src/index.js';

export function connectionString(): string {
  const value = process.env.AZURE_TABLES_CONNECTION_STRING;
  if (!value) {
    console.error('Set AZURE_TABLES_CONNECTION_STRING (or run `npm run examples`, which starts a server).');
    process.exit(2);
  }
  return value;
}

const created: string[] = [];

/** A fresh table with a unique name (dropped when the example ends). */
export async function freshTable(prefix: string) {
  const name = `${prefix}${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`.slice(0, 63);
  const client = connect(connectionString(), name);
  await ensureTable(client);
  created.push(name);
  return client;
}

/** A unique table name the example manages itself. */
export function uniqueName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`.slice(0, 63);
}

let failures = 0;

export function check(condition: boolean, what: string): void {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${what}`);
  if (!condition) failures++;
}

/** Runs an example: prints what it does, drops its tables, exits 1 if a check failed or it threw. */
export async function run(title: string, body: () => Promise<void>): Promise<void> {
  console.log(`# ${title}`);
  try {
    await body();
  } catch (error) {
    console.error(error);
    failures++;
  } finally {
    const service = TableServiceClient.fromConnectionString(connectionString(), { allowInsecureConnection: true });
    for (const name of created) await service.deleteTable(name).catch(() => undefined);
  }
  if (failures > 0) {
    console.log(`${failures} check(s) failed`);
    process.exitCode = 1;
  }
}
