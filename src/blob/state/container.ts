// What a container record's `state` holds (storage/blob-store.ts leaves its encoding to the
// service): metadata, public access level, stored access policies and the lease. JSON, read
// leniently: a field a later version adds is absent in older records and takes its default.
import assert from 'node:assert/strict';
import type { LeaseFields } from '../../domain/lease.js';
import type { SignedIdentifier } from '../../domain/signed-identifier.js';

// The lease (domain/lease.ts) is shared with blobs and Data Lake paths.
export { leaseHeaders, leaseView, type LeaseFields, type LeaseState, type LeaseView } from '../../domain/lease.js';

/** x-ms-blob-public-access: who may read without a credential; undefined: nobody (private). */
export type PublicAccess = 'container' | 'blob';

export interface ContainerState {
  /** Names with their case as set, in the order set. */
  readonly metadata: readonly (readonly [string, string])[];
  readonly publicAccess?: PublicAccess | undefined;
  readonly policies: readonly SignedIdentifier[];
  readonly lease?: LeaseFields | undefined;
}

export const newContainerState: ContainerState = { metadata: [], policies: [] };

export function encodeContainerState(state: ContainerState): string {
  return JSON.stringify(state);
}

export function decodeContainerState(text: string): ContainerState {
  const parsed = JSON.parse(text) as Partial<ContainerState>;
  assert(typeof parsed === 'object' && parsed !== null, 'a container state is a JSON object');
  return { ...newContainerState, ...parsed };
}
