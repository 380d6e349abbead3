// The meaning of a conditional write, shared by every engine so that all of them agree on it.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { entitySizeBytes, type Properties } from '../domain/entity.js';
import { customPropertiesMax, entityBytesMax } from '../limits.js';
import type { WriteCondition, WriteFailure } from './table-store.js';

/** Why `condition` rules the write out given the stored Timestamp (undefined: no entity), if it does. */
export function conditionFailure(
  currentTimestamp: bigint | undefined,
  condition: WriteCondition,
): WriteFailure | undefined {
  switch (condition.kind) {
    case 'none':
      return undefined;
    case 'absent':
      return currentTimestamp === undefined ? undefined : 'exists';
    case 'present':
      return currentTimestamp === undefined ? 'notFound' : undefined;
    case 'version':
      if (currentTimestamp === undefined) return 'notFound';
      return currentTimestamp === condition.timestamp ? undefined : 'versionMismatch';
  }
}

/** A merge: `incoming` overwrites or adds to `current`, unless the result passes an entity limit. */
export function mergeProperties(
  keys: { readonly partitionKey: string; readonly rowKey: string },
  current: Properties,
  incoming: Properties,
): Properties | 'entityTooLarge' | 'tooManyProperties' {
  const merged = new Map(current);
  for (const [name, value] of incoming) merged.set(name, value);
  // A merge body within limits can still grow the stored entity past them.
  if (merged.size > customPropertiesMax) return 'tooManyProperties';
  return entitySizeBytes(keys.partitionKey, keys.rowKey, merged) > entityBytesMax ? 'entityTooLarge' : merged;
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
    assert(ticks > this.lastTicks && ticks > atLeastAfter, 'commit timestamps strictly increase');
    this.lastTicks = ticks;
    return ticks;
  }

  get last(): bigint {
    return this.lastTicks;
  }
}
