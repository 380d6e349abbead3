// The Blob service's routes for blobs, List Blobs and leases (containers' and blobs'); the service
// and other container routes are in definition.ts, which puts these after them. Operation names
// are Storage Analytics' (storage-analytics-logged-operations-and-status-messages).
import { firstHeader } from '../http/headers.js';
import type { Reply } from '../http/respond.js';
import type { SasNeed } from '../http/sas.js';
import { route, type Route, type RouteLine, type RouteRequest, type ServiceCall } from '../http/service-definition.js';
import type { BlobOf } from './operations/access.js';
import { appendBlock, appendBlockFromUrl } from './operations/append.js';
import { getBlockList, putBlock, putBlockFromUrl, putBlockList } from './operations/blocks.js';
import { putBlobFromUrl } from './operations/from-url.js';
import { abortCopyBlob, copyBlob } from './operations/copy.js';
import { getBlob, getBlobProperties } from './operations/get.js';
import { leaseBlob, leaseContainer } from './operations/lease.js';
import { deleteBlob, getBlobMetadata, setBlobMetadata, setBlobProperties } from './operations/properties.js';
import { undeleteBlob } from './operations/soft-delete.js';
import { putBlob } from './operations/put.js';
import { checkedOnPath } from './operations/path-acl.js';
import { executeBit, readBit, writeBit } from '../domain/posix-acl.js';
import { getPageRanges, putPage, putPageFromUrl } from './operations/pages.js';
import { snapshotBlob } from './operations/snapshot.js';
import { sealBlob } from './operations/seal.js';
import { setBlobTier } from './operations/tier.js';
import { listBlobs } from './operations/list-blobs.js';
import { findBlobsByTags } from './operations/find-blobs.js';
import { getBlobTags, setBlobTags } from './operations/tags.js';
import type { BlobResource } from './resources.js';
import type { BlobServices } from './services.js';

type Call = ServiceCall<BlobServices>;

/** A blob line: every one says its `comp` (null: none), so that no two overlap by omission. */
type Line = Omit<RouteLine<BlobResource, 'blob'>, 'resource' | 'comp'> & { readonly comp: string | null };

function blob(
  line: Line,
  handler: (call: Call, resource: BlobOf) => Promise<Reply>,
): Route<BlobResource, BlobServices> {
  return route<BlobResource, BlobServices, 'blob'>({ ...line, resource: 'blob' }, handler);
}

// What a SAS must grant: a service SAS all of `service` (or one of `serviceAlso`), an account SAS
// one of `account`, for objects. The letters' meanings are the tables of create-service-sas
// ("Create: write a new blob, snapshot a blob, or copy a blob to a new blob"; "Add: add a block to
// an append blob"; "Delete: ... from 2017-07-29 also break a lease on a blob") and
// create-account-sas ("Create: ... may not overwrite existing blobs"; "Add: ... append blobs").
const object = (service: string, account: string[]): SasNeed => ({ resourceType: 'o', service, account });
const read = object('r', ['r']);
const write = object('w', ['w']);
/** Writes a new blob or replaces one: Create grants only the first (the handler checks, checkWrite). */
const create: SasNeed = { ...write, create: true };
/** A snapshot is a new object and replaces nothing: Create grants it outright. */
const snapshot: SasNeed = { ...object('w', ['w', 'c']), serviceAlso: [{ letters: 'c' }] };
const append: SasNeed = { ...object('w', ['w', 'a']), serviceAlso: [{ letters: 'a' }] };
const breakBlobLease: SasNeed = { ...write, serviceAlso: [{ letters: 'd', since: '2017-07-29' }] };
/**
 * Lease Container is a container operation: an account SAS with srt=c and Write. A service SAS
 * cannot lease a container (create-service-sas, permissions for a container: not "to lease a
 * container, with a container SAS. Use an account SAS instead").
 */
const containerLease: SasNeed = { resourceType: 'c', service: '', account: ['w'] };
/** Tag (t) and Find (f): create-service-sas, create-account-sas ("blob tag operations", "filtering by blob tag"). */
const tagsNeed = object('t', ['t']);
const findInContainer: SasNeed = { resourceType: 'c', service: 'f', account: ['f'] };

const permanent = object('y', ['y']);
const asksPermanent = (request: RouteRequest) => request.query.has('deletetype');
const has = (name: string) => (request: RouteRequest) => firstHeader(request.headers[name]) !== undefined;
const hasNot = (name: string) => (request: RouteRequest) => firstHeader(request.headers[name]) === undefined;
const both = (a: (r: RouteRequest) => boolean, b: (r: RouteRequest) => boolean) => (r: RouteRequest) => a(r) && b(r);

/** One route per lease action, named as Storage Analytics names them (AcquireBlobLease, BreakContainerLease, …). */
function leaseLines(
  target: 'Blob' | 'Container',
  make: (
    operation: string,
    when: (r: RouteRequest) => boolean,
    action: string | undefined,
  ) => Route<BlobResource, BlobServices>,
): Route<BlobResource, BlobServices>[] {
  const actions = ['acquire', 'renew', 'change', 'release', 'break'];
  const named = actions.map((action) =>
    make(
      `${action[0]!.toUpperCase()}${action.slice(1)}${target}Lease`,
      (request) => firstHeader(request.headers['x-ms-lease-action'])?.toLowerCase() === action,
      action,
    ),
  );
  // A missing or unknown action: the handler answers it (400).
  return [...named, make(`${target}Lease`, () => true, undefined)];
}

export const blobRoutes: readonly Route<BlobResource, BlobServices>[] = [
  route<BlobResource, BlobServices, 'container'>(
    {
      resource: 'container',
      method: 'GET',
      restype: 'container',
      comp: 'list',
      operation: 'ListBlobs',
      sas: { resourceType: 'c', service: 'l', account: ['l'] },
    },
    (c, r) => listBlobs(c, r.container),
  ),
  route<BlobResource, BlobServices, 'container'>(
    {
      resource: 'container',
      method: 'GET',
      restype: 'container',
      comp: 'blobs',
      operation: 'FindBlobsByTags',
      sas: findInContainer,
    },
    (c, r) => findBlobsByTags(c, r.container),
  ),
  ...leaseLines('Container', (operation, when) =>
    route<BlobResource, BlobServices, 'container'>(
      {
        resource: 'container',
        method: 'PUT',
        restype: 'container',
        comp: 'lease',
        when,
        operation,
        sas: containerLease,
      },
      (c, r) => leaseContainer(c, r.container),
    ),
  ),
  blob(
    {
      method: 'PUT',
      comp: null,
      when: both(has('x-ms-copy-source'), has('x-ms-blob-type')),
      operation: 'PutBlobFromURL',
      sas: create,
    },
    putBlobFromUrl,
  ),
  blob({ method: 'PUT', comp: null, when: has('x-ms-copy-source'), operation: 'CopyBlob', sas: create }, copyBlob),
  // A bearer caller's ACL check on the path (operations/path-acl.ts, docs/datalake.md).
  blob(
    { method: 'PUT', comp: null, operation: 'PutBlob', sas: create, streamsBody: true },
    checkedOnPath({ parent: writeBit | executeBit }, putBlob),
  ),
  blob({ method: 'GET', comp: null, operation: 'GetBlob', sas: read }, checkedOnPath({ self: readBit }, getBlob)),
  blob({ method: 'HEAD', comp: null, operation: 'GetBlobProperties', sas: read }, checkedOnPath({}, getBlobProperties)),
  // Permanent Delete (y) for deletetype=permanent (create-service-sas, create-account-sas).
  blob(
    { method: 'DELETE', comp: null, when: asksPermanent, operation: 'DeleteBlob', sas: permanent },
    checkedOnPath({ parent: writeBit | executeBit, sticky: true }, deleteBlob),
  ),
  blob(
    { method: 'DELETE', comp: null, operation: 'DeleteBlob', sas: object('d', ['d']) },
    checkedOnPath({ parent: writeBit | executeBit, sticky: true }, deleteBlob),
  ),
  // Chosen (unverified): a SAS undeletes with Write, as the docs name no letter for it.
  blob({ method: 'PUT', comp: 'undelete', operation: 'UndeleteBlob', sas: write }, undeleteBlob),
  blob({ method: 'PUT', comp: 'properties', operation: 'SetBlobProperties', sas: write }, setBlobProperties),
  blob({ method: 'GET', comp: 'metadata', operation: 'GetBlobMetadata', sas: read }, getBlobMetadata),
  blob({ method: 'HEAD', comp: 'metadata', operation: 'GetBlobMetadata', sas: read }, getBlobMetadata),
  blob({ method: 'PUT', comp: 'metadata', operation: 'SetBlobMetadata', sas: write }, setBlobMetadata),
  blob(
    { method: 'PUT', comp: 'block', when: has('x-ms-copy-source'), operation: 'PutBlockFromURL', sas: write },
    putBlockFromUrl,
  ),
  blob(
    {
      method: 'PUT',
      comp: 'block',
      when: hasNot('x-ms-copy-source'),
      operation: 'PutBlock',
      // Staging changes no committed blob; Create may stage for a blob that does not exist yet.
      sas: create,
      streamsBody: true,
    },
    putBlock,
  ),
  blob({ method: 'PUT', comp: 'blocklist', operation: 'PutBlockList', sas: create, streamsBody: true }, putBlockList),
  blob({ method: 'GET', comp: 'blocklist', operation: 'GetBlockList', sas: read }, getBlockList),
  blob(
    { method: 'PUT', comp: 'appendblock', when: has('x-ms-copy-source'), operation: 'AppendBlockFromURL', sas: append },
    appendBlockFromUrl,
  ),
  blob({ method: 'PUT', comp: 'appendblock', operation: 'AppendBlock', sas: append, streamsBody: true }, appendBlock),
  blob(
    { method: 'PUT', comp: 'page', when: has('x-ms-copy-source'), operation: 'PutPageFromURL', sas: write },
    putPageFromUrl,
  ),
  blob({ method: 'PUT', comp: 'page', operation: 'PutPage', sas: write, streamsBody: true }, putPage),
  blob({ method: 'GET', comp: 'pagelist', operation: 'GetPageRegions', sas: read }, getPageRanges),
  blob({ method: 'PUT', comp: 'snapshot', operation: 'SnapshotBlob', sas: snapshot }, snapshotBlob),
  blob({ method: 'PUT', comp: 'copy', operation: 'AbortCopyBlob', sas: write }, abortCopyBlob),
  // set-blob-tier: "anyone with a Shared Access Signature that has permission to write"; append-blob-seal likewise.
  blob({ method: 'PUT', comp: 'tier', operation: 'SetBlobTier', sas: write }, setBlobTier),
  blob({ method: 'PUT', comp: 'seal', operation: 'SealBlob', sas: write }, sealBlob),
  blob({ method: 'PUT', comp: 'tags', operation: 'SetBlobTags', sas: tagsNeed }, setBlobTags),
  blob({ method: 'GET', comp: 'tags', operation: 'GetBlobTags', sas: tagsNeed }, getBlobTags),
  ...leaseLines('Blob', (operation, when, action) =>
    blob(
      { method: 'PUT', comp: 'lease', when, operation, sas: action === 'break' ? breakBlobLease : write },
      leaseBlob,
    ),
  ),
];
