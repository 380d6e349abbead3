// The Blob service's routes for blobs and for leases (containers' and blobs'); the container and
// service routes are in definition.ts, which puts these after them.
import type { Route } from '../http/service-definition.js';
import type { BlobResource } from './resources.js';
import type { BlobServices } from './services.js';

export const blobRoutes: readonly Route<BlobResource, BlobServices>[] = [];
