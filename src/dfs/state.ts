// A path's record: a base blob of its file system (storage/path-store.ts), whose `state` is the
// Blob service's stored form of a blob (JSON with blobType, createdMs, headers, metadata, lease,
// committedBlockCount, as docs/blob.md keeps it), so the Blob API reads what the Data Lake API
// writes and back. The Data Lake API adds `datalake` (owner, group, permissions, ACL) and marks a
// directory as the service shows one through the Blob API: a zero-length block blob with the
// metadata hdi_isfolder=true. Fields this module does not know are kept as they are.
import assert from 'node:assert/strict';
import { storedAccess, superuser, type AccessControl } from '../domain/posix-acl.js';
import type { LeaseFields } from '../domain/lease.js';

export { superuser, type AccessControl };

export interface PathState {
  readonly blobType: string;
  readonly createdMs: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly metadata: readonly (readonly [string, string])[];
  /** The blob's lease (domain/lease.ts): one lease for both APIs. */
  readonly lease?: LeaseFields | undefined;
  readonly committedBlockCount: number;
  readonly datalake?: AccessControl | undefined;
  readonly [other: string]: unknown;
}

export const folderMetadataName = 'hdi_isfolder';

export function decodePathState(text: string): PathState {
  const state = JSON.parse(text) as PathState;
  assert(typeof state.blobType === 'string' && Array.isArray(state.metadata), `a blob state: ${text}`);
  return state;
}

export function encodePathState(state: PathState): string {
  return JSON.stringify(state);
}

export function isDirectory(state: PathState): boolean {
  return state.metadata.some(([name, value]) => name.toLowerCase() === folderMetadataName && value === 'true');
}

/** A new file's or directory's state: a block blob with the given properties (metadata) and access control. */
export function newPathState(
  directory: boolean,
  createdMs: number,
  properties: readonly (readonly [string, string])[],
  access: AccessControl,
  headers: Readonly<Record<string, string | undefined>> = {},
): PathState {
  const metadata = directory ? [...properties, [folderMetadataName, 'true'] as const] : [...properties];
  return { blobType: 'BlockBlob', createdMs, headers, metadata, committedBlockCount: 0, datalake: access };
}

/** The default owner, group and mode of a path written through the Blob API or before access control was kept. */
export function accessOf(state: PathState): AccessControl {
  return storedAccess(state, 'path');
}

/** Properties (x-ms-properties) are the blob's metadata, but for the directory marker. */
export function propertiesOf(state: PathState): (readonly [string, string])[] {
  return state.metadata.filter(([name]) => name.toLowerCase() !== folderMetadataName);
}
