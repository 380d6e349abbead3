// Anonymous reads: a request with no credential at all may read what its container's public
// access level allows (https://learn.microsoft.com/azure/storage/blobs/anonymous-read-access-configure):
// `blob`, the blobs' content, properties, metadata and committed block lists; `container`, that and
// the container's properties and metadata and its blob listing.
import { StorageError } from '../../errors.js';
import type { Access } from '../../http/authorize.js';
import type { OperationName } from '../../http/service-definition.js';
import { decodeContainerState } from '../state/container.js';
import type { BlobResource } from '../resources.js';
import type { BlobServices } from '../services.js';

const blobReads: ReadonlySet<OperationName> = new Set([
  'GetBlob',
  'GetBlobProperties',
  'GetBlobMetadata',
  'GetBlockList',
]);
const containerReads: ReadonlySet<OperationName> = new Set([
  ...blobReads,
  'GetContainerProperties',
  'GetContainerMetadata',
  'ListBlobs',
]);

/** What an anonymous reader may do: exactly the operation it was allowed, nothing more. */
const anonymousRead: Access = { require: () => undefined, requireKey: () => undefined, keyRange: undefined };

/**
 * The access of a request without credentials: anonymousRead when the container's level allows
 * the operation; undefined for account-level requests (the front door answers them as for a
 * missing signature). Otherwise 404 ResourceNotFound, whether or not the container exists, so
 * that nothing private is revealed (as the service answers; unverified for every operation).
 */
export async function anonymousAccess(
  services: BlobServices,
  account: string,
  resource: BlobResource,
  operation: OperationName,
): Promise<Access | undefined> {
  if (resource.kind === 'service') return undefined;
  const level = await publicAccessLevel(services, account, resource.container);
  const allowed = level === 'container' ? containerReads : level === 'blob' ? blobReads : undefined;
  if (allowed?.has(operation) === true) return anonymousRead;
  throw new StorageError('ResourceNotFound');
}

/** The container's public access level (`blob`, `container`); undefined: private, or no such container. */
export async function publicAccessLevel(
  services: BlobServices,
  account: string,
  container: string,
): Promise<'blob' | 'container' | undefined> {
  const record = await services.blobs.getContainer(account, container);
  return record === undefined ? undefined : (decodeContainerState(record.state).publicAccess ?? undefined);
}
