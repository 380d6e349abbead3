// Where the queue commands' queues live: a connection string with a QueueEndpoint, or
// `UseDevelopmentStorage=true` (the local server's queue port). Every call goes through the official
// Queue SDK, as any application's would.
import { QueueServiceClient, type StoragePipelineOptions } from '@azure/storage-queue';
import { CliError } from './command.js';
import { cliUserAgent } from './endpoint.js';
import {
  givenConnectionString,
  normalizedConnectionString,
  storageConnectionStringVariable,
} from './storage-connection.js';

export const queueConnectionStringVariable = storageConnectionStringVariable;
export const defaultQueueEndpointUrl = 'http://127.0.0.1:10001/devstoreaccount1';

export interface QueueEndpoint {
  /** For messages: the queue endpoint's URL, never a key or a signature. */
  readonly label: string;
  readonly service: QueueServiceClient;
}

/** `text`, else the environment variable, else the local development account. */
export function resolveQueueEndpoint(text: string | undefined, env: NodeJS.ProcessEnv = process.env): QueueEndpoint {
  const connectionString = normalizedConnectionString(givenConnectionString(text, env), 'QueueEndpoint');
  const options: StoragePipelineOptions = { userAgentOptions: { userAgentPrefix: cliUserAgent } };
  let service: QueueServiceClient;
  try {
    service = QueueServiceClient.fromConnectionString(connectionString, options);
  } catch (error) {
    // The SDK's message names no secret (it says which part is missing).
    throw new CliError(`not a valid connection string: ${(error as Error).message}`);
  }
  return { label: service.url.replace(/\/$/, ''), service };
}
