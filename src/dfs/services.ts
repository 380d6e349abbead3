// What the Data Lake API's handlers work on: the blob store (a file system is a container, a path
// a blob), the path store (renames), and the clock. The composition makes one per engine.
import type { Clock } from '../domain/clock.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { PathStore } from '../storage/path-store.js';

export interface DatalakeServices {
  readonly blobs: BlobStore;
  readonly paths: PathStore;
  readonly clock: Clock;
}
