// What the Blob service's route handlers work on: the blob store, the clock (leases), and the
// account's Blob service properties. The composition (compose.ts) makes one per store.
import type { Clock } from '../domain/clock.js';
import type { ServiceProperties, ServicePropertiesUpdate } from '../wire/service-properties-xml.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { ReplicationSource } from '../storage/replication.js';

/**
 * The Blob service's properties: the shared ones and DefaultServiceVersion, a date-shaped version.
 * Chosen: it is kept and returned, but a request without x-ms-version is answered as before (Cerulean's
 * behaviour does not depend on the version asked for, and its x-ms-version reply header is set before
 * the request's account is known).
 */
export interface BlobServiceProperties extends ServiceProperties {
  readonly defaultServiceVersion?: string;
  /** Blob soft delete (operations/soft-delete.ts); absent: off. */
  readonly deleteRetentionPolicy?: DeleteRetentionPolicy;
}

/** Set Blob Service Properties' DeleteRetentionPolicy: `days` (1-365) when enabled. */
export interface DeleteRetentionPolicy {
  readonly enabled: boolean;
  readonly days?: number;
  readonly allowPermanentDelete?: boolean;
}

export type BlobServicePropertiesUpdate = ServicePropertiesUpdate & {
  readonly defaultServiceVersion?: string;
  readonly deleteRetentionPolicy?: DeleteRetentionPolicy;
};

/** Blob service properties per account (kept beside the other services', under their own names). */
export interface BlobPropertiesKeeper {
  get(account: string): Promise<BlobServiceProperties>;
  set(account: string, update: BlobServicePropertiesUpdate): Promise<void>;
  /** The DeleteRetentionPolicy of `get`, read alone (every Delete Blob asks). */
  deleteRetention(account: string): Promise<DeleteRetentionPolicy>;
  /** The CORS rules of `get`, read alone (every cross-origin request asks). */
  cors(account: string): Promise<BlobServiceProperties['cors']>;
}

export interface BlobServices {
  readonly blobs: BlobStore;
  readonly clock: Clock;
  readonly properties: BlobPropertiesKeeper;
  /** The secondary endpoint's replication status (Get Blob Service Stats); undefined: not a replica. */
  readonly replication?: ReplicationSource | undefined;
  /** How long a rehydration from the archive tier takes here (--blob-rehydrate-delay; state/tier.ts). */
  readonly rehydrateDelayMs: number;
  /** Keep blobs' previous versions (--blob-versioning; operations/versions.ts). */
  readonly versioning: boolean;
  /** Days a deleted container is kept, restorable (--container-soft-delete-days); 0: deleted at once. */
  readonly containerSoftDeleteDays: number;
}
