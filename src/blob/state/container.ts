// What a container record's `state` holds (storage/blob-store.ts leaves its encoding to the
// service): metadata, public access level, stored access policies and the lease. JSON, read
// leniently: a field a later version adds is absent in older records and takes its default.
import assert from 'node:assert/strict';
import type { SignedIdentifier } from '../../domain/signed-identifier.js';

/** x-ms-blob-public-access: who may read without a credential; undefined: nobody (private). */
export type PublicAccess = 'container' | 'blob';

/**
 * A lease as it was taken, broken or renewed; its state at a given time is leaseView's.
 * Written by the lease operations (state/leases.ts), read by every operation that answers lease headers.
 */
export interface LeaseFields {
  readonly id: string;
  /** 15 to 60 seconds, or -1 for an infinite lease. */
  readonly durationSeconds: number;
  /** When a fixed lease ends (ms); undefined for an infinite one. */
  readonly expiresMs?: number | undefined;
  /** Once broken: when the break period ends (ms); the lease is `breaking` until then, `broken` after. */
  readonly breakEndsMs?: number | undefined;
}

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

export type LeaseState = 'available' | 'leased' | 'expired' | 'breaking' | 'broken';

export interface LeaseView {
  readonly state: LeaseState;
  /** locked while leased or breaking. */
  readonly status: 'locked' | 'unlocked';
  /** Only while leased. */
  readonly duration?: 'infinite' | 'fixed' | undefined;
}

/** The lease's state at `nowMs` (https://learn.microsoft.com/rest/api/storageservices/lease-container). */
export function leaseView(lease: LeaseFields | undefined, nowMs: number): LeaseView {
  if (lease === undefined) return { state: 'available', status: 'unlocked' };
  if (lease.breakEndsMs !== undefined) {
    return nowMs < lease.breakEndsMs
      ? { state: 'breaking', status: 'locked' }
      : { state: 'broken', status: 'unlocked' };
  }
  if (lease.durationSeconds === -1) return { state: 'leased', status: 'locked', duration: 'infinite' };
  if (lease.expiresMs !== undefined && nowMs < lease.expiresMs) {
    return { state: 'leased', status: 'locked', duration: 'fixed' };
  }
  return { state: 'expired', status: 'unlocked' };
}

/** x-ms-lease-state, x-ms-lease-status and (while leased) x-ms-lease-duration. */
export function leaseHeaders(lease: LeaseFields | undefined, nowMs: number): Record<string, string> {
  const view = leaseView(lease, nowMs);
  return {
    'x-ms-lease-state': view.state,
    'x-ms-lease-status': view.status,
    ...(view.duration !== undefined && { 'x-ms-lease-duration': view.duration }),
  };
}
