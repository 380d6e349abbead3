// What the Blob service's route handlers work on: the blob store, the clock (leases), and the
// account's Blob service properties. The composition (compose.ts) makes one per store.
import type { Clock } from '../domain/clock.js';
import type { ServiceProperties, ServicePropertiesUpdate } from '../table/protocol/service-properties-xml.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { ReplicationSource } from '../storage/replication.js';

/** Blob service properties per account (kept beside the other services', under their own names). */
export interface BlobPropertiesKeeper {
  get(account: string): Promise<ServiceProperties>;
  set(account: string, update: ServicePropertiesUpdate): Promise<void>;
}

export interface BlobServices {
  readonly blobs: BlobStore;
  readonly clock: Clock;
  readonly properties: BlobPropertiesKeeper;
  /** The secondary endpoint's replication status (Get Blob Service Stats); undefined: not a replica. */
  readonly replication?: ReplicationSource | undefined;
}
