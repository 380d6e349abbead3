// @azure/data-tables clients pointed at a test server, and unique table names.
import { randomBytes } from 'node:crypto';
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from '@azure/data-tables';
import { devAccount, devKey, type RunningServer } from './server.js';

export interface AccountCredentials {
  account: string;
  key: string;
}

const devCredentials: AccountCredentials = { account: devAccount, key: devKey };

/** No retries: a failing call fails at once instead of backing off for seconds. */
export const clientOptions = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };

/** `http://HOST:PORT/<account>` (path-style). */
export function accountUrl(server: RunningServer, account = devAccount, host = '127.0.0.1'): string {
  return `http://${host}:${server.port}/${account}`;
}

export function serviceClient(server: RunningServer, creds = devCredentials, host?: string): TableServiceClient {
  return new TableServiceClient(
    accountUrl(server, creds.account, host),
    new AzureNamedKeyCredential(creds.account, creds.key),
    clientOptions,
  );
}

export function tableClient(server: RunningServer, table: string, creds = devCredentials, host?: string): TableClient {
  return new TableClient(
    accountUrl(server, creds.account, host),
    table,
    new AzureNamedKeyCredential(creds.account, creds.key),
    clientOptions,
  );
}

/** A valid table name no other test uses: a letter prefix plus random alphanumerics. */
export function uniqueTableName(prefix = 't'): string {
  return prefix + randomBytes(8).toString('hex');
}

/** Creates a table and returns a client for it. */
export async function freshTable(server: RunningServer, prefix = 't', creds = devCredentials): Promise<TableClient> {
  const client = tableClient(server, uniqueTableName(prefix), creds);
  await client.createTable();
  return client;
}

/** Runs `work` over `items` with at most `width` in flight. */
export async function inParallel<T>(
  items: readonly T[],
  width: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
