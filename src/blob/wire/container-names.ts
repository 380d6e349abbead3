// Container names (https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata).
import { StorageError } from '../../errors.js';

/** The containers whose names start with `$`: the root container, the logs and the static website's. */
const specialContainers: ReadonlySet<string> = new Set(['$root', '$logs', '$web']);

/**
 * 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or
 * digit; or one of the `$` names. Anything else is 400 InvalidResourceName (the service answers
 * OutOfRangeInput for some lengths too: unverified which, this is one answer for all).
 */
export function checkContainerName(name: string): void {
  if (specialContainers.has(name)) return;
  const shaped = /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name);
  if (!shaped || name.length < 3 || name.length > 63) throw new StorageError('InvalidResourceName');
}
