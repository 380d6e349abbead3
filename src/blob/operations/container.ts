// The Blob service's container operations: Create, Delete, Get Properties, Get/Set Metadata,
// Get/Set ACL (https://learn.microsoft.com/rest/api/storageservices/operations-on-containers).
// Every change is a compare-and-swap on the ETag read (storage/blob-store.ts), tried again when
// another request changed the container in between (cas-retry.ts).
import { callerOfPrincipal, createdRootAccess, type AccessControl } from '../../domain/posix-acl.js';
import { invalidHeaderValue, StorageError } from '../../errors.js';
import { firstHeader } from '../../http/headers.js';
import { metadataFromHeaders, metadataHeaders } from '../../http/metadata-headers.js';
import type { Reply } from '../../http/respond.js';
import type { ServiceCall } from '../../http/service-definition.js';
import type { ContainerRecord } from '../../storage/blob-store.js';
import { parseSignedIdentifiers, writeSignedIdentifiers } from '../../wire/acl-xml.js';
import { checkContainerName } from '../wire/container-names.js';
import { leaseIdOf, nowMs } from './access.js';
import { containerKeep } from './container-soft-delete.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { checkWriteConditions, parseConditions, refuseTagConditions } from '../wire/conditions.js';
import {
  decodeContainerState,
  encodeContainerState,
  newContainerState,
  type ContainerState,
  type PublicAccess,
} from '../state/container.js';
import { checkLeaseForWrite, leaseHeaders } from '../state/leases.js';
import type { BlobServices } from '../services.js';
import { visibleEtag } from '../wire/etag.js';
import { bodyText, httpDate, newEtag, xmlReply } from '../wire/reply-headers.js';

type Call = ServiceCall<BlobServices>;

/** Blob permission letters a container's stored access policy may hold (create-service-sas). */
export const containerPolicyLetters = 'racwdxyltmeopi';

export async function createContainer(call: Call, name: string): Promise<Reply> {
  checkContainerName(name);
  const state: ContainerState = {
    ...newContainerState,
    metadata: [...metadataFromHeaders(call.rawHeaders)],
    publicAccess: publicAccessOf(call),
    // The root directory's access control (docs/datalake.md): a bearer caller's own.
    ...optionalDatalake(createdRootAccess(callerOfPrincipal(call.access.principal))),
  };
  const atMs = nowMs(call);
  const record = { name, etag: newEtag(atMs), lastModifiedMs: atMs, state: encodeContainerState(state) };
  // A name whose container was deleted is free at once, even while its old blobs are still being
  // reclaimed: the store keys them by the old container, so the new one never sees them. Azure
  // answers 409 ContainerBeingDeleted for a while instead (delete-container), a side effect of its
  // garbage collection that clients must retry through for an unknown time; Cerulean's reclaim
  // runs every minute and has nothing to protect by refusing, and tests that delete and create
  // one name again (as Azurite allows) keep working.
  if (!(await call.services.blobs.createContainer(call.account, record)))
    throw new StorageError('ContainerAlreadyExists');
  return { status: 201, headers: versionHeaders(record) };
}

function optionalDatalake(datalake: AccessControl | undefined): { datalake?: AccessControl } {
  return datalake === undefined ? {} : { datalake };
}

/**
 * 202 Accepted; a leased container needs its lease id (delete-container). The container is gone at
 * once for every request; its blobs are reclaimed in the background (BlobStore.deleteContainer),
 * or, with container soft delete, once its days have passed (container-soft-delete.ts).
 */
export async function deleteContainer(call: Call, name: string): Promise<Reply> {
  return retryWhileRaced('The container kept changing; try again.', async () => {
    const record = await existing(call, name);
    checkDateConditions(call, record);
    checkLease(call, decodeContainerState(record.state), true);
    const keep = containerKeep(call);
    const outcome = await call.services.blobs.deleteContainer(call.account, name, record.etag, keep);
    if (outcome === 'ok') return { status: 202 };
    if (outcome === 'containerNotFound') throw new StorageError('ContainerNotFound');
    return raced;
  });
}

/** Get Container Properties (GET or HEAD): metadata, lease and public access as headers. */
export async function getContainerProperties(call: Call, name: string): Promise<Reply> {
  const { record, state } = await readableContainer(call, name);
  const atMs = nowMs(call);
  return {
    status: 200,
    headers: {
      ...versionHeaders(record),
      ...metadataHeaders(new Map(state.metadata)),
      ...leaseHeaders(state.lease, atMs),
      ...publicAccessHeader(state),
      'x-ms-has-immutability-policy': 'false',
      'x-ms-has-legal-hold': 'false',
      // Every container is encrypted with the account's key; no encryption scopes are served.
      'x-ms-default-encryption-scope': '$account-encryption-key',
      'x-ms-deny-encryption-scope-override': 'false',
    },
  };
}

export async function getContainerMetadata(call: Call, name: string): Promise<Reply> {
  const { record, state } = await readableContainer(call, name);
  return { status: 200, headers: { ...versionHeaders(record), ...metadataHeaders(new Map(state.metadata)) } };
}

/** Replaces all metadata; If-Unmodified-Since is not allowed here (set-container-metadata). */
export async function setContainerMetadata(call: Call, name: string): Promise<Reply> {
  if (call.headers['if-unmodified-since'] !== undefined) {
    throw new StorageError('UnsupportedHeader', 'If-Unmodified-Since is not supported by Set Container Metadata.');
  }
  const metadata = [...metadataFromHeaders(call.rawHeaders)];
  const record = await changeContainer(call, name, (state) => ({ ...state, metadata }));
  return { status: 200, headers: versionHeaders(record) };
}

/** The stored access policies, and the public access level as a header (get-container-acl). */
export async function getContainerAcl(call: Call, name: string): Promise<Reply> {
  const { record, state } = await readableContainer(call, name);
  return xmlReply(200, writeSignedIdentifiers(state.policies), {
    ...versionHeaders(record),
    ...publicAccessHeader(state),
  });
}

/** Sets both the policies (at most 5) and the public access level: no header makes the container private. */
export async function setContainerAcl(call: Call, name: string): Promise<Reply> {
  const policies = parseSignedIdentifiers(bodyText(call.body), containerPolicyLetters);
  const publicAccess = publicAccessOf(call);
  const record = await changeContainer(call, name, (state) => ({ ...state, policies, publicAccess }));
  return { status: 200, headers: versionHeaders(record) };
}

/**
 * Reads the container, checks the request's date conditions and lease, and writes the changed
 * state with a new ETag if nothing changed it meanwhile; answers the record written.
 */
export async function changeContainer(
  call: Call,
  name: string,
  change: (state: ContainerState) => ContainerState,
): Promise<ContainerRecord> {
  return retryWhileRaced('The container kept changing; try again.', async () => {
    const record = await existing(call, name);
    checkDateConditions(call, record);
    const state = decodeContainerState(record.state);
    checkLease(call, state, false);
    const atMs = nowMs(call);
    const next = {
      name,
      etag: newEtag(atMs),
      lastModifiedMs: atMs,
      state: encodeContainerState(change(state)),
    };
    const outcome = await call.services.blobs.updateContainer(call.account, next, record.etag);
    if (outcome === 'ok') return next;
    if (outcome === 'containerNotFound') throw new StorageError('ContainerNotFound');
    return raced;
  });
}

/** The container's record; 404 ContainerNotFound (a bad name cannot exist: InvalidResourceName first). */
export async function existing(call: Call, name: string): Promise<ContainerRecord> {
  checkContainerName(name);
  const record = await call.services.blobs.getContainer(call.account, name);
  if (record === undefined) throw new StorageError('ContainerNotFound');
  return record;
}

/** The container and its state for a read: a lease id, if given, must be the lease in force. */
async function readableContainer(
  call: Call,
  name: string,
): Promise<{ record: ContainerRecord; state: ContainerState }> {
  const record = await existing(call, name);
  const state = decodeContainerState(record.state);
  checkLease(call, state, false);
  return { record, state };
}

export function versionHeaders(record: { readonly etag: string; readonly lastModifiedMs: number }) {
  return { ETag: visibleEtag(record.etag), 'Last-Modified': httpDate(record.lastModifiedMs) };
}

function publicAccessHeader(state: ContainerState): Record<string, string> {
  return state.publicAccess === undefined ? {} : { 'x-ms-blob-public-access': state.publicAccess };
}

/** x-ms-blob-public-access: container or blob; absent: private; anything else 400 InvalidHeaderValue. */
function publicAccessOf(call: Call): PublicAccess | undefined {
  const value = firstHeader(call.headers['x-ms-blob-public-access']);
  if (value === undefined) return undefined;
  if (value === 'container' || value === 'blob') return value;
  throw invalidHeaderValue('x-ms-blob-public-access', value);
}

/**
 * x-ms-lease-id must name the lease in force if given; to delete a leased container it must be
 * given (delete-container); other writes and reads of a leased container need none.
 */
function checkLease(call: Call, state: ContainerState, required: boolean): void {
  const given = leaseIdOf(call);
  if (required || given !== undefined) checkLeaseForWrite(state.lease, nowMs(call), given, 'container');
}

/**
 * If-Modified-Since and If-Unmodified-Since on the container's Last-Modified; the ETag conditions
 * are not for containers (delete-container: 400 when given; unverified code).
 */
function checkDateConditions(call: Call, record: ContainerRecord): void {
  const conditions = parseConditions(call.headers);
  if (conditions.ifMatch !== undefined || conditions.ifNoneMatch !== undefined) {
    throw new StorageError('UnsupportedHeader', 'If-Match and If-None-Match are not supported for containers.');
  }
  refuseTagConditions(conditions);
  checkWriteConditions(conditions, record);
}
