// Lease Blob and Lease Container (https://learn.microsoft.com/rest/api/storageservices/lease-blob,
// lease-container): the action is applied to the lease as it stands by the services' clock and
// stored by compare-and-swap. A lease action keeps the ETag clients see and Last-Modified, as the
// service does; the record still gets a new compare-and-swap token (leaseEtag, wire/etag.ts explains
// why), so two clients racing to acquire cannot both win and no write drops a lease it did not see.
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import type { ServiceCall } from '../../http/service-definition.js';
import { findBlob, keyOf, nowMs, refuseSnapshot, versioned, writeFailure, type BlobCall, type BlobOf } from './access.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { leaseEtag, visibleEtag } from '../wire/etag.js';
import { encodeBlobState } from '../state/blob.js';
import { checkWriteConditions, parseConditions, refuseTagConditions } from '../wire/conditions.js';
import { decodeContainerState, encodeContainerState } from '../state/container.js';
import { applyLease, parseLeaseRequest, type LeaseOutcome } from '../state/leases.js';
import type { BlobServices } from '../services.js';
import { httpDate } from '../wire/reply-headers.js';

function leaseReply(outcome: LeaseOutcome, etag: string, lastModifiedMs: number): Reply {
  const headers: Record<string, string> = { ETag: visibleEtag(etag), 'Last-Modified': httpDate(lastModifiedMs) };
  if (outcome.leaseId !== undefined) headers['x-ms-lease-id'] = outcome.leaseId;
  if (outcome.leaseTimeSeconds !== undefined) headers['x-ms-lease-time'] = String(outcome.leaseTimeSeconds);
  return { status: outcome.status, headers };
}

export async function leaseBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const request = parseLeaseRequest(call.headers);
  const conditions = parseConditions(call.headers);
  return retryWhileRaced('The blob changed under every attempt to lease it; retry the request.', async () => {
    const found = await findBlob(call, keyOf(resource));
    if (found === undefined) {
      const container = await call.services.blobs.getContainer(call.account, resource.container);
      throw new StorageError(container === undefined ? 'ContainerNotFound' : 'BlobNotFound');
    }
    checkWriteConditions(conditions, versioned(found));
    const outcome = applyLease(found.state.lease, request, nowMs(call), 'blob');
    const record = {
      ...found.record,
      etag: leaseEtag(found.record.etag),
      state: encodeBlobState({ ...found.state, lease: outcome.lease }),
    };
    const written = await call.services.blobs.putBlob(call.account, record, { kind: 'keep' }, found.record.etag);
    if (written === 'ok') return leaseReply(outcome, record.etag, record.lastModifiedMs);
    if (written !== 'etagMismatch') throw writeFailure(written);
    return raced;
  });
}

/**
 * Lease Container: only the date conditions apply; If-Match and If-None-Match are 400 UnsupportedHeader
 * (lease-container).
 */
export async function leaseContainer(call: ServiceCall<BlobServices>, container: string): Promise<Reply> {
  const request = parseLeaseRequest(call.headers);
  const dates = parseConditions(call.headers);
  if (dates.ifMatch !== undefined || dates.ifNoneMatch !== undefined) {
    throw new StorageError('UnsupportedHeader', 'If-Match and If-None-Match are not supported for containers.');
  }
  refuseTagConditions(dates);
  const blobs = call.services.blobs;
  return retryWhileRaced('The container changed under every attempt to lease it; retry the request.', async () => {
    const found = await blobs.getContainer(call.account, container);
    if (found === undefined) throw new StorageError('ContainerNotFound');
    checkWriteConditions(dates, found);
    const state = decodeContainerState(found.state);
    const outcome = applyLease(state.lease, request, Math.trunc(call.services.clock.nowMs()), 'container');
    const record = {
      ...found,
      etag: leaseEtag(found.etag),
      state: encodeContainerState({ ...state, lease: outcome.lease }),
    };
    const written = await blobs.updateContainer(call.account, record, found.etag);
    if (written === 'ok') return leaseReply(outcome, record.etag, record.lastModifiedMs);
    if (written !== 'etagMismatch') throw new StorageError('ContainerNotFound');
    return raced;
  });
}
