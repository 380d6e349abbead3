// The Blob service as the front door sees it (http/service-definition.ts): its resources, its
// route table (service and container routes here, then the blob and lease routes of
// routes.ts), XML error bodies, the Blob/Queue Shared Key format, its SAS side, anonymous
// reads of public containers and its CORS rules
// (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api).
import { blobQueueSharedKey } from '../http/auth.js';
import type { Reply } from '../http/respond.js';
import type { SasNeed, StoredPolicy } from '../http/sas.js';
import { routeMaker, type Route, type ServiceCall, type ServiceModule } from '../http/service-definition.js';
import { anonymousAccess } from './operations/anonymous.js';
import { blobRoutes } from './routes.js';
import { submitBatch } from './batch/submit.js';
import {
  createContainer,
  deleteContainer,
  getContainerAcl,
  getContainerMetadata,
  getContainerProperties,
  setContainerAcl,
  setContainerMetadata,
} from './operations/container.js';
import { restoreContainer } from './operations/container-soft-delete.js';
import { decodeContainerState } from './state/container.js';
import { parseBlobResource, type BlobResource } from './resources.js';
import {
  getAccountInformation,
  getServiceProperties,
  getServiceStats,
  listContainers,
  setServiceProperties,
} from './operations/service.js';
import type { BlobServices } from './services.js';
import { getUserDelegationKey } from './operations/user-delegation-key.js';
import { BlobServicePropertiesService } from './state/service-properties.js';
import { refuseVersions, unrouted } from './unrouted.js';
import { findBlobsByTags } from './operations/find-blobs.js';

type Call = ServiceCall<BlobServices>;

/** A route whose handler sees the front door's call as it is. */
const on = routeMaker<BlobResource, BlobServices, Call>((call) => call);

// What a SAS must grant (create-account-sas, create-service-sas): a service SAS all of `service`
// ('' = none may), an account SAS one of `account` with the resource type.
const need = (resourceType: 's' | 'c' | 'o', service: string, account: string[]): SasNeed => ({
  resourceType,
  service,
  account,
});
// A service SAS is for blobs (and List Blobs): it may not manage containers; neither SAS may read or
// set a container's ACL (as for queues; unverified for blobs).
const keyOnly = need('c', '', []);
/** GET and HEAD answer the same headers; HEAD without a body (the front door drops it). */
const reads = ['GET', 'HEAD'];

/** `?restype=service&comp=…` lines: an account SAS with one of `letters`, no service SAS. */
function serviceLine(
  method: string,
  comp: string,
  operation: string,
  letters: string,
  handler: (call: Call) => Promise<Reply>,
) {
  return on(
    { resource: 'service', method, restype: 'service', comp, operation, sas: need('s', '', [letters]) },
    handler,
  );
}

/** `{container}?restype=container[&comp=…]` lines, one per method. */
function containerLines(
  methods: readonly string[],
  comp: string | null,
  operation: string,
  sas: SasNeed,
  handler: (call: Call, container: string) => Promise<Reply>,
) {
  return methods.map((method) =>
    on({ resource: 'container', method, restype: 'container', comp, operation, sas }, (c, r) =>
      handler(c, r.container),
    ),
  );
}

/** Any SAS may ask (get-account-information), on any resource of the account. */
const accountInformation = (['service', 'container', 'blob'] as const).flatMap((resource) =>
  reads.map((method) =>
    on(
      {
        resource,
        method,
        restype: 'account',
        comp: 'properties',
        operation: 'GetAccountInformation',
        sas: need('s', 'r', ['r']),
      },
      () => getAccountInformation(),
    ),
  ),
);

/**
 * Blob Batch: the batch itself asks for Delete or Write on objects (what its parts may do), of an
 * account SAS at service scope, of either kind for its container at container scope; each part is
 * then authorized on its own (chosen: the docs name no permission for the batch itself).
 */
const batchNeed = need('o', '', ['d', 'w']);
const containerBatchNeed: SasNeed = { ...need('o', 'd', ['d', 'w']), serviceAlso: [{ letters: 'w' }] };

/** Names from Azure Storage Analytics logging (storage-analytics-logged-operations-and-status-messages). */
export const serviceAndContainerRoutes: readonly Route<BlobResource, BlobServices>[] = [
  on(
    { resource: 'service', method: 'GET', comp: 'list', operation: 'ListContainers', sas: need('s', '', ['l']) },
    (c) => listContainers(c),
  ),
  // find-blobs-by-tags: an account SAS with Filter (f).
  on(
    { resource: 'service', method: 'GET', comp: 'blobs', operation: 'FindBlobsByTags', sas: need('s', '', ['f']) },
    (c) => findBlobsByTags(c, undefined),
  ),
  serviceLine('GET', 'properties', 'GetBlobServiceProperties', 'r', getServiceProperties),
  serviceLine('PUT', 'properties', 'SetBlobServiceProperties', 'w', setServiceProperties),
  serviceLine('GET', 'stats', 'GetBlobServiceStats', 'r', getServiceStats),
  // Only a bearer token may ask: no SAS grants it (403 before the handler), which refuses Shared Key.
  on(
    {
      resource: 'service',
      method: 'POST',
      restype: 'service',
      comp: 'userdelegationkey',
      operation: 'GetUserDelegationKey',
      sas: need('s', '', []),
    },
    getUserDelegationKey,
  ),
  on({ resource: 'service', method: 'POST', comp: 'batch', operation: 'BlobBatch', sas: batchNeed }, (c) =>
    submitBatch(c, undefined),
  ),
  ...containerLines(['POST'], 'batch', 'BlobBatch', containerBatchNeed, submitBatch),
  ...accountInformation,
  ...containerLines(['PUT'], null, 'CreateContainer', need('c', '', ['c', 'w']), createContainer),
  ...containerLines(['DELETE'], null, 'DeleteContainer', need('c', '', ['d']), deleteContainer),
  // Chosen (unverified): an account SAS restores with Write, as it creates with Create or Write.
  ...containerLines(['PUT'], 'undelete', 'RestoreContainer', need('c', '', ['w']), restoreContainer),
  ...containerLines(reads, null, 'GetContainerProperties', need('c', '', ['r']), getContainerProperties),
  ...containerLines(reads, 'metadata', 'GetContainerMetadata', need('c', '', ['r']), getContainerMetadata),
  ...containerLines(['PUT'], 'metadata', 'SetContainerMetadata', need('c', '', ['w']), setContainerMetadata),
  ...containerLines(reads, 'acl', 'GetContainerACL', keyOnly, getContainerAcl),
  ...containerLines(['PUT'], 'acl', 'SetContainerACL', keyOnly, setContainerAcl),
];

/** The reads whose replies a blob SAS's rscc, rscd, rsce, rscl and rsct rewrite (create-service-sas). */
const sasRewrittenReads: ReadonlySet<string> = new Set(['GetBlob', 'GetBlobProperties']);

function withSasResponseHeaders(line: Route<BlobResource, BlobServices>): Route<BlobResource, BlobServices> {
  return sasRewrittenReads.has(line.operation) ? { ...line, sasResponseHeaders: true } : line;
}

/** The container a request addresses, and (blob requests) `container/blob`: what a service SAS must cover. */
function resourceOf(resource: BlobResource): string | undefined {
  if (resource.kind === 'service') return undefined;
  return resource.kind === 'container' ? resource.container : `${resource.container}/${resource.blob}`;
}

export const blobService: ServiceModule<BlobResource, BlobServices> = {
  name: 'blob',
  endpointKey: 'BlobEndpoint',
  // Its service properties are kept in the table store's settings too, under the blob service's name.
  open: ({ stores, clock, replication, blobRehydrateDelayMs, blobVersioning, containerSoftDeleteDays }) => ({
    blobs: stores.blobs,
    clock,
    properties: new BlobServicePropertiesService(stores.tables),
    replication,
    rehydrateDelayMs: blobRehydrateDelayMs ?? 0,
    versioning: blobVersioning ?? false,
    containerSoftDeleteDays: containerSoftDeleteDays ?? 0,
  }),
  parseResource(path, query) {
    refuseVersions(query);
    return parseBlobResource(path);
  },
  routes: [...serviceAndContainerRoutes, ...blobRoutes.map(withSasResponseHeaders)],
  unrouted,
  errorFormat: () => ({ kind: 'xml' }),
  sharedKey: blobQueueSharedKey,
  noDefaultCacheControl: true,
  sas: {
    accountServiceLetter: 'b',
    resourceOf,
    async findPolicy(services, account, resourceName, id): Promise<StoredPolicy | undefined> {
      const name = resourceName.split('/')[0] ?? '';
      const record = await services.blobs.getContainer(account, name).catch(() => undefined);
      if (record === undefined) return undefined;
      return decodeContainerState(record.state).policies.find((identifier) => identifier.id === id);
    },
  },
  anonymousAccess,
  corsRules: (services, account) => services.properties.cors(account),
  faultScope: (resource) => (resource.kind === 'service' ? undefined : resource.container),
  objectScope: (resource) => (resource.kind === 'blob' ? `${resource.container}/${resource.blob}` : undefined),
};
