// Lease Path (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/lease)
// and the lease actions of Append and Flush (path/update, x-ms-lease-action): the Blob service's
// lease of the path's blob (domain/lease.ts), so a lease taken through either API binds both. A
// lease action keeps the ETag clients see and Last-Modified, as Lease Blob does (leaseEtag).
import { applyLease, checkLeaseForWrite, noLease, parseLeaseRequest, type StoredLease } from '../../domain/lease.js';
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import { leaseEtag } from '../../wire/version-etag.js';
import { casAttemptsMax } from '../limits.js';
import { encodePathState } from '../state.js';
import {
  checkConditions,
  header,
  nowMs,
  pathWriteFailure,
  requirePath,
  versionHeaders,
  type DatalakeCall,
  type FoundPath,
} from './access.js';

/**
 * POST with x-ms-lease-action acquire, break, change, renew or release, on a file or a directory:
 * 201 acquired, 200 renewed, changed or released, 202 broken (with x-ms-lease-time), as Lease Blob
 * answers. The conditional headers apply.
 */
export async function leasePath(call: DatalakeCall, filesystem: string, path: string): Promise<Reply> {
  const request = parseLeaseRequest(call.headers);
  for (let attempt = 0; attempt < casAttemptsMax; attempt++) {
    const found = await requirePath(call, filesystem, path);
    checkConditions(call, found.record);
    const outcome = applyLease(found.state.lease, request, nowMs(call), 'blob');
    const written = await storeLease(call, found, outcome.lease);
    if (written === 'raced') continue;
    const headers = versionHeaders(written);
    if (outcome.leaseId !== undefined) headers['x-ms-lease-id'] = outcome.leaseId;
    if (outcome.leaseTimeSeconds !== undefined) headers['x-ms-lease-time'] = String(outcome.leaseTimeSeconds);
    return { status: outcome.status, headers: { ...headers, 'Content-Length': '0' } };
  }
  throw new StorageError('ServerBusy');
}

/** Writes `lease` into the path's record by compare-and-swap, its visible ETag kept; 'raced' when it changed. */
export async function storeLease(
  call: DatalakeCall,
  found: FoundPath,
  lease: StoredLease,
): Promise<{ etag: string; lastModifiedMs: number } | 'raced'> {
  const record = {
    ...found.record,
    etag: leaseEtag(found.record.etag),
    state: encodePathState({ ...found.state, lease }),
  };
  const written = await call.services.blobs.putBlob(call.account, record, { kind: 'keep' }, found.record.etag);
  if (written === 'ok') return record;
  if (written !== 'etagMismatch') throw pathWriteFailure(written);
  return 'raced';
}

/** x-ms-lease-action of Append and Flush (path/update). */
export type WriteLeaseAction = 'acquire' | 'auto-renew' | 'release' | 'acquire-release';

const writeLeaseActions: readonly string[] = ['acquire', 'auto-renew', 'release', 'acquire-release'];

/** The request's x-ms-lease-action for a write; release and acquire-release only on a flush (path/update). */
export function writeLeaseAction(call: DatalakeCall, flushes: boolean): WriteLeaseAction | undefined {
  const text = header(call, 'x-ms-lease-action');
  if (text === undefined) return undefined;
  const action = text.toLowerCase();
  if (!writeLeaseActions.includes(action)) throw invalidHeaderValue('x-ms-lease-action', text);
  if (!flushes && (action === 'release' || action === 'acquire-release')) {
    // path/update: these two apply only when the data is flushed (chosen: 400 otherwise).
    throw new StorageError('InvalidHeaderValue', `x-ms-lease-action ${action} needs flush=true on an append.`);
  }
  return action as WriteLeaseAction;
}

/**
 * The lease a write leaves on its path: without an action, the lease in force, which x-ms-lease-id
 * must name; `acquire` takes one (x-ms-proposed-lease-id, x-ms-lease-duration) or renews its own;
 * `auto-renew` renews the one named by x-ms-lease-id; `release` ends it after the write;
 * `acquire-release` must be able to acquire and leaves none.
 */
export function leaseAfterWrite(
  call: DatalakeCall,
  lease: StoredLease,
  action: WriteLeaseAction | undefined,
): StoredLease {
  const atMs = nowMs(call);
  const leaseId = header(call, 'x-ms-lease-id');
  if (action === undefined) {
    checkLeaseForWrite(lease, atMs, leaseId, 'blob');
    return lease;
  }
  if (action === 'auto-renew' || action === 'release') {
    if (leaseId === undefined) {
      throw new StorageError('MissingRequiredHeader', `The header x-ms-lease-id is required for lease action ${action}.`);
    }
    checkLeaseForWrite(lease, atMs, leaseId, 'blob');
    if (action === 'release') return noLease;
    return applyLease(lease, parseLeaseRequest({ ...call.headers, 'x-ms-lease-action': 'renew' }), atMs, 'blob').lease;
  }
  const acquire = parseLeaseRequest({ ...call.headers, 'x-ms-lease-action': 'acquire' });
  const acquired = applyLease(lease, acquire, atMs, 'blob').lease;
  return action === 'acquire' ? acquired : noLease;
}
