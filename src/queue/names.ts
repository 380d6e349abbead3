// Queue names and metadata names, checked before anything reaches the store
// (https://learn.microsoft.com/rest/api/storageservices/naming-queues-and-metadata).
import { StorageError } from '../errors.js';
import { queueNameLengthMax, queueNameLengthMin } from './limits.js';

/**
 * Lower-case letters, digits and single hyphens, starting and ending with a letter or digit.
 * A name of the wrong length is 400 OutOfRangeInput and any other bad name 400 InvalidResourceName,
 * as Azurite answers (the service's choice between the two is unverified).
 */
export function checkQueueName(name: string): void {
  if (name.length > 0 && (name.length < queueNameLengthMin || name.length > queueNameLengthMax)) {
    throw new StorageError('OutOfRangeInput', 'The specified resource name length is not within the permissible limits.');
  }
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) throw new StorageError('InvalidResourceName');
}

export { metadataFromHeaders, metadataHeaders } from '../http/metadata-headers.js';

/** Create Queue's "same metadata" test: names compare case-insensitively, values exactly. */
export function sameMetadata(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  const lowered = new Map([...b].map(([name, value]) => [name.toLowerCase(), value]));
  return [...a].every(([name, value]) => lowered.get(name.toLowerCase()) === value);
}
