// Path operations but data and rename: Create (file or directory), Delete, Get Properties
// (getStatus, getAccessControl), Set Access Control
// (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path). A path is a base
// blob of its file system (state.ts): a file a block blob, a directory its marker.
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import type { BlobRecord, WriteOutcome } from '../../storage/blob-store.js';
import type { DeleteTreeOutcome } from '../../storage/path-store.js';
import { newEtag } from '../../wire/version-etag.js';
import { casAttemptsMax } from '../limits.js';
import {
  accessOf,
  isDirectory,
  newPathState,
  propertiesOf,
  superuser,
  encodePathState,
  type AccessControl,
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
  type FoundPath,
} from './access.js';

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

/**
 * The access control of a new path: x-ms-owner and x-ms-group (default $superuser), x-ms-permissions
 * (default 0777 for a directory, 0666 for a file) masked by x-ms-umask (default 0027), x-ms-acl
 * kept as given (path/create).
 */
function newAccess(call: DatalakeCall, directory: boolean): AccessControl {
  const permissions = header(call, 'x-ms-permissions');
  const mode = permissions === undefined ? (directory ? '0777' : '0666') : parseMode('x-ms-permissions', permissions);
  const umaskText = header(call, 'x-ms-umask') ?? '0027';
  if (!/^[0-1]?[0-7]{3}$/.test(umaskText)) throw invalidHeaderValue('x-ms-umask', umaskText);
  return {
    owner: header(call, 'x-ms-owner') ?? superuser,
    group: header(call, 'x-ms-group') ?? superuser,
    mode: maskMode(mode, umaskText.padStart(4, '0')),
    acl: header(call, 'x-ms-acl') ?? '',
  };
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

/**
 * Makes each missing directory above `path` (the service creates a path's parents); 409 PathConflict
 * when one of them is a file.
 */
async function ensureParents(call: DatalakeCall, filesystem: string, path: string): Promise<void> {
  const segments = path.split('/').slice(0, -1);
  for (let i = 1; i <= segments.length; i++) {
    const parent = segments.slice(0, i).join('/');
    const found = await findPath(call, filesystem, parent);
    if (found !== undefined) {
      if (!isDirectory(found.state)) throw new StorageError('PathConflict');
      continue;
    }
    const atMs = nowMs(call);
    const state = newPathState(true, atMs, [], { owner: superuser, group: superuser, mode: '0750', acl: '' });
    const outcome = await call.services.blobs.putBlob(
      call.account,
      recordOf(filesystem, parent, state, atMs),
      { kind: 'replace', blocks: [] },
      null,
    );
    if (outcome === 'containerNotFound') throw new StorageError('FilesystemNotFound');
  }
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
  const access = newAccess(call, directory);
  const headers = contentHeadersOf(call);
  await ensureParents(call, filesystem, path);
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await findPath(call, filesystem, path);
    if (found !== undefined && header(call, 'if-none-match')?.trim() === '*')
      throw new StorageError('PathAlreadyExists');
    checkConditions(call, found?.record);
    checkLease(call, found?.state);
    if (found !== undefined && isDirectory(found.state) !== directory) throw new StorageError('PathConflict');
    const atMs = nowMs(call);
    const state = {
      ...newPathState(directory, found?.state.createdMs ?? atMs, properties, access, headers),
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
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await requirePath(call, filesystem, path);
    checkConditions(call, found.record);
    checkLease(call, found.state);
    let outcome: WriteOutcome | DeleteTreeOutcome;
    if (isDirectory(found.state) && (await hasChildren(call, filesystem, path))) {
      if (!recursive) throw new StorageError('DirectoryNotEmpty');
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

function accessHeaders(found: FoundPath, withAcl: boolean): Record<string, string> {
  const access = accessOf(found.state);
  const headers: Record<string, string> = {
    'x-ms-owner': access.owner,
    'x-ms-group': access.group,
    'x-ms-permissions': formatMode(access.mode) + (access.acl === '' ? '' : '+'),
  };
  if (withAcl) headers['x-ms-acl'] = aclText(access);
  return headers;
}

/** The whole ACL: the mode's user::, group:: and other:: entries, then the named and default ones. */
function aclText(access: AccessControl): string {
  const symbols = formatMode(access.mode);
  const plain = (text: string) => text.replace(/[tT]$/, (bit) => (bit === 't' ? 'x' : '-'));
  const entries = [
    `user::${symbols.slice(0, 3)}`,
    `group::${symbols.slice(3, 6)}`,
    `other::${plain(symbols.slice(6, 9))}`,
  ];
  return [...entries, ...(access.acl === '' ? [] : access.acl.split(','))].join(',');
}

/**
 * HEAD ?action=getStatus|getAccessControl (a HEAD without action is the Blob API's Get Blob
 * Properties: docs/datalake.md): x-ms-resource-type, ETag, Last-Modified, Content-Length, owner,
 * group and permissions; getAccessControl adds x-ms-acl; getStatus leaves out x-ms-properties.
 */
export async function getPathProperties(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const action = call.query.get('action');
  const found = await requirePath(call, filesystem, path);
  checkConditions(call, found.record);
  const directory = isDirectory(found.state);
  const headers: Record<string, string> = {
    ...versionHeaders(found.record),
    'x-ms-resource-type': directory ? 'directory' : 'file',
    ...accessHeaders(found, action === 'getAccessControl'),
  };
  if (action !== 'getStatus' && action !== 'getAccessControl') {
    headers['x-ms-properties'] = formatProperties(propertiesOf(found.state));
  }
  headers['Content-Length'] = String(found.record.sizeBytes);
  return { status: 200, headers };
}

/**
 * PATCH ?action=setAccessControl: x-ms-owner, x-ms-group, and either x-ms-permissions or x-ms-acl
 * (not both: 400). Kept and answered as set; not enforced (Shared Key is the superuser).
 */
export async function setAccessControl(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const permissions = header(call, 'x-ms-permissions');
  const acl = header(call, 'x-ms-acl');
  if (permissions !== undefined && acl !== undefined) {
    throw new StorageError('InvalidHeaderValue', 'x-ms-permissions and x-ms-acl are mutually exclusive.');
  }
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await requirePath(call, filesystem, path);
    checkConditions(call, found.record);
    checkLease(call, found?.state);
    const current = accessOf(found.state);
    const next: AccessControl = {
      owner: header(call, 'x-ms-owner') ?? current.owner,
      group: header(call, 'x-ms-group') ?? current.group,
      mode: permissions === undefined ? current.mode : parseMode('x-ms-permissions', permissions),
      acl: current.acl,
      ...(acl === undefined ? {} : fromAcl(acl, current)),
    };
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

const aclEntry = /^(default:)?(user|group|mask|other):[^:,]*:[r-][w-][x-]$/;

/** x-ms-acl: the mode from its user::, group:: and other:: entries, the rest kept; a malformed entry 400. */
function fromAcl(text: string, current: AccessControl): { mode: string; acl: string } {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => !aclEntry.test(entry))) throw invalidHeaderValue('x-ms-acl', text);
  const symbols = formatMode(current.mode).split('');
  const extra: string[] = [];
  for (const entry of entries) {
    const [scope, id, perms] = entry.split(':') as [string, string, string];
    const base = { user: 0, group: 3, other: 6 }[scope as 'user' | 'group' | 'other'];
    if (id === '' && base !== undefined && !entry.startsWith('default:')) symbols.splice(base, 3, ...perms.split(''));
    else extra.push(entry);
  }
  return { mode: parseMode('x-ms-acl', symbols.slice(0, 9).join('')), acl: extra.join(',') };
}
