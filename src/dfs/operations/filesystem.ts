// File system operations: Create, Delete, Get and Set Properties, List Filesystems
// (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/filesystem). A file
// system is a container of the Blob service: the container's record, with its state in the Blob
// service's stored form (JSON `{metadata, policies}`), the properties as its metadata.
import { StorageError } from '../../errors.js';
import { integerParam } from '../../http/query-params.js';
import type { Reply } from '../../http/respond.js';
import type { ContainerRecord } from '../../storage/blob-store.js';
import { httpDate, newEtag, visibleEtag } from '../../wire/version-etag.js';
import { casAttemptsMax, listPageMax } from '../limits.js';
import { decodeContinuation, encodeContinuation, formatProperties, jsonReply, parseProperties } from '../wire.js';
import type { PathState } from '../state.js';
import { checkConditions, checkLease, header, nowMs, versionHeaders, type DatalakeCall } from './access.js';
import { callerOf } from './permissions.js';
import { createdRootAccess } from '../../domain/posix-acl.js';

interface FilesystemState extends Pick<PathState, 'lease'> {
  readonly metadata: readonly (readonly [string, string])[];
  readonly [other: string]: unknown;
}

/** A container's name (naming-and-referencing-containers--blobs--and-metadata): 3 to 63 of a-z, 0-9, single hyphens. */
function checkFilesystemName(name: string): void {
  if (name.length < 3 || name.length > 63 || !/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
    throw new StorageError('InvalidResourceName');
  }
}

async function requireRecord(call: DatalakeCall, filesystem: string): Promise<ContainerRecord> {
  const record = await call.services.blobs.getContainer(call.account, filesystem);
  if (record === undefined) throw new StorageError('FilesystemNotFound');
  return record;
}

function stateOf(record: ContainerRecord): FilesystemState {
  return JSON.parse(record.state) as FilesystemState;
}

/** 201 Created; 409 FilesystemAlreadyExists. */
export async function createFilesystem(call: DatalakeCall, filesystem: string): Promise<Reply> {
  checkFilesystemName(filesystem);
  const metadata = parseProperties(header(call, 'x-ms-properties'));
  const atMs = nowMs(call);
  // The root directory of a bearer caller's file system is its own; else the superuser's.
  const datalake = createdRootAccess(callerOf(call));
  const state: FilesystemState = { metadata, policies: [], ...(datalake && { datalake }) };
  const record = { name: filesystem, etag: newEtag(atMs), lastModifiedMs: atMs, state: JSON.stringify(state) };
  if (!(await call.services.blobs.createContainer(call.account, record))) {
    throw new StorageError('FilesystemAlreadyExists');
  }
  return { status: 201, headers: { ...versionHeaders(record), 'x-ms-namespace-enabled': 'true' } };
}

/** 202 Accepted: the container and everything in it go at once (the blob store's deleteContainer). */
export async function deleteFilesystem(call: DatalakeCall, filesystem: string): Promise<Reply> {
  const record = await requireRecord(call, filesystem);
  checkConditions(call, record);
  checkLease(call, stateOf(record), 'x-ms-lease-id', 'container');
  const outcome = await call.services.blobs.deleteContainer(call.account, filesystem, record.etag);
  if (outcome === 'containerNotFound') throw new StorageError('FilesystemNotFound');
  if (outcome !== 'ok') throw new StorageError('ConditionNotMet');
  return { status: 202 };
}

export async function getFilesystemProperties(call: DatalakeCall, filesystem: string): Promise<Reply> {
  const record = await requireRecord(call, filesystem);
  return {
    status: 200,
    headers: {
      ...versionHeaders(record),
      'x-ms-properties': formatProperties(stateOf(record).metadata),
      'x-ms-namespace-enabled': 'true',
    },
  };
}

/** Replaces the properties (as Set Container Metadata replaces metadata); the conditional headers apply. */
export async function setFilesystemProperties(call: DatalakeCall, filesystem: string): Promise<Reply> {
  const metadata = parseProperties(header(call, 'x-ms-properties'));
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const record = await requireRecord(call, filesystem);
    checkConditions(call, record);
    const atMs = nowMs(call);
    const next = {
      ...record,
      etag: newEtag(atMs),
      lastModifiedMs: atMs,
      state: JSON.stringify({ ...stateOf(record), metadata }),
    };
    const outcome = await call.services.blobs.updateContainer(call.account, next, record.etag);
    if (outcome === 'ok') return { status: 200, headers: versionHeaders(next) };
    if (outcome === 'containerNotFound') throw new StorageError('FilesystemNotFound');
  }
  throw new StorageError('ServerBusy');
}

/** GET /?resource=account: `{"filesystems":[{name, lastModified, etag}]}`, paged by x-ms-continuation. */
export async function listFilesystems(call: DatalakeCall): Promise<Reply> {
  const limit = integerParam(call.query, 'maxResults', { min: 1, max: 2 ** 31 - 1 }, listPageMax);
  const pageSize = Math.min(limit, listPageMax);
  const continuation = call.query.get('continuation');
  const from = continuation === null ? undefined : decodeContinuation(continuation);
  const prefix = call.query.get('prefix') ?? '';
  const records = await call.services.blobs.listContainers(call.account, prefix, from, pageSize + 1);
  const page = records.slice(0, pageSize);
  const headers: Record<string, string> = {};
  if (records.length > pageSize) headers['x-ms-continuation'] = encodeContinuation(records[pageSize]!.name);
  const filesystems = page.map((record) => ({
    name: record.name,
    lastModified: httpDate(record.lastModifiedMs),
    etag: visibleEtag(record.etag),
  }));
  return jsonReply(200, { filesystems }, headers);
}
