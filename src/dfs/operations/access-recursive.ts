// Set Access Control Recursive (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/update,
// action=setAccessControlRecursive): x-ms-acl set, modified or removed (`mode`) on a directory and
// everything under it, in name order, at most maxRecords paths a request (x-ms-continuation for
// the rest). Each path is its own write: a failure is reported per path, and stops the request
// unless forceFlag=true (then it goes on), as the service does. A bearer caller must own each path
// it changes (data-lake-storage-access-control: the owning user).
import { invalidQueryParameter, StorageError } from '../../errors.js';
import { integerParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import type { BlobRecord } from '../../storage/blob-store.js';
import { newEtag } from '../../wire/version-etag.js';
import { applyAcl, type AclMode } from '../acl.js';
import { casAttemptsMax } from '../limits.js';
import { accessOf, decodePathState, encodePathState, isDirectory } from '../state.js';
import { booleanParam, decodeContinuation, encodeContinuation, jsonReply } from '../wire.js';
import { findPath, header, nowMs, requireFilesystem, type DatalakeCall } from './access.js';
import { requireOwnership, setRootAccess } from './path.js';
import { requireAccess, rootAccessDefault } from './permissions.js';

/** Paths one request changes at most (path/update: maxRecords above 2,000 are taken as 2,000). */
export const recursiveBatchMax = 2000;

interface FailedEntry {
  readonly errorMessage: string;
  readonly name: string;
  readonly type: 'FILE' | 'DIRECTORY';
}

interface Tally {
  directoriesSuccessful: number;
  filesSuccessful: number;
  failureCount: number;
  readonly failedEntries: FailedEntry[];
}

function aclMode(call: DatalakeCall): AclMode {
  const mode = call.query.get('mode') ?? '';
  if (mode === 'set' || mode === 'modify' || mode === 'remove') return mode;
  throw invalidQueryParameter('mode', mode, 'The mode is set, modify or remove.');
}

/** PATCH ?action=setAccessControlRecursive&mode=…: 200 with the counts and the failed entries. */
export async function setAccessControlRecursive(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const mode = aclMode(call);
  const acl = header(call, 'x-ms-acl');
  if (acl === undefined) throw new StorageError('MissingRequiredHeader', undefined, 'x-ms-acl is required.');
  applyAcl(rootAccessDefault, acl, mode, true); // a malformed list is 400 before anything changes
  const limit = Math.min(
    integerParam(call.query, 'maxRecords', { min: 1, max: 2 ** 31 - 1 }, recursiveBatchMax),
    recursiveBatchMax,
  );
  const force = booleanParam(call.query, 'forceFlag') ?? false;
  const continuation = call.query.get('continuation');
  const from = continuation === null ? undefined : decodeContinuation(continuation);
  await requireAccess(call, filesystem, path, {});
  const tally: Tally = { directoriesSuccessful: 0, filesSuccessful: 0, failureCount: 0, failedEntries: [] };
  let budget = limit;
  if (from === undefined) {
    if (path === '') {
      await requireFilesystem(call, filesystem);
      const ok = await changeOne(tally, '', true, async () => {
        await setRootAccess(call, filesystem, (current) => {
          requireOwnership(call, current, undefined, undefined);
          return applyAcl(current, acl, mode, true);
        });
      });
      if (!ok && !force) return answer(tally, undefined);
    } else {
      const found = await findPath(call, filesystem, path);
      if (found === undefined) {
        await requireFilesystem(call, filesystem);
        throw new StorageError('PathNotFound');
      }
      if (!(await changePath(call, tally, filesystem, found.record, acl, mode)) && !force)
        return answer(tally, undefined);
      if (!isDirectory(found.state)) return answer(tally, undefined);
    }
    budget--;
  }
  const listed = await call.services.blobs.listBlobs(call.account, filesystem, {
    prefix: path === '' ? '' : `${path}/`,
    from: from === undefined ? undefined : { name: from, snapshot: '' },
    limit: budget + 1,
    snapshots: false,
    uncommitted: false,
  });
  // Implied folders (blob names without a directory's record) have no access control to change.
  const records = listed.flatMap((entry) => (entry.kind === 'blob' ? [entry.record] : []));
  for (const [index, record] of records.entries()) {
    if (index === budget) return answer(tally, record.name);
    if (!(await changePath(call, tally, filesystem, record, acl, mode)) && !force) return answer(tally, undefined);
  }
  return answer(tally, undefined);
}

/** One path's change, retried while others write it; false when it failed (counted in `tally`). */
async function changePath(
  call: DatalakeCall,
  tally: Tally,
  filesystem: string,
  first: BlobRecord,
  acl: string,
  mode: AclMode,
): Promise<boolean> {
  const directory = isDirectory(decodePathState(first.state));
  return changeOne(tally, first.name, directory, async () => {
    let record: BlobRecord | undefined = first;
    for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
      if (record === undefined) return; // deleted meanwhile: nothing to change (chosen: not a failure)
      const state = decodePathState(record.state);
      const current = accessOf(state);
      requireOwnership(call, current, undefined, undefined);
      const next = applyAcl(current, acl, mode, isDirectory(state));
      const atMs = nowMs(call);
      const written = {
        ...record,
        etag: newEtag(atMs),
        lastModifiedMs: atMs,
        state: encodePathState({ ...state, datalake: next }),
      };
      const outcome = await call.services.blobs.putBlob(call.account, written, { kind: 'keep' }, record.etag);
      if (outcome === 'ok') return;
      if (outcome === 'containerNotFound') throw new StorageError('FilesystemNotFound');
      record = (await findPath(call, filesystem, record.name))?.record;
    }
    throw new StorageError('ServerBusy');
  });
}

async function changeOne(
  tally: Tally,
  name: string,
  directory: boolean,
  change: () => Promise<void>,
): Promise<boolean> {
  try {
    await change();
  } catch (error) {
    if (!(error instanceof StorageError) || error.code === 'FilesystemNotFound') throw error;
    tally.failureCount++;
    tally.failedEntries.push({ errorMessage: error.message, name, type: directory ? 'DIRECTORY' : 'FILE' });
    return false;
  }
  if (directory) tally.directoriesSuccessful++;
  else tally.filesSuccessful++;
  return true;
}

function answer(tally: Tally, next: string | undefined): Reply {
  const headers: Record<string, string> = next === undefined ? {} : { 'x-ms-continuation': encodeContinuation(next) };
  return jsonReply(200, tally, headers);
}
