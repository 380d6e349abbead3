// A block blob's access tier and the archive's rehydration, as its state keeps them and as they
// stand at a moment (https://learn.microsoft.com/rest/api/storageservices/set-blob-tier, and the
// articles access-tiers-overview and archive-rehydrate-overview). A rehydration is kept as the time
// it is done, never as a timer: whoever reads the state after that time sees the new tier, so a
// restart, another process or a standby all agree, and nothing has to run for it to finish.
import { invalidHeaderValue, StorageError } from '../../errors.js';

export type AccessTier = 'Hot' | 'Cool' | 'Cold' | 'Archive';
export type OnlineTier = Exclude<AccessTier, 'Archive'>;
export type RehydratePriority = 'Standard' | 'High';

const tiers: readonly AccessTier[] = ['Hot', 'Cool', 'Cold', 'Archive'];

/**
 * The account's default access tier, which a block blob never given a tier reports as inferred
 * (x-ms-access-tier-inferred: true). Cerulean's accounts are general-purpose v2 accounts left at the
 * default setting, which is Hot (access-tiers-overview, "Default account access tier setting").
 */
export const accountDefaultTier: OnlineTier = 'Hot';

/** A rehydration under way: the tier it goes to, and when it is done (ms since the epoch). */
export interface Rehydration {
  readonly to: OnlineTier;
  readonly priority: RehydratePriority;
  readonly doneMs: number;
}

/** A tier set explicitly (Set Blob Tier, or x-ms-access-tier when the blob was written). */
export interface StoredTier {
  readonly tier: AccessTier;
  /** x-ms-access-tier-change-time. */
  readonly changedMs: number;
  /** Only while `tier` is Archive. */
  readonly rehydrate?: Rehydration | undefined;
}

/** The tier as it stands at `nowMs`: a rehydration whose time has come is done, the tier changed then. */
export function tierAt(stored: StoredTier | undefined, nowMs: number): StoredTier | undefined {
  const rehydrate = stored?.rehydrate;
  if (rehydrate === undefined || nowMs < rehydrate.doneMs) return stored;
  return { tier: rehydrate.to, changedMs: rehydrate.doneMs };
}

/** x-ms-access-tier's value (Set Blob Tier, Put Blob, Put Block List, Copy Blob); case as the service spells it. */
export function parseTier(value: string, header = 'x-ms-access-tier'): AccessTier {
  // Chosen (unverified): any case is accepted, as the service's enum parsing does for other headers.
  const tier = tiers.find((name) => name.toLowerCase() === value.toLowerCase());
  if (tier === undefined) throw invalidHeaderValue(header, value); // as the service answers 'garbage'
  return tier;
}

export function parsePriority(value: string): RehydratePriority {
  const lower = value.toLowerCase();
  if (lower === 'standard') return 'Standard';
  if (lower === 'high') return 'High';
  throw invalidHeaderValue('x-ms-rehydrate-priority', value);
}

/**
 * Content that is offline cannot be read or changed: 409 BlobArchived, or BlobBeingRehydrated while a
 * rehydration is under way (chosen: the service's codes for these, which of the two it answers to a
 * read during a rehydration is unverified).
 */
export function refuseOffline(stored: StoredTier | undefined, nowMs: number): void {
  const now = tierAt(stored, nowMs);
  if (now?.tier !== 'Archive') return;
  throw new StorageError(now.rehydrate === undefined ? 'BlobArchived' : 'BlobBeingRehydrated');
}

export interface TierRequest {
  readonly tier: AccessTier;
  readonly priority: RehydratePriority | undefined;
  readonly nowMs: number;
  /** How long a rehydration takes here (--blob-rehydrate-delay). */
  readonly rehydrateDelayMs: number;
  /** Snapshots tiered to Archive cannot be brought back online (set-blob-tier, remarks). */
  readonly snapshot: boolean;
}

/** Set Blob Tier's outcome: the tier to store (undefined: unchanged) and the status, 200 or 202. */
export interface TierChange {
  readonly stored: StoredTier | undefined;
  readonly status: 200 | 202;
}

/**
 * Set Blob Tier on a blob whose tier is `current`, as the status table of set-blob-tier says: an
 * online blob changes at once (200); an archived one moved online starts a rehydration (202), done
 * after the delay; while it rehydrates, asking for the same tier again is 202 (and may raise the
 * priority from Standard to High, never lower it), asking for any other is 409 BlobBeingRehydrated.
 */
export function changeTier(current: StoredTier | undefined, request: TierRequest): TierChange {
  const now = tierAt(current, request.nowMs);
  if (now?.tier !== 'Archive') {
    if (now?.tier === request.tier) return { stored: undefined, status: 200 };
    return { stored: { tier: request.tier, changedMs: request.nowMs }, status: 200 };
  }
  const pending = now.rehydrate;
  if (pending !== undefined) {
    if (pending.to !== request.tier) throw new StorageError('BlobBeingRehydrated');
    if (request.priority !== 'High' || pending.priority === 'High') return { stored: undefined, status: 202 };
    return { stored: { ...now, rehydrate: { ...pending, priority: 'High' } }, status: 202 };
  }
  if (request.tier === 'Archive') return { stored: undefined, status: 200 };
  // Chosen (unverified): the service's code for rehydrating an archived snapshot.
  if (request.snapshot) throw new StorageError('BlobArchived', 'An archived snapshot cannot be rehydrated.');
  return { stored: rehydrating(request.tier, request), status: 202 };
}

/** An archived blob on its way to `to`, done `rehydrateDelayMs` from now. */
export function rehydrating(
  to: OnlineTier,
  request: Pick<TierRequest, 'priority' | 'nowMs' | 'rehydrateDelayMs'>,
): StoredTier {
  const doneMs = request.nowMs + request.rehydrateDelayMs;
  return {
    tier: 'Archive',
    changedMs: request.nowMs,
    rehydrate: { to, priority: request.priority ?? 'Standard', doneMs },
  };
}

/** What Get Blob Properties and List Blobs report of a block blob's tier at `nowMs`. */
export interface TierView {
  readonly tier: AccessTier;
  readonly inferred: boolean;
  readonly changedMs: number | undefined;
  readonly rehydrate: Rehydration | undefined;
}

export function tierView(stored: StoredTier | undefined, nowMs: number): TierView {
  const now = tierAt(stored, nowMs);
  if (now === undefined)
    return { tier: accountDefaultTier, inferred: true, changedMs: undefined, rehydrate: undefined };
  return { tier: now.tier, inferred: false, changedMs: now.changedMs, rehydrate: now.rehydrate };
}
