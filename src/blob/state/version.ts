// Which version of a blob a record is (operations/versions.ts): a previous version, kept under its
// key (BlobStore's versionKey), or the current one, whose id is in its state; snapshots and blobs
// written without versioning are neither.
import { versionIdOfKey, type BlobRecord } from '../../storage/blob-store.js';
import type { BlobState } from './blob.js';

export interface VersionView {
  readonly id: string;
  /** The base blob: the current version. */
  readonly current: boolean;
}

export function versionOf(record: BlobRecord, state: BlobState): VersionView | undefined {
  const previous = versionIdOfKey(record.snapshot);
  if (previous !== undefined) return { id: previous, current: false };
  if (record.snapshot !== '' || state.versionId === undefined) return undefined;
  return { id: state.versionId, current: true };
}
