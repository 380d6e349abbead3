// A blob record's `state` (storage/blob-store.ts): everything of a blob version the store does not
// know itself, as JSON: blob type, content headers, metadata, lease, creation time, copy facts and
// the append blob's committed block count and seal, the block blob's access tier. Decoding checks
// the shape, so a record another version wrote wrongly fails loudly rather than answering nonsense.
import assert from 'node:assert/strict';
import { noLease, type StoredLease } from './leases.js';
import type { StoredTier } from './tier.js';
import type { TagSet } from '../tags/tag-set.js';
import type { AccessControl } from '../../domain/posix-acl.js';

export type BlobType = 'BlockBlob' | 'AppendBlob' | 'PageBlob';

/** The content type of a blob written without one (put-blob, put-block-list). */
export const defaultType = 'application/octet-stream';

/** The content headers a blob keeps (put-blob's x-ms-blob-content-*, set-blob-properties). */
export interface ContentHeaders {
  /** Undefined: the default, application/octet-stream; '' none (Set Blob Properties cleared it). */
  readonly contentType?: string | undefined;
  readonly contentEncoding?: string | undefined;
  readonly contentLanguage?: string | undefined;
  readonly contentDisposition?: string | undefined;
  readonly cacheControl?: string | undefined;
  /** Base64; 16 bytes unless Set Blob Properties or Put Block List set it (not validated there). */
  readonly contentMd5?: string | undefined;
}

/** A finished synchronous copy (copy-blob): what Get Blob Properties reports of it. */
export interface CopyFacts {
  readonly id: string;
  readonly source: string;
  readonly completedMs: number;
  readonly sizeBytes: number;
}

export interface BlobState {
  readonly blobType: BlobType;
  readonly createdMs: number;
  readonly headers: ContentHeaders;
  /** Names with their case as sent, in the order sent. */
  readonly metadata: readonly (readonly [string, string])[];
  readonly lease: StoredLease;
  /** Append blobs: the blocks appended so far; block blobs: 0. */
  readonly committedBlockCount: number;
  readonly copy?: CopyFacts | undefined;
  /** Block blobs: the tier set explicitly (state/tier.ts); none: the account's default, inferred. */
  readonly tier?: StoredTier | undefined;
  /** Page blobs: x-ms-blob-sequence-number (put-blob, set-blob-properties, put-page conditions). */
  readonly sequenceNumber?: number | undefined;
  /** Append blobs: sealed (append-blob-seal), read-only until replaced. */
  readonly sealed?: boolean | undefined;
  /** With --blob-versioning: the version id the write that made this version gave it (operations/versions.ts). */
  readonly versionId?: string | undefined;
  /** Blob index tags (tags/tag-set.ts); none: no tags. A snapshot keeps its base's at snapshot time. */
  readonly tags?: TagSet | undefined;
  /** The Data Lake path's owner, group, mode and ACL (docs/datalake.md); none: the defaults. */
  readonly datalake?: AccessControl | undefined;
}

export function encodeBlobState(state: BlobState): string {
  return JSON.stringify(state);
}

export function decodeBlobState(text: string): BlobState {
  const state = JSON.parse(text) as BlobState;
  assert(['BlockBlob', 'AppendBlob', 'PageBlob'].includes(state.blobType), `a blob state has a blob type: ${text}`);
  assert(Array.isArray(state.metadata) && typeof state.createdMs === 'number', `a blob state is whole: ${text}`);
  return { ...state, lease: state.lease ?? noLease };
}

export function metadataMap(state: BlobState): Map<string, string> {
  return new Map(state.metadata);
}
