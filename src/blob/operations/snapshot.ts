// Snapshot Blob (https://learn.microsoft.com/rest/api/storageservices/snapshot-blob): a read-only
// version sharing the base blob's content, named by its timestamp.
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { metadataFromHeaders } from '../../http/metadata-headers.js';
import {
  keyOf,
  leaseIdOf,
  nowMs,
  refuseSnapshot,
  requireBlob,
  writeFailure,
  writtenHeaders,
  type BlobCall,
  type BlobOf,
  versioned,
} from './access.js';
import { snapshotStamp } from '../wire/etag.js';
import { encodeBlobState } from '../state/blob.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { evaluate, parseConditions } from '../wire/conditions.js';
import { checkLeaseForRead, noLease } from '../state/leases.js';
import { refuseOffline } from '../state/tier.js';

/**
 * 201 Created with x-ms-snapshot. The snapshot keeps the base blob's ETag, Last-Modified, content
 * and properties; its metadata is the request's x-ms-meta-* if any, else the base blob's. A lease
 * id, if given, must be the lease in force (snapshot-blob); the snapshot itself has no lease.
 */
export async function snapshotBlob(call: BlobCall, resource: BlobOf): Promise<Reply> {
  refuseSnapshot(call);
  const requested = metadataFromHeaders(call.rawHeaders);
  const conditions = parseConditions(call.headers);
  return retryWhileRaced('The blob changed under every attempt to snapshot it; retry the request.', async () => {
    const found = await requireBlob(call, keyOf(resource));
    if (evaluate(conditions, versioned(found)) !== 'ok') throw new StorageError('ConditionNotMet');
    checkLeaseForRead(found.state.lease, nowMs(call), leaseIdOf(call));
    // "Snapshots are not supported for archived blobs" (access-tiers-overview)
    refuseOffline(found.state.tier, nowMs(call));
    const snapshot = snapshotStamp(nowMs(call));
    const metadata = requested.size > 0 ? [...requested] : found.state.metadata;
    const state = encodeBlobState({ ...found.state, metadata, lease: noLease });
    const record = { ...found.record, snapshot, state };
    const outcome = await call.services.blobs.snapshotBlob(call.account, record, found.record.etag);
    if (outcome === 'ok')
      return { status: 201, headers: { ...writtenHeaders(found.record), 'x-ms-snapshot': snapshot } };
    if (outcome !== 'etagMismatch') throw writeFailure(outcome);
    return raced;
  });
}
