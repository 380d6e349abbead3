// Options shared by the commands that make and restore account backups (backup, restore).
import { Option } from 'commander';
import { defaultBlobEndpointUrl } from '../blob-endpoint.js';
import { connectionStringVariable } from '../endpoint.js';
import { storageConnectionStringVariable } from '../storage-connection.js';

export function accountConnectionOption(what: string): Option {
  return new Option(
    '-c, --connection-string <string>',
    `${what}: a connection string (its TableEndpoint, QueueEndpoint and BlobEndpoint), UseDevelopmentStorage=true ` +
      `(blobs at ${defaultBlobEndpointUrl}), or a Blob service SAS URL ` +
      `(env ${connectionStringVariable} and ${storageConnectionStringVariable})`,
  );
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
