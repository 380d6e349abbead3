// Container names (https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata).
import { StorageError } from '../../errors.js';

/** The containers whose names start with `$`: the root container, the logs and the static website's. */
const specialContainers: ReadonlySet<string> = new Set(['$root', '$logs', '$web']);

/** Container names are 3 to 63 characters long (naming-and-referencing-containers--blobs--and-metadata). */
const containerNameLengthMin = 3;
const containerNameLengthMax = 63;

/**
 * 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or
 * digit; or one of the `$` names. A name of the wrong length is 400 OutOfRangeInput, whatever its
 * characters, and any other bad name 400 InvalidResourceName: the service's answers (the naming
 * page names neither; the queue service answers queue names the same way).
 */
export function checkContainerName(name: string): void {
  if (specialContainers.has(name)) return;
  if (name.length > 0 && (name.length < containerNameLengthMin || name.length > containerNameLengthMax)) {
    throw new StorageError('OutOfRangeInput', 'The specified resource name length is not within the permissible limits.');
  }
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) throw new StorageError('InvalidResourceName');
}
