// List Paths (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/list):
// a page of a file system's (or a directory's) paths in name order, recursive or one level. A
// directory is its marker blob; a blob written through the Blob API under a name with slashes
// and no marker for its folder shows that folder as a directory too (one level only: a recursive
// listing shows the blobs, not their implicit folders). One level steps over a directory's
// contents with one query from just past its names, so a directory of millions costs one entry.
import { StorageError } from '../../errors.js';
import { integerParam, requiredParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import type { BlobRecord } from '../../storage/blob-store.js';
import { pastChildren } from '../../storage/path-store.js';
import { httpDate, visibleEtag } from '../../wire/version-etag.js';
import { listPageMax } from '../limits.js';
import { trimSlashes } from '../resources.js';
import { accessOf, decodePathState, isDirectory, superuser } from '../state.js';
import { booleanParam, decodeContinuation, encodeContinuation, formatMode, jsonReply } from '../wire.js';
import { findPath, requireFilesystem, type DatalakeCall } from './access.js';
import { requireAccess } from './permissions.js';
import { executeBit, readBit } from '../../domain/posix-acl.js';

interface PathEntry {
  readonly name: string;
  readonly isDirectory?: 'true';
  readonly contentLength: string;
  readonly lastModified: string;
  readonly etag: string;
  readonly owner: string;
  readonly group: string;
  readonly permissions: string;
}

function entryOf(record: BlobRecord): PathEntry {
  const state = decodePathState(record.state);
  const access = accessOf(state);
  return {
    name: record.name,
    ...(isDirectory(state) ? { isDirectory: 'true' as const } : {}),
    contentLength: String(record.sizeBytes),
    lastModified: httpDate(record.lastModifiedMs),
    etag: visibleEtag(record.etag).replace(/^"|"$/g, ''),
    owner: access.owner,
    group: access.group,
    permissions: formatMode(access.mode),
  };
}

/** A folder only blob names imply: a directory with the defaults and its first blob's dates (chosen). */
function impliedEntry(name: string, record: BlobRecord): PathEntry {
  return {
    ...entryOf(record),
    name,
    isDirectory: 'true',
    contentLength: '0',
    owner: superuser,
    group: superuser,
    permissions: formatMode('0750'),
  };
}

export async function listPaths(call: DatalakeCall, filesystem: string): Promise<Reply> {
  const recursive = booleanParam(call.query, 'recursive');
  if (recursive === undefined) requiredParam(call.query, 'recursive');
  const limit = integerParam(call.query, 'maxResults', { min: 1, max: 2 ** 31 - 1 }, listPageMax);
  const pageSize = Math.min(limit, listPageMax);
  const directory = trimSlashes(call.query.get('directory') ?? '');
  // r and x on the directory listed (data-lake-storage-access-control: common scenarios); a
  // recursive listing checks that directory only (chosen: the service's rule for deeper ones is
  // not documented).
  await requireAccess(call, filesystem, directory, { self: readBit | executeBit });
  if (directory === '') {
    await requireFilesystem(call, filesystem);
  } else {
    const found = await findPath(call, filesystem, directory);
    if (found === undefined) {
      await requireFilesystem(call, filesystem);
      throw new StorageError('PathNotFound');
    }
    if (!isDirectory(found.state)) throw new StorageError('PathConflict', 'The path is a file, not a directory.');
  }
  const prefix = directory === '' ? '' : `${directory}/`;
  const continuation = call.query.get('continuation');
  let from = continuation === null ? undefined : decodeContinuation(continuation);
  /** A name already listed, at `from`: the next query starts there (inclusive) and steps over it. */
  let listedAt: string | undefined;
  const entries: PathEntry[] = [];
  for (;;) {
    const asked = pageSize - entries.length + 2;
    const batch = await call.services.blobs.listBlobs(call.account, filesystem, {
      prefix,
      from: from === undefined ? undefined : { name: from, snapshot: '' },
      limit: asked,
      snapshots: false,
      uncommitted: false,
    });
    let jumped = false;
    for (const listed of batch) {
      const name = listed.kind === 'blob' ? listed.record.name : listed.name;
      if (name === listedAt) continue;
      from = listedAt = name;
      if (listed.kind !== 'blob') continue;
      if (entries.length === pageSize) return page(entries, name);
      const rest = name.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (recursive === true || slash === -1) {
        entries.push(entryOf(listed.record));
        continue;
      }
      // One level: a name inside a folder. The folder's marker, if it has one, sorts before every
      // name in it, so it was listed already (here or on an earlier page).
      const folder = `${prefix}${rest.slice(0, slash)}`;
      if ((await findPath(call, filesystem, folder)) === undefined) entries.push(impliedEntry(folder, listed.record));
      from = pastChildren(folder);
      listedAt = undefined;
      jumped = true;
      break;
    }
    if (!jumped && batch.length < asked) return page(entries, undefined);
  }
}

function page(entries: readonly PathEntry[], next: string | undefined): Reply {
  const headers: Record<string, string> = next === undefined ? {} : { 'x-ms-continuation': encodeContinuation(next) };
  return jsonReply(200, { paths: entries }, headers);
}
