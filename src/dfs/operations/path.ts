// Path operations but data and rename: Create (file or directory), Delete, Get Properties
// (getStatus, getAccessControl), Set Access Control
// (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path). A path is a base
// blob of its file system (state.ts): a file a block blob, a directory its marker.
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import type { BlobRecord, WriteOutcome } from '../../storage/blob-store.js';
import type { DeleteTreeOutcome } from '../../storage/path-store.js';
import { newEtag } from '../../wire/version-etag.js';
import { casAttemptsMax, deleteStepMax } from '../limits.js';
import { executeBit, permits, readBit, stickyAllows, writeBit } from '../../domain/posix-acl.js';
import { aclText, applyAcl, inheritedAccess } from '../acl.js';
import {
  accessOf,
  isDirectory,
  newPathState,
  propertiesOf,
  superuser,
  encodePathState,
  type AccessControl,
  decodePathState,
  type PathState,
} from '../state.js';
import { booleanParam, formatMode, formatProperties, maskMode, parseMode, parseProperties } from '../wire.js';
import {
  checkConditions,
  checkLease,
  findPath,
  header,
  nowMs,
  pathWriteFailure,
  requirePath,
  versionHeaders,
  type DatalakeCall,
} from './access.js';
import { callerOf, refused, requireAccess, rootAccess, rootAccessDefault } from './permissions.js';

/** The content headers a path keeps, from x-ms-content-type and its kin (path/create, path/update flush). */
export function contentHeadersOf(call: DatalakeCall): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {
    contentType: header(call, 'x-ms-content-type'),
    contentEncoding: header(call, 'x-ms-content-encoding'),
    contentLanguage: header(call, 'x-ms-content-language'),
    contentDisposition: header(call, 'x-ms-content-disposition'),
    cacheControl: header(call, 'x-ms-cache-control'),
    contentMd5: header(call, 'x-ms-content-md5'),
  };
  return Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined));
}

/** x-ms-umask as 4 octal digits (default 0027: path/create). */
function umaskOf(call: DatalakeCall): string {
  const umaskText = header(call, 'x-ms-umask') ?? '0027';
  if (!/^[0-1]?[0-7]{3}$/.test(umaskText)) throw invalidHeaderValue('x-ms-umask', umaskText);
  return umaskText.padStart(4, '0');
}

/**
 * The access control of a new path under `parent` (path/create, data-lake-storage-access-control):
 * owned by the bearer caller (the superuser's x-ms-owner, default $superuser, otherwise), its group
 * the parent's (x-ms-group may name another), the mode x-ms-permissions (default 0777 for a
 * directory, 0666 for a file) masked by x-ms-umask or limiting the parent's default ACL, and
 * x-ms-acl set over that. A bearer caller may name only itself as owner and only a group it is in.
 */
function newAccess(call: DatalakeCall, parent: AccessControl, directory: boolean, explicit = true): AccessControl {
  const caller = callerOf(call);
  const permissions = explicit ? header(call, 'x-ms-permissions') : undefined;
  const requested =
    permissions === undefined ? (directory ? '0777' : '0666') : parseMode('x-ms-permissions', permissions);
  const umask = umaskOf(call);
  const givenOwner = explicit ? header(call, 'x-ms-owner') : undefined;
  const givenGroup = explicit ? header(call, 'x-ms-group') : undefined;
  if (caller !== undefined) {
    if (givenOwner !== undefined && givenOwner !== caller.user) throw refused('Only the superuser sets another owner.');
    if (givenGroup !== undefined && givenGroup !== parent.group && !caller.groups.includes(givenGroup))
      throw refused('The owning group must be a group the caller is in.');
  }
  const owner = caller?.user ?? givenOwner ?? superuser;
  const group = givenGroup ?? parent.group;
  const access = inheritedAccess(parent, directory, requested, maskMode(requested, umask), owner, group);
  const acl = explicit ? header(call, 'x-ms-acl') : undefined;
  return acl === undefined ? access : applyAcl(access, acl, 'set', directory);
}

function recordOf(filesystem: string, path: string, state: PathState, atMs: number): BlobRecord {
  return {
    container: filesystem,
    name: path,
    snapshot: '',
    etag: newEtag(atMs),
    lastModifiedMs: atMs,
    sizeBytes: 0,
    state: encodePathState(state),
  };
}

/** The access control of the directory `path` names ('' the root); undefined when it is missing. */
async function directoryAccess(
  call: DatalakeCall,
  filesystem: string,
  path: string,
): Promise<AccessControl | undefined> {
  if (path === '') return rootAccess(call, filesystem);
  const found = await findPath(call, filesystem, path);
  if (found === undefined) return undefined;
  if (!isDirectory(found.state)) throw new StorageError('PathConflict');
  return accessOf(found.state);
}

/**
 * Makes each missing directory above `path` (the service creates a path's parents), each
 * inheriting from the one above it as a new directory does; 409 PathConflict when one of them is a
 * file. Answers the access control of `path`'s parent.
 */
async function ensureParents(call: DatalakeCall, filesystem: string, path: string): Promise<AccessControl> {
  const segments = path.split('/').slice(0, -1);
  let above = await rootAccess(call, filesystem);
  if (above === undefined) throw new StorageError('FilesystemNotFound');
  for (let i = 1; i <= segments.length; i++) {
    const parent = segments.slice(0, i).join('/');
    const existing = await directoryAccess(call, filesystem, parent);
    if (existing !== undefined) {
      above = existing;
      continue;
    }
    const atMs = nowMs(call);
    const access = newAccess(call, above, true, false);
    const state = newPathState(true, atMs, [], access);
    const outcome = await call.services.blobs.putBlob(
      call.account,
      recordOf(filesystem, parent, state, atMs),
      { kind: 'replace', blocks: [] },
      null,
    );
    if (outcome === 'containerNotFound') throw new StorageError('FilesystemNotFound');
    // Another request made it meanwhile: its access control is the one that holds.
    above = outcome === 'ok' ? access : ((await directoryAccess(call, filesystem, parent)) ?? access);
  }
  return above;
}

/**
 * PUT ?resource=file|directory: 201 Created, an empty file or a directory. An existing file is
 * replaced (emptied), an existing directory keeps its contents and gets the new properties; a
 * file over a directory or back is 409 PathConflict; If-None-Match: * on an existing path is 409
 * PathAlreadyExists.
 */
export async function createPath(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const resource = call.query.get('resource');
  if (resource !== 'file' && resource !== 'directory') {
    throw new StorageError('InvalidQueryParameterValue', `resource=${resource ?? ''} is not file or directory.`);
  }
  const directory = resource === 'directory';
  const properties = parseProperties(header(call, 'x-ms-properties'));
  const headers = contentHeadersOf(call);
  await requireAccess(call, filesystem, path, { parent: writeBit | executeBit });
  const access = newAccess(call, await ensureParents(call, filesystem, path), directory);
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await findPath(call, filesystem, path);
    if (found !== undefined && header(call, 'if-none-match')?.trim() === '*')
      throw new StorageError('PathAlreadyExists');
    checkConditions(call, found?.record);
    checkLease(call, found?.state);
    if (found !== undefined && isDirectory(found.state) !== directory) throw new StorageError('PathConflict');
    const atMs = nowMs(call);
    // A bearer caller creating a directory that exists does not take it over: it keeps its owner
    // and ACL (chosen; a replaced file is a new file, the caller's, as a delete and a create are).
    const kept = found !== undefined && directory && callerOf(call) !== undefined ? accessOf(found.state) : access;
    const state = {
      ...newPathState(directory, found?.state.createdMs ?? atMs, properties, kept, headers),
      lease: found?.state.lease,
    };
    const record = recordOf(filesystem, path, state, atMs);
    // A directory's marker has no content; replacing it leaves its contents (other blobs) alone.
    const outcome = await call.services.blobs.putBlob(
      call.account,
      record,
      { kind: 'replace', blocks: [] },
      found?.record.etag ?? null,
    );
    if (outcome === 'ok') return { status: 201, headers: { ...versionHeaders(record), 'Content-Length': '0' } };
    if (outcome !== 'etagMismatch') throw pathWriteFailure(outcome);
  }
  throw new StorageError('ServerBusy');
}

/** Whether any blob is named under `path/`. */
async function hasChildren(call: DatalakeCall, filesystem: string, path: string): Promise<boolean> {
  const listed = await call.services.blobs.listBlobs(call.account, filesystem, {
    prefix: `${path}/`,
    limit: 1,
    snapshots: false,
    uncommitted: true,
  });
  return listed.length > 0;
}

/**
 * DELETE ?recursive=…: 200 OK. A directory with contents needs recursive=true (409
 * DirectoryNotEmpty); it goes with everything under it in one transaction of the path store
 * (deleteTree): a kill -9 leaves all of it or none of it. No continuation is ever answered.
 */
export async function deletePath(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const recursive = booleanParam(call.query, 'recursive') ?? false;
  await requireAccess(call, filesystem, path, { parent: writeBit | executeBit, sticky: true });
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await requirePath(call, filesystem, path);
    checkConditions(call, found.record);
    checkLease(call, found.state);
    let outcome: WriteOutcome | DeleteTreeOutcome;
    if (isDirectory(found.state) && (await hasChildren(call, filesystem, path))) {
      if (!recursive) throw new StorageError('DirectoryNotEmpty');
      await requireTreeAccess(call, filesystem, path, accessOf(found.state));
      outcome = await call.services.paths.deleteTree(call.account, filesystem, path, found.record.etag);
    } else {
      const key = { container: filesystem, name: path, snapshot: '' };
      outcome = await call.services.blobs.deleteBlob(
        call.account,
        key,
        { base: true, snapshots: true },
        found.record.etag,
      );
    }
    if (outcome === 'ok') return { status: 200 };
    if (outcome === 'pathNotFound') throw new StorageError('PathNotFound');
    if (outcome !== 'etagMismatch') throw pathWriteFailure(outcome);
  }
  throw new StorageError('ServerBusy');
}

/**
 * A bearer caller's recursive delete: the directory and every directory within it need r, w and x
 * (data-lake-storage-access-control: which permissions are required to recursively delete); a
 * sticky directory's children, their owner or its. Checked before anything goes.
 */
async function requireTreeAccess(
  call: DatalakeCall,
  filesystem: string,
  path: string,
  access: AccessControl,
): Promise<void> {
  const caller = callerOf(call);
  if (caller === undefined) return;
  const all = readBit | writeBit | executeBit;
  if (!permits(caller, access, all)) throw refused('A recursive delete needs rwx on the directory.');
  const directories = new Map<string, AccessControl>([[path, access]]);
  let from: string | undefined;
  for (;;) {
    const listed = await call.services.blobs.listBlobs(call.account, filesystem, {
      prefix: `${path}/`,
      from: from === undefined ? undefined : { name: from, snapshot: '' },
      limit: deleteStepMax,
      snapshots: false,
      uncommitted: false,
    });
    for (const entry of listed) {
      if (entry.kind !== 'blob' || entry.record.name === from) continue;
      const state = decodePathState(entry.record.state);
      const child = accessOf(state);
      const parent = directories.get(entry.record.name.slice(0, entry.record.name.lastIndexOf('/')));
      if (parent !== undefined && !stickyAllows(caller, parent, child))
        throw refused('The sticky bit of a directory within allows only the owners to delete its children.');
      if (!isDirectory(state)) continue;
      if (!permits(caller, child, all)) throw refused('A recursive delete needs rwx on every directory within.');
      directories.set(entry.record.name, child);
    }
    if (listed.length < deleteStepMax) return;
    const last = listed[listed.length - 1]!;
    from = last.kind === 'blob' ? last.record.name : last.name;
  }
}

export function accessHeaders(access: AccessControl, withAcl: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ms-owner': access.owner,
    'x-ms-group': access.group,
    'x-ms-permissions': formatMode(access.mode) + (access.acl === '' ? '' : '+'),
  };
  if (withAcl) headers['x-ms-acl'] = aclText(access);
  return headers;
}

/**
 * HEAD ?action=getStatus|getAccessControl (a HEAD without action is the Blob API's Get Blob
 * Properties: docs/datalake.md): x-ms-resource-type, ETag, Last-Modified, Content-Length, owner,
 * group and permissions; getAccessControl adds x-ms-acl; getStatus leaves out x-ms-properties.
 */
export async function getPathProperties(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const action = call.query.get('action');
  await requireAccess(call, filesystem, path, {});
  if (path === '') return getRootProperties(call, filesystem, action === 'getAccessControl');
  const found = await requirePath(call, filesystem, path);
  checkConditions(call, found.record);
  const directory = isDirectory(found.state);
  const headers: Record<string, string> = {
    ...versionHeaders(found.record),
    'x-ms-resource-type': directory ? 'directory' : 'file',
    ...accessHeaders(accessOf(found.state), action === 'getAccessControl'),
  };
  if (action !== 'getStatus' && action !== 'getAccessControl') {
    headers['x-ms-properties'] = formatProperties(propertiesOf(found.state));
  }
  headers['Content-Length'] = String(found.record.sizeBytes);
  return { status: 200, headers };
}

/** HEAD of the root directory (`/{fs}/?action=getStatus|getAccessControl`): its access control. */
async function getRootProperties(call: DatalakeCall, filesystem: string, withAcl: boolean): Promise<Reply> {
  const record = await call.services.blobs.getContainer(call.account, filesystem);
  if (record === undefined) throw new StorageError('FilesystemNotFound');
  checkConditions(call, record);
  const access = (await rootAccess(call, filesystem)) ?? rootAccessDefault;
  const headers = { ...versionHeaders(record), 'x-ms-resource-type': 'directory', ...accessHeaders(access, withAcl) };
  return { status: 200, headers: { ...headers, 'Content-Length': '0' } };
}

/**
 * PATCH ?action=setAccessControl: x-ms-owner, x-ms-group, and either x-ms-permissions or x-ms-acl
 * (not both: 400). A bearer caller must own the path, may not give it another owner and may give
 * it only a group it is in (data-lake-storage-access-control: the owning user, changing the owning
 * group); the root directory ('' path) is the file system's.
 */
export async function setAccessControl(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const permissions = header(call, 'x-ms-permissions');
  const acl = header(call, 'x-ms-acl');
  if (permissions !== undefined && acl !== undefined) {
    throw new StorageError('InvalidHeaderValue', 'x-ms-permissions and x-ms-acl are mutually exclusive.');
  }
  await requireAccess(call, filesystem, path, {});
  const change = (current: AccessControl, directory: boolean): AccessControl => {
    requireOwnership(call, current, header(call, 'x-ms-owner'), header(call, 'x-ms-group'));
    const next: AccessControl = {
      owner: header(call, 'x-ms-owner') ?? current.owner,
      group: header(call, 'x-ms-group') ?? current.group,
      mode: permissions === undefined ? current.mode : parseMode('x-ms-permissions', permissions),
      acl: current.acl,
    };
    return acl === undefined ? next : applyAcl(next, acl, 'set', directory);
  };
  if (path === '') return setRootAccess(call, filesystem, (current) => change(current, true));
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await requirePath(call, filesystem, path);
    checkConditions(call, found.record);
    checkLease(call, found?.state);
    const next = change(accessOf(found.state), isDirectory(found.state));
    const atMs = nowMs(call);
    // Access control changes neither content nor ETag's meaning for readers: a new ETag, as any write.
    const record = {
      ...found.record,
      etag: newEtag(atMs),
      lastModifiedMs: atMs,
      state: encodePathState({ ...found.state, datalake: next }),
    };
    const outcome = await call.services.blobs.putBlob(call.account, record, { kind: 'keep' }, found.record.etag);
    if (outcome === 'ok') return { status: 200, headers: versionHeaders(record) };
    if (outcome !== 'etagMismatch') throw pathWriteFailure(outcome);
  }
  throw new StorageError('ServerBusy');
}

/**
 * Throws 403 unless the bearer caller may change `current`'s access control: it owns the path; a
 * new owner is the superuser's to give; a new group must be one the caller is in.
 */
export function requireOwnership(
  call: DatalakeCall,
  current: AccessControl,
  owner: string | undefined,
  group: string | undefined,
): void {
  const caller = callerOf(call);
  if (caller === undefined) return;
  if (caller.user !== current.owner) throw refused('Only the owner of a path changes its access control.');
  if (owner !== undefined && owner !== current.owner) throw refused('Only the superuser changes the owner of a path.');
  if (group !== undefined && group !== current.group && !caller.groups.includes(group))
    throw refused('The owner may change the owning group only to a group it is in.');
}

/** The root directory's access control changed by `change`, kept in the container's state. */
export async function setRootAccess(
  call: DatalakeCall,
  filesystem: string,
  change: (current: AccessControl) => AccessControl,
): Promise<Reply> {
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const record = await call.services.blobs.getContainer(call.account, filesystem);
    if (record === undefined) throw new StorageError('FilesystemNotFound');
    checkConditions(call, record);
    const state = JSON.parse(record.state) as Record<string, unknown>;
    const next = change((state['datalake'] as AccessControl | undefined) ?? rootAccessDefault);
    const atMs = nowMs(call);
    const updated = {
      ...record,
      etag: newEtag(atMs),
      lastModifiedMs: atMs,
      state: JSON.stringify({ ...state, datalake: next }),
    };
    const outcome = await call.services.blobs.updateContainer(call.account, updated, record.etag);
    if (outcome === 'ok') return { status: 200, headers: versionHeaders(updated) };
    if (outcome === 'containerNotFound') throw new StorageError('FilesystemNotFound');
  }
  throw new StorageError('ServerBusy');
}
