// The Data Lake API's resources: what the path after the account names
// (https://learn.microsoft.com/rest/api/storageservices/data-lake-storage-gen2). A file system is
// a container of the Blob service; a path is a file or directory in it, named as its blob is.
import { StorageError } from '../errors.js';

export type DatalakeResource =
  /** `/{account}/`: List Filesystems. */
  | { readonly kind: 'account' }
  /** `/{account}/{filesystem}` */
  | { readonly kind: 'filesystem'; readonly filesystem: string }
  /** `/{account}/{filesystem}/{path}`: `path` without leading or trailing slashes. */
  | { readonly kind: 'path'; readonly filesystem: string; readonly path: string };

/** The resource the path (still percent-encoded) names; a path's trailing slashes are not part of its name. */
export function parseDatalakeResource(path: string): DatalakeResource {
  const segments = path.split('/').map(decodeSegment);
  const [filesystem = '', ...rest] = segments;
  if (filesystem === '') return { kind: 'account' };
  const name = trimSlashes(rest.join('/'));
  checkPathName(name);
  return name === '' ? { kind: 'filesystem', filesystem } : { kind: 'path', filesystem, path: name };
}

/** A path is a blob name: at most 1024 characters (naming-and-referencing-containers--blobs--and-metadata). */
export function checkPathName(name: string): void {
  if (name.length > 1024) {
    throw new StorageError(
      'OutOfRangeInput',
      'The specified resource name length is not within the permissible limits.',
    );
  }
}

/** A path name as the service keeps it: no leading or trailing slashes. */
export function trimSlashes(name: string): string {
  return name.replace(/^\/+/, '').replace(/\/+$/, '');
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new StorageError('InvalidUri', 'The request URI is not validly percent-encoded.');
  }
}
