// Where the blob commands' containers live: a connection string with a BlobEndpoint,
// `UseDevelopmentStorage=true` (the local server's blob port), or a service SAS URL of the account.
// Every call goes through the official Blob SDK, as any application's would.
import { AnonymousCredential, BlobServiceClient, type StoragePipelineOptions } from '@azure/storage-blob';
import { DataLakeServiceClient } from '@azure/storage-file-datalake';
import { CliError } from './command.js';
import { cliUserAgent } from './endpoint.js';
import { givenConnectionString, normalizedConnectionString } from './storage-connection.js';

export const defaultBlobEndpointUrl = 'http://127.0.0.1:10000/devstoreaccount1';

export interface BlobEndpoint {
  /** For messages: the blob endpoint's URL, never a key or a signature. */
  readonly label: string;
  readonly service: BlobServiceClient;
  /** The same account through the Data Lake SDK (paths' access control: src/cli/path-access.ts). */
  readonly datalake: DataLakeServiceClient;
}

/**
 * `text` (a connection string, or an http(s) account URL with a SAS query), else the environment
 * variable, else the local development account.
 */
export function resolveBlobEndpoint(text: string | undefined, env: NodeJS.ProcessEnv = process.env): BlobEndpoint {
  const given = givenConnectionString(text, env);
  const options: StoragePipelineOptions = { userAgentOptions: { userAgentPrefix: cliUserAgent } };
  let service: BlobServiceClient;
  let datalake: DataLakeServiceClient;
  try {
    if (/^https?:\/\//i.test(given)) {
      service = new BlobServiceClient(given, new AnonymousCredential(), options);
      datalake = new DataLakeServiceClient(given, new AnonymousCredential(), {
        userAgentOptions: options.userAgentOptions,
      });
    } else {
      const connection = normalizedConnectionString(given, 'BlobEndpoint');
      service = BlobServiceClient.fromConnectionString(connection, options);
      datalake = DataLakeServiceClient.fromConnectionString(connection, { userAgentOptions: options.userAgentOptions });
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    // The SDK's message names no secret (it says which part is missing).
    throw new CliError(`not a valid connection string: ${(error as Error).message}`);
  }
  const url = new URL(service.url);
  return { label: `${url.origin}${url.pathname}`.replace(/\/$/, ''), service, datalake };
}

/**
 * Whether a connection string reaches the service of `endpointName`: the development account
 * reaches all; one naming some service endpoints reaches those; one naming none reaches Azure's.
 */
export function connectionReaches(
  text: string,
  endpointName: 'TableEndpoint' | 'QueueEndpoint' | 'BlobEndpoint',
): boolean {
  if (/^https?:\/\//i.test(text.trim())) return true;
  const names = text
    .split(';')
    .map((part) => part.split('=')[0]!.trim().toLowerCase())
    .filter((name) => name !== '');
  if (names.includes('usedevelopmentstorage')) return true;
  const endpoints = names.filter((name) => name.endsWith('endpoint'));
  return endpoints.length === 0 || endpoints.includes(endpointName.toLowerCase());
}
