// Options shared by the commands that reach a Blob endpoint (backup, restore).
import { Option } from 'commander';
import { defaultBlobEndpointUrl } from '../blob-endpoint.js';
import { storageConnectionStringVariable } from '../storage-connection.js';

export function blobConnectionOption(what: string): Option {
  return new Option(
    '-c, --connection-string <string>',
    `${what}: a connection string with a BlobEndpoint, UseDevelopmentStorage=true (${defaultBlobEndpointUrl}), ` +
      `or an account SAS URL (env ${storageConnectionStringVariable})`,
  );
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
