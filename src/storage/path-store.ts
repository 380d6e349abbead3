// The storage contract of the Data Lake API's hierarchical namespace, beside the blob store's
// (blob-store.ts), over the same rows: a file is a base blob of its container and a directory is a
// base blob too (a zero-length marker the Data Lake service writes with the metadata
// hdi_isfolder=true), so the Blob API and the Data Lake API see one namespace. What the blob store
// cannot do path by path is here: the renames of a file or of a whole directory tree, and the
// delete of a whole tree, each one transaction. Every engine proves it with the path conformance
// suite (tests/storage/path-conformance/).

/** renamePath's answer. */
export type RenameOutcome =
  | 'ok'
  | 'containerNotFound'
  /** No base blob named `source`. */
  | 'sourceNotFound'
  /** The source's ETag is not `sourceEtag` any more. */
  | 'etagMismatch'
  /** A base blob named `destination`, or one under `destination/`, exists. */
  | 'destinationExists';

/** deleteTree's answer. */
export type DeleteTreeOutcome =
  | 'ok'
  | 'containerNotFound'
  /** No base blob named `path`. */
  | 'pathNotFound'
  /** The path's ETag is not `etag` any more. */
  | 'etagMismatch';

export interface PathStore {
  /**
   * Renames the base blob `source` and every blob (snapshots too) and staged block named under
   * `source/` so that `source` becomes `destination`, in one transaction, if the source's base
   * record's ETag is `sourceEtag` and nothing is named `destination` or under `destination/`.
   * Content is not copied: the records keep their blocks. `destination` must not be `source` nor
   * under it (the caller checks; the store asserts).
   */
  renamePath(
    account: string,
    container: string,
    source: string,
    destination: string,
    sourceEtag: string,
  ): Promise<RenameOutcome>;

  /**
   * Deletes the base blob `path` and every base blob and staged block named under `path/`, with
   * their snapshots (not previous versions nor soft-deleted rows, as deleteBlob's `base` and
   * `snapshots` leave those), and their index tags, in one transaction, if `path`'s base record's
   * ETag is `etag`. A directory's recursive delete: all of it or none of it.
   */
  deleteTree(account: string, container: string, path: string, etag: string): Promise<DeleteTreeOutcome>;
}

/** The smallest name after every name under `prefix/`: `prefix0` ('0' follows '/' in every collation by code point). */
export function pastChildren(name: string): string {
  return `${name}0`;
}
