// Set Blob Tier (https://learn.microsoft.com/rest/api/storageservices/set-blob-tier), on a block
// blob or one of its snapshots, and the x-ms-access-tier that Put Blob, Put Block List and Copy Blob
// take. Setting a tier does not change the blob's ETag or Last-Modified (set-blob-tier;
// archive-rehydrate-overview: "Changing a blob's tier doesn't affect its last modified time"): the
// record is still replaced by compare-and-swap, with a new token behind the same visible ETag, as a
// lease action is (wire/etag.ts), so no other write can drop a tier change it did not see.
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import {
  findBlob,
  type Found,
  header,
  keyOf,
  notFound,
  nowMs,
  snapshotOf,
  writeFailure,
  type BlobCall,
  type BlobOf,
} from './access.js';
import { checkWrite } from './checks.js';
import { raced, retryWhileRaced } from './cas-retry.js';
import { leaseEtag } from '../wire/etag.js';
import { encodeBlobState, type BlobType } from '../state/blob.js';
import { parseConditions } from '../wire/conditions.js';
import {
  accountDefaultTier,
  changeTier,
  parsePriority,
  parseTier,
  rehydrating,
  tierAt,
  type RehydratePriority,
  type StoredTier,
} from '../state/tier.js';

/** x-ms-rehydrate-priority, if sent. */
export function priorityOf(call: BlobCall): RehydratePriority | undefined {
  const value = header(call, 'x-ms-rehydrate-priority');
  return value === undefined ? undefined : parsePriority(value);
}

/**
 * The tier a write asks for with x-ms-access-tier (undefined: none, the account's default,
 * inferred). Tiers are for block blobs only (access-tiers-overview); on an append blob the header
 * is 400 InvalidHeaderValue (chosen, unverified: the service's answer).
 */
export function requestedTier(call: BlobCall, blobType: BlobType): StoredTier | undefined {
  const value = header(call, 'x-ms-access-tier');
  if (value === undefined) return undefined;
  const tier = parseTier(value);
  if (blobType !== 'BlockBlob') throw invalidHeaderValue('x-ms-access-tier', value);
  return { tier, changedMs: nowMs(call) };
}

/**
 * The tier of a copy's destination: x-ms-access-tier if sent, else none (the account's default,
 * inferred: the service does not carry the source's tier over, which is why AzCopy has its
 * --s2s-preserve-access-tier). A copy of an archived source rehydrates (archive-rehydrate-overview,
 * "Copy an archived blob to an online tier"): the destination is archived until the rehydration is
 * done, at x-ms-rehydrate-priority. Such a copy may not overwrite its own source nor go to the archive
 * tier ("Unsupported"): 409 BlobArchived (chosen, unverified: the service's code).
 */
export function copiedTier(call: BlobCall, source: Found, ontoItself: boolean): StoredTier | undefined {
  const value = header(call, 'x-ms-access-tier');
  const requested = value === undefined ? undefined : parseTier(value);
  if (value !== undefined && source.state.blobType !== 'BlockBlob') throw invalidHeaderValue('x-ms-access-tier', value);
  const priority = priorityOf(call);
  const now = nowMs(call);
  if (tierAt(source.state.tier, now)?.tier !== 'Archive') {
    return requested === undefined ? undefined : { tier: requested, changedMs: now };
  }
  if (ontoItself) throw new StorageError('BlobArchived', 'An archived blob cannot be copied onto itself.');
  if (requested === 'Archive')
    throw new StorageError('BlobArchived', 'An archived blob cannot be copied to the archive tier.');
  const rehydrateDelayMs = call.services.rehydrateDelayMs;
  return rehydrating(requested ?? accountDefaultTier, { priority, nowMs: now, rehydrateDelayMs });
}

/**
 * 200 when the tier changed at once, 202 when an archived blob starts (or goes on) rehydrating.
 * Append blobs (and page blobs) have no tier a standard account lets one set: 409 InvalidBlobType
 * (the service's code for an operation on the wrong blob type; unverified for this operation).
 */
export async function setBlobTier(call: BlobCall, resource: BlobOf): Promise<Reply> {
  const snapshot = snapshotOf(call);
  const tierText = header(call, 'x-ms-access-tier');
  if (tierText === undefined) {
    throw new StorageError('MissingRequiredHeader', 'The header x-ms-access-tier is required.');
  }
  const tier = parseTier(tierText);
  const priority = priorityOf(call);
  const conditions = parseConditions(call.headers);
  const rehydrateDelayMs = call.services.rehydrateDelayMs;
  return retryWhileRaced('The blob changed under every attempt to set its tier; retry the request.', async () => {
    const found = await findBlob(call, keyOf(resource, snapshot));
    if (found === undefined) return notFound(call, resource.container);
    if (found.state.blobType !== 'BlockBlob') throw new StorageError('InvalidBlobType');
    checkWrite(call, conditions, found); // a snapshot's state has no lease: only conditions apply to it
    const request = { tier, priority, nowMs: nowMs(call), rehydrateDelayMs, snapshot: snapshot !== '' };
    const change = changeTier(found.state.tier, request);
    const reply: Reply = { status: change.status, headers: {} };
    if (change.stored === undefined) return reply;
    const record = {
      ...found.record,
      etag: leaseEtag(found.record.etag),
      state: encodeBlobState({ ...found.state, tier: change.stored }),
    };
    const written = await call.services.blobs.putBlob(call.account, record, { kind: 'keep' }, found.record.etag);
    if (written === 'ok') return reply;
    if (written !== 'etagMismatch' && written !== 'blobNotFound') throw writeFailure(written);
    return raced;
  });
}
