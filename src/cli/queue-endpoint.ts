// Where the queue commands' queues live: a connection string with a QueueEndpoint, or
// `UseDevelopmentStorage=true` (the local server's queue port). Every call goes through the official
// Queue SDK, as any application's would.
import { QueueServiceClient, type StoragePipelineOptions } from '@azure/storage-queue';
import { CliError } from './command.js';
import { cliUserAgent } from './endpoint.js';

export const queueConnectionStringVariable = 'AZURE_STORAGE_CONNECTION_STRING';
export const defaultQueueEndpointUrl = 'http://127.0.0.1:10001/devstoreaccount1';

export interface QueueEndpoint {
  /** For messages: the queue endpoint's URL, never a key or a signature. */
  readonly label: string;
  readonly service: QueueServiceClient;
}

/** The SDK's parser matches names case-sensitively; users (and the Table SDK) do not. */
const canonicalNames = new Map(
  [
    'UseDevelopmentStorage',
    'DefaultEndpointsProtocol',
    'AccountName',
    'AccountKey',
    'QueueEndpoint',
    'SharedAccessSignature',
    'EndpointSuffix',
    'DevelopmentStorageProxyUri',
  ].map((name) => [name.toLowerCase(), name]),
);

const help =
  'give …;QueueEndpoint=… with AccountName=…;AccountKey=… or SharedAccessSignature=…, ' +
  'or UseDevelopmentStorage=true';

/** `text`, else the environment variable, else the local development account. */
export function resolveQueueEndpoint(text: string | undefined, env: NodeJS.ProcessEnv = process.env): QueueEndpoint {
  const given = (text ?? env[queueConnectionStringVariable] ?? '').trim();
  const connectionString = normalized(given === '' ? 'UseDevelopmentStorage=true' : given);
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

/**
 * The connection string with canonical names, and `DefaultEndpointsProtocol` added where a key is
 * given without it (the SDK needs it to recognise a key, though the QueueEndpoint says the scheme).
 * The text is never repeated in a message: it may hold a key.
 */
function normalized(text: string): string {
  const pairs = new Map<string, string>();
  for (const part of text.split(';')) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    if (equals <= 0) throw new CliError(`not a valid connection string: ${help}`);
    const name = part.slice(0, equals).trim();
    pairs.set(canonicalNames.get(name.toLowerCase()) ?? name, part.slice(equals + 1).trim());
  }
  if (pairs.get('UseDevelopmentStorage')?.toLowerCase() === 'true') return 'UseDevelopmentStorage=true';
  if (!pairs.has('QueueEndpoint')) throw new CliError(`the connection string names no QueueEndpoint: ${help}`);
  if (pairs.has('AccountKey') && !pairs.has('DefaultEndpointsProtocol')) {
    const scheme = /^(https?):\/\//i.exec(pairs.get('QueueEndpoint')!)?.[1];
    if (scheme === undefined) throw new CliError('the QueueEndpoint of the connection string is no http(s) URL');
    pairs.set('DefaultEndpointsProtocol', scheme.toLowerCase());
  }
  return [...pairs].map(([name, value]) => `${name}=${value}`).join(';');
}
