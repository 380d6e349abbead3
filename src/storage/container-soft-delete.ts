// Container soft delete (https://learn.microsoft.com/azure/storage/blobs/soft-delete-container-overview):
// a deleted container keeps its id, its record and every row of it (blobs, snapshots, versions,
// tags, staged blocks), out of sight of every lookup by name, until it is restored (the same id
// again under its name) or its expiry passes (then it is reclaimed as any deleted container).
// Its version, which List Containers shows and Restore Container names, is that id in 16
// upper-case hex digits (the service's versions look so; what they encode is not documented), so
// versions sort as ids do and a store finds the row by its key.
import assert from 'node:assert/strict';
import { compareCodePoints } from './blob-rows.js';

const versionPattern = /^[0-9A-F]{16}$/;

/** The version of the soft-deleted container of id `id`. */
export function containerVersion(id: number | bigint | string): string {
  const value = BigInt(id);
  assert(value >= 0n && value < 1n << 63n, 'a container id is a positive bigint');
  return value.toString(16).toUpperCase().padStart(16, '0');
}

/** The container id a version names; undefined for text no version has (a store answers notFound). */
export function containerIdOfVersion(version: string): bigint | undefined {
  if (!versionPattern.test(version)) return undefined;
  const id = BigInt(`0x${version}`);
  return id < 1n << 63n ? id : undefined;
}

/**
 * Where listDeletedContainers starts, as (name, id): at `from`, or at the prefix when `from` is
 * undefined or before it. A version no container has starts at the name's first (a marker is the
 * service's own text, but a client may send any).
 */
export function deletedListStart(
  prefix: string,
  from: { readonly name: string; readonly version: string } | undefined,
): { readonly name: string; readonly id: bigint } {
  if (from === undefined || compareCodePoints(from.name, prefix) < 0) return { name: prefix, id: 0n };
  return { name: from.name, id: containerIdOfVersion(from.version) ?? 0n };
}
