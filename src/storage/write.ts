// The meaning of a conditional write, shared by every engine so that all of them agree on it.
import { performance } from 'node:perf_hooks';
import { etagOf, type Properties } from '../protocol/edm.js';
import { entitySizeBytes } from '../protocol/entity-json.js';
import { entityBytesMax } from '../limits.js';
import type { Write, WriteFailure } from './store.js';

export interface StoredVersion {
  readonly timestamp: bigint;
  readonly properties: Properties;
}

export type WriteOutcome =
  | { readonly ok: false; readonly failure: WriteFailure }
  /** `properties` null means the entity is deleted. */
  | { readonly ok: true; readonly properties: Properties | null };

/** What `write` turns `current` (undefined when absent) into, or why it must not apply. */
export function resolveWrite(current: StoredVersion | undefined, write: Write): WriteOutcome {
  const { condition, action } = write;
  switch (condition.kind) {
    case 'none':
      break;
    case 'absent':
      if (current !== undefined) return { ok: false, failure: 'exists' };
      break;
    case 'present':
      if (current === undefined) return { ok: false, failure: 'notFound' };
      break;
    case 'etag':
      if (current === undefined) return { ok: false, failure: 'notFound' };
      if (etagOf(current.timestamp) !== condition.etag) return { ok: false, failure: 'etagMismatch' };
      break;
  }
  switch (action.kind) {
    case 'put':
      return { ok: true, properties: action.properties };
    case 'merge': {
      if (current === undefined) return { ok: true, properties: action.properties };
      const merged = new Map(current.properties);
      for (const [name, value] of action.properties) merged.set(name, value);
      // A merge body within limits can still grow the stored entity past them.
      if (entitySizeBytes(write.partitionKey, write.rowKey, merged) > entityBytesMax) {
        return { ok: false, failure: 'entityTooLarge' };
      }
      return { ok: true, properties: merged };
    }
    case 'delete':
      return current === undefined ? { ok: false, failure: 'notFound' } : { ok: true, properties: null };
  }
}

// performance.now() gives sub-millisecond wall time from a fixed origin, so Timestamps carry real
// 100 ns digits as the service's do; the origin is split off to keep the double's precision.
const originTicks = BigInt(Math.floor(performance.timeOrigin * 10_000));

/** Commit timestamps: 100 ns ticks from the wall clock, strictly increasing even if the clock is not. */
export class CommitClock {
  private lastTicks: bigint;

  constructor(floorTicks: bigint) {
    this.lastTicks = floorTicks;
  }

  /** A tick later than every earlier one and than `atLeastAfter`. */
  next(atLeastAfter: bigint = 0n): bigint {
    const wall = originTicks + BigInt(Math.floor(performance.now() * 10_000));
    let ticks = wall > this.lastTicks ? wall : this.lastTicks + 1n;
    if (ticks <= atLeastAfter) ticks = atLeastAfter + 1n;
    this.lastTicks = ticks;
    return ticks;
  }

  get last(): bigint {
    return this.lastTicks;
  }
}
