// Rename (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/create,
// x-ms-rename-source): a file, or a directory with everything under it, gets a new name in the
// same file system in one transaction of the path store (storage/path-store.ts), whatever the
// directory holds; no content is copied.
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { casAttemptsMax } from '../limits.js';
import { checkPathName, trimSlashes } from '../resources.js';
import { isDirectory } from '../state.js';
import {
  checkConditions,
  checkLease,
  findPath,
  header,
  pathWriteFailure,
  requireFilesystem,
  versionHeaders,
  type DatalakeCall,
} from './access.js';
import { requireAccess } from './permissions.js';
import { executeBit, writeBit } from '../../domain/posix-acl.js';

/** x-ms-rename-source: `/{filesystem}/{path}`, percent-encoded, perhaps with a SAS query after `?`. */
function parseSource(text: string): { filesystem: string; path: string } {
  const [pathPart = ''] = text.split('?');
  let decoded: string[];
  try {
    decoded = pathPart.split('/').map((segment) => decodeURIComponent(segment));
  } catch {
    throw new StorageError('InvalidSourceUri');
  }
  const [, filesystem = '', ...rest] = decoded;
  const path = trimSlashes(rest.join('/'));
  if (filesystem === '' || path === '') throw new StorageError('InvalidSourceUri');
  checkPathName(path);
  return { filesystem, path };
}

/**
 * 201 Created. The source must exist (404 SourcePathNotFound) and meet x-ms-source-if-* and
 * x-ms-source-lease-id; the destination's parent must be a directory (404
 * RenameDestinationParentPathNotFound); an existing destination file is replaced by a file (its
 * delete and the rename are two steps: chosen), an existing directory is 409 PathAlreadyExists, as
 * is any destination with If-None-Match: *. A destination in another file system is not served.
 */
export async function renamePath(call: DatalakeCall, filesystem: string, destination: string): Promise<Reply> {
  const source = parseSource(header(call, 'x-ms-rename-source')!);
  if (source.filesystem !== filesystem) {
    throw new StorageError('InvalidSourceUri', 'Cerulean renames paths within one file system.');
  }
  if (source.path === destination) throw new StorageError('InvalidRenameSourcePath');
  if (destination.startsWith(`${source.path}/`)) throw new StorageError('InvalidDestinationPath');
  const slash = destination.lastIndexOf('/');
  // w and x on both parents; a sticky parent's child only by its owner or the parent's (the
  // replaced destination's too).
  const onParent = { parent: writeBit | executeBit, sticky: true };
  await requireAccess(call, filesystem, source.path, onParent);
  await requireAccess(call, filesystem, destination, onParent);
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await findPath(call, filesystem, source.path);
    if (found === undefined) {
      await requireFilesystem(call, filesystem);
      throw new StorageError('SourcePathNotFound');
    }
    checkConditions(call, found.record, 'x-ms-source-');
    checkLease(call, found.state, 'x-ms-source-lease-id');
    if (slash !== -1) {
      const parent = await findPath(call, filesystem, destination.slice(0, slash));
      if (parent === undefined || !isDirectory(parent.state))
        throw new StorageError('RenameDestinationParentPathNotFound');
    }
    const existing = await findPath(call, filesystem, destination);
    if (existing !== undefined) {
      if (header(call, 'if-none-match')?.trim() === '*' || isDirectory(existing.state)) {
        throw new StorageError('PathAlreadyExists');
      }
      if (isDirectory(found.state)) throw new StorageError('PathConflict');
      checkConditions(call, existing.record);
      checkLease(call, existing.state);
      const deleted = await call.services.blobs.deleteBlob(
        call.account,
        { container: filesystem, name: destination, snapshot: '' },
        { base: true, snapshots: true },
        existing.record.etag,
      );
      if (deleted !== 'ok' && deleted !== 'blobNotFound') continue;
    } else {
      checkConditions(call, undefined);
    }
    const outcome = await call.services.paths.renamePath(
      call.account,
      filesystem,
      source.path,
      destination,
      found.record.etag,
    );
    if (outcome === 'ok') return { status: 201, headers: { ...versionHeaders(found.record), 'Content-Length': '0' } };
    if (outcome === 'containerNotFound') throw pathWriteFailure(outcome);
    if (outcome === 'sourceNotFound') throw new StorageError('SourcePathNotFound');
  }
  throw new StorageError('ServerBusy');
}
