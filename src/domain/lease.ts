// Leases on blobs, containers and Data Lake paths: the stored lease, its state at a moment of the
// services' clock, the five lease actions, and the lease check of every write
// (https://learn.microsoft.com/rest/api/storageservices/lease-blob, lease-container,
// datalakestoragegen2/path/lease). Pure: the operations store the result by compare-and-swap on
// the record's ETag. The Blob service and the Data Lake API share it (one blob, one lease).
import { randomUUID } from 'node:crypto';
import { type ErrorCode, invalidHeaderValue, StorageError } from '../errors.js';

/** Lease durations: 15 to 60 s, or -1 infinite (lease-blob). */
export const leaseSecondsMin = 15;
export const leaseSecondsMax = 60;
/** x-ms-lease-break-period: 0 to 60 s (lease-blob). */
export const leaseBreakSecondsMax = 60;

/**
 * A lease as it was taken, broken or renewed; its state at a given time is leaseView's.
 * Written by the lease operations, read by every operation that answers lease headers.
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

/**
 * The lease as stored (LeaseFields, shared by blobs, containers and paths); undefined:
 * none. Its state at a moment is leaseView's: leased until expiresMs (infinite: no end), breaking
 * until breakEndsMs, then broken; a fixed lease past its end is expired.
 */
export type StoredLease = LeaseFields | undefined;

export const noLease: StoredLease = undefined;

export function leaseState(lease: StoredLease, nowMs: number): LeaseState {
  return leaseView(lease, nowMs).state;
}

/** Who the lease errors name: blob or container (their messages differ). */
export type LeaseTarget = 'blob' | 'container';

/** The error with its message naming the target (the catalogue words some for blobs, some for containers). */
function leaseError(code: ErrorCode, target: LeaseTarget): StorageError {
  const message = new StorageError(code).message.replace(/\b(blob|container)\b/g, target);
  return new StorageError(code, message);
}

/**
 * The lease check of a write (and of a delete): a lease in force (leased or breaking) needs its id
 * (412 LeaseIdMissing, LeaseIdMismatchWith…Operation); an id with no lease in force is 412
 * LeaseNotPresentWith…Operation, or LeaseLost when the lease of that id expired (Azurite's answer).
 */
export function checkLeaseForWrite(
  lease: StoredLease,
  nowMs: number,
  leaseId: string | undefined,
  target: LeaseTarget,
): void {
  const state = leaseState(lease, nowMs);
  const given = leaseId === undefined || leaseId === '' ? undefined : leaseId.toLowerCase();
  if (state === 'leased' || state === 'breaking') {
    if (given === undefined) throw leaseError('LeaseIdMissing', target);
    if (lease !== undefined && lease.id.toLowerCase() !== given) {
      throw new StorageError(
        target === 'blob' ? 'LeaseIdMismatchWithBlobOperation' : 'LeaseIdMismatchWithContainerOperation',
      );
    }
    return;
  }
  if (given === undefined) return;
  if (state === 'expired' && target === 'blob') throw new StorageError('LeaseLost');
  throw new StorageError(
    target === 'blob' ? 'LeaseNotPresentWithBlobOperation' : 'LeaseNotPresentWithContainerOperation',
  );
}

/** A read with an x-ms-lease-id must name the lease in force (Get Blob, Get Properties). */
export function checkLeaseForRead(lease: StoredLease, nowMs: number, leaseId: string | undefined): void {
  if (leaseId === undefined || leaseId === '') return;
  const state = leaseState(lease, nowMs);
  if (state !== 'leased' && state !== 'breaking') throw new StorageError('LeaseNotPresentWithBlobOperation');
  if (lease !== undefined && lease.id.toLowerCase() !== leaseId.toLowerCase()) {
    throw new StorageError('LeaseIdMismatchWithBlobOperation');
  }
}

export type LeaseAction = 'acquire' | 'renew' | 'change' | 'release' | 'break';

export interface LeaseRequest {
  readonly action: LeaseAction;
  /** x-ms-lease-id */
  readonly leaseId: string | undefined;
  /** x-ms-proposed-lease-id */
  readonly proposedId: string | undefined;
  /** x-ms-lease-duration (acquire) */
  readonly durationSeconds: number | undefined;
  /** x-ms-lease-break-period (break) */
  readonly breakSeconds: number | undefined;
}

export interface LeaseOutcome {
  readonly lease: StoredLease;
  /** 201 acquire, 200 renew/change/release, 202 break. */
  readonly status: number;
  /** x-ms-lease-id (acquire, renew, change) */
  readonly leaseId?: string;
  /** x-ms-lease-time (break): seconds until the lease is broken. */
  readonly leaseTimeSeconds?: number;
}

const guidPattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

type RequestHeaders = { readonly [name: string]: string | string[] | undefined };

/** The headers of a Lease Blob / Lease Container request, checked (400 on a missing or bad value). */
export function parseLeaseRequest(headers: RequestHeaders): LeaseRequest {
  const actionText = single(headers['x-ms-lease-action']);
  const action = actionText?.toLowerCase();
  if (action === undefined) throw new StorageError('MissingRequiredHeader', 'The header x-ms-lease-action is required.');
  if (!['acquire', 'renew', 'change', 'release', 'break'].includes(action)) {
    throw invalidHeaderValue('x-ms-lease-action', actionText!);
  }
  const request: LeaseRequest = {
    action: action as LeaseAction,
    leaseId: checkedHeader(headers, 'x-ms-lease-id', guidPattern),
    proposedId: checkedHeader(headers, 'x-ms-proposed-lease-id', guidPattern),
    durationSeconds: integerHeader(headers, 'x-ms-lease-duration'),
    breakSeconds: integerHeader(headers, 'x-ms-lease-break-period'),
  };
  requireFor(request);
  return request;
}

function requireFor(request: LeaseRequest): void {
  const missing = (name: string): never => {
    throw new StorageError('MissingRequiredHeader', `The header ${name} is required for lease action ${request.action}.`);
  };
  if (['renew', 'change', 'release'].includes(request.action) && request.leaseId === undefined)
    missing('x-ms-lease-id');
  if (request.action === 'change' && request.proposedId === undefined) missing('x-ms-proposed-lease-id');
  if (request.action === 'acquire') {
    if (request.durationSeconds === undefined) missing('x-ms-lease-duration');
    const duration = request.durationSeconds!;
    if (duration !== -1 && (duration < leaseSecondsMin || duration > leaseSecondsMax)) {
      throw invalidHeaderValue('x-ms-lease-duration', String(duration)); // 15 to 60 s, or -1
    }
  }
  const period = request.breakSeconds;
  if (period !== undefined && (period < 0 || period > leaseBreakSecondsMax)) {
    throw invalidHeaderValue('x-ms-lease-break-period', String(period)); // 0 to 60 s
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A header's value, undefined when absent; a value `pattern` refuses is 400 InvalidHeaderValue. */
function checkedHeader(headers: RequestHeaders, name: string, pattern: RegExp): string | undefined {
  const value = single(headers[name])?.trim();
  if (value === undefined) return undefined;
  if (!pattern.test(value)) throw invalidHeaderValue(name, value);
  return value;
}

function integerHeader(headers: RequestHeaders, name: string): number | undefined {
  const text = checkedHeader(headers, name, /^-?\d{1,10}$/);
  return text === undefined ? undefined : Number(text);
}

/** Applies a lease action to the lease as it stands at `nowMs` (lease-blob's table of outcomes). */
export function applyLease(
  lease: StoredLease,
  request: LeaseRequest,
  nowMs: number,
  target: LeaseTarget,
): LeaseOutcome {
  const state = leaseState(lease, nowMs);
  const sameId = lease !== undefined && request.leaseId?.toLowerCase() === lease.id.toLowerCase();
  const fail = (code: ErrorCode): never => {
    throw leaseError(code, target);
  };
  if (lease === undefined || state === 'available') {
    if (request.action !== 'acquire') fail('LeaseNotPresentWithLeaseOperation');
    return granted(request.durationSeconds!, request.proposedId ?? randomUUID(), nowMs, 201);
  }
  switch (request.action) {
    case 'acquire':
      return acquire(lease, state, request, nowMs, fail);
    case 'renew':
      if (!sameId) fail('LeaseIdMismatchWithLeaseOperation');
      if (state === 'breaking' || state === 'broken') fail('LeaseIsBrokenAndCannotBeRenewed');
      return granted(lease.durationSeconds, lease.id, nowMs, 200);
    case 'change':
      return change(lease, state, request, sameId, fail);
    case 'release':
      if (!sameId) fail('LeaseIdMismatchWithLeaseOperation');
      return { lease: noLease, status: 200 };
    case 'break':
      return breakLease(lease, state, request, nowMs);
  }
}

function granted(durationSeconds: number, id: string, nowMs: number, status: number): LeaseOutcome {
  const expiresMs = durationSeconds === -1 ? undefined : nowMs + durationSeconds * 1000;
  return { lease: { id, durationSeconds, expiresMs }, status, leaseId: id };
}

function acquire(
  lease: LeaseFields,
  state: LeaseState,
  request: LeaseRequest,
  nowMs: number,
  fail: (code: ErrorCode) => never,
): LeaseOutcome {
  if (state === 'leased' || state === 'breaking') {
    // Acquiring again with the lease's own id (as x-ms-proposed-lease-id) renews it for the new duration.
    if (request.proposedId?.toLowerCase() !== lease.id.toLowerCase()) fail('LeaseAlreadyPresent');
    if (state === 'breaking') fail('LeaseIsBreakingAndCannotBeAcquired');
    return granted(request.durationSeconds!, lease.id, nowMs, 201);
  }
  return granted(request.durationSeconds!, request.proposedId ?? randomUUID(), nowMs, 201);
}

function change(
  lease: LeaseFields,
  state: LeaseState,
  request: LeaseRequest,
  sameId: boolean,
  fail: (code: ErrorCode) => never,
): LeaseOutcome {
  if (state === 'breaking') fail('LeaseIsBreakingAndCannotBeChanged');
  if (state !== 'leased') fail('LeaseNotPresentWithLeaseOperation');
  const proposed = request.proposedId!;
  // Changing to the id already in force succeeds (the request is idempotent).
  if (!sameId && proposed.toLowerCase() !== lease.id.toLowerCase()) fail('LeaseIdMismatchWithLeaseOperation');
  return { lease: { ...lease, id: proposed }, status: 200, leaseId: proposed };
}

/**
 * 202 with x-ms-lease-time. A fixed lease breaks when it would have ended, or sooner with a break
 * period; an infinite one at once, or after the period; breaking again can only shorten the wait.
 * An expired or broken lease is broken at once.
 */
function breakLease(lease: LeaseFields, state: LeaseState, request: LeaseRequest, nowMs: number): LeaseOutcome {
  const periodEndsMs = request.breakSeconds === undefined ? undefined : nowMs + request.breakSeconds * 1000;
  let breakEndsMs: number;
  if (state === 'expired' || state === 'broken') breakEndsMs = Math.min(lease.breakEndsMs ?? nowMs, nowMs);
  else if (state === 'breaking') breakEndsMs = Math.min(lease.breakEndsMs!, periodEndsMs ?? Infinity);
  else if (lease.expiresMs === undefined) breakEndsMs = periodEndsMs ?? nowMs;
  else breakEndsMs = Math.min(lease.expiresMs, periodEndsMs ?? Infinity);
  const leaseTimeSeconds = Math.max(0, Math.ceil((breakEndsMs - nowMs) / 1000));
  return { lease: { ...lease, expiresMs: undefined, breakEndsMs }, status: 202, leaseTimeSeconds };
}
