// The connection strings of the Queue and Blob SDKs: one parser for both services' endpoints. Users
// write names in any case (the Table SDK accepts that); the Storage SDKs match them case-sensitively
// and need `DefaultEndpointsProtocol` beside a key, so the text is put in the form they accept.
import { CliError } from './command.js';

export type ServiceEndpointName = 'QueueEndpoint' | 'BlobEndpoint';

/** Read by the Queue and Blob commands when no -c is given (the Storage SDKs' own variable). */
export const storageConnectionStringVariable = 'AZURE_STORAGE_CONNECTION_STRING';

const canonicalNames = new Map(
  [
    'UseDevelopmentStorage',
    'DefaultEndpointsProtocol',
    'AccountName',
    'AccountKey',
    'QueueEndpoint',
    'BlobEndpoint',
    'TableEndpoint',
    'SharedAccessSignature',
    'EndpointSuffix',
    'DevelopmentStorageProxyUri',
  ].map((name) => [name.toLowerCase(), name]),
);

function help(endpointName: ServiceEndpointName): string {
  return (
    `give …;${endpointName}=… with AccountName=…;AccountKey=… or SharedAccessSignature=…, ` +
    'or UseDevelopmentStorage=true'
  );
}

/** `text`, else the environment variable, else the development account. */
export function givenConnectionString(text: string | undefined, env: NodeJS.ProcessEnv): string {
  const given = (text ?? env[storageConnectionStringVariable] ?? '').trim();
  return given === '' ? 'UseDevelopmentStorage=true' : given;
}

/**
 * The connection string with canonical names, and `DefaultEndpointsProtocol` added where a key is
 * given without it (the SDK needs it to recognise a key, though the endpoint URL says the scheme).
 * The text is never repeated in a message: it may hold a key.
 */
export function normalizedConnectionString(text: string, endpointName: ServiceEndpointName): string {
  const pairs = new Map<string, string>();
  for (const part of text.split(';')) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    if (equals <= 0) throw new CliError(`not a valid connection string: ${help(endpointName)}`);
    const name = part.slice(0, equals).trim();
    pairs.set(canonicalNames.get(name.toLowerCase()) ?? name, part.slice(equals + 1).trim());
  }
  if (pairs.get('UseDevelopmentStorage')?.toLowerCase() === 'true') return 'UseDevelopmentStorage=true';
  if (!pairs.has(endpointName)) {
    throw new CliError(`the connection string names no ${endpointName}: ${help(endpointName)}`);
  }
  if (pairs.has('AccountKey') && !pairs.has('DefaultEndpointsProtocol')) {
    const scheme = /^(https?):\/\//i.exec(pairs.get(endpointName)!)?.[1];
    if (scheme === undefined) throw new CliError(`the ${endpointName} of the connection string is no http(s) URL`);
    pairs.set('DefaultEndpointsProtocol', scheme.toLowerCase());
  }
  return [...pairs].map(([name, value]) => `${name}=${value}`).join(';');
}
