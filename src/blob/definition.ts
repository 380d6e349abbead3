// The Blob service as the front door sees it (http/service-definition.ts): its resources, its
// route table (service and container routes here, then the blob and lease routes of
// blob-routes.ts), XML error bodies, the Blob/Queue Shared Key format, its SAS side, anonymous
// reads of public containers and its CORS rules
// (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api).
import { blobQueueSharedKey } from '../http/auth.js';
import type { Reply } from '../http/respond.js';
import type { SasNeed, StoredPolicy } from '../http/sas.js';
import { route, type Route, type ServiceCall, type ServiceDefinition } from '../http/service-definition.js';
import { anonymousAccess } from './container-access.js';
import { blobRoutes } from './blob-routes.js';
import * as containers from './container-operations.js';
import { decodeContainerState } from './container-state.js';
import { parseBlobResource, type BlobResource } from './resources.js';
import * as service from './service-operations.js';
import type { BlobServices } from './services.js';
import { unrouted } from './service-unrouted.js';

type Kind = BlobResource['kind'];
type Of<K extends Kind> = Extract<BlobResource, { readonly kind: K }>;
type Call = ServiceCall<BlobServices>;

interface Line<K extends Kind> {
  readonly resource: K;
  readonly method: string;
  readonly restype?: string;
  readonly comp?: string | null;
  readonly operation: string;
  readonly sas: SasNeed;
}

function on<K extends Kind>(line: Line<K>, handler: (call: Call, resource: Of<K>) => Promise<Reply>) {
  return route<BlobResource, BlobServices, K>(line, handler);
}

/** GET and HEAD answer the same headers; HEAD without a body (the front door drops it). */
function getAndHead<K extends Kind>(
  line: Omit<Line<K>, 'method'>,
  handler: (call: Call, resource: Of<K>) => Promise<Reply>,
): Route<BlobResource, BlobServices>[] {
  return [on({ ...line, method: 'GET' }, handler), on({ ...line, method: 'HEAD' }, handler)];
}

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
const container = 'container';

/** Names from Azure Storage Analytics logging (storage-analytics-logged-operations-and-status-messages). */
export const serviceAndContainerRoutes: readonly Route<BlobResource, BlobServices>[] = [
  on(
    { resource: 'service', method: 'GET', comp: 'list', operation: 'ListContainers', sas: need('s', '', ['l']) },
    (c) => service.listContainers(c),
  ),
  on(
    {
      resource: 'service',
      method: 'GET',
      restype: 'service',
      comp: 'properties',
      operation: 'GetBlobServiceProperties',
      sas: need('s', '', ['r']),
    },
    (c) => service.getServiceProperties(c),
  ),
  on(
    {
      resource: 'service',
      method: 'PUT',
      restype: 'service',
      comp: 'properties',
      operation: 'SetBlobServiceProperties',
      sas: need('s', '', ['w']),
    },
    (c) => service.setServiceProperties(c),
  ),
  on(
    {
      resource: 'service',
      method: 'GET',
      restype: 'service',
      comp: 'stats',
      operation: 'GetBlobServiceStats',
      sas: need('s', '', ['r']),
    },
    (c) => service.getServiceStats(c),
  ),
  // Any SAS may ask (get-account-information); on any resource of the account.
  ...(['service', 'container', 'blob'] as const).flatMap((resource) =>
    getAndHead(
      {
        resource,
        restype: 'account',
        comp: 'properties',
        operation: 'GetAccountInformation',
        sas: need('s', 'r', ['r']),
      },
      () => service.getAccountInformation(),
    ),
  ),
  on(
    {
      resource: 'container',
      method: 'PUT',
      restype: container,
      comp: null,
      operation: 'CreateContainer',
      sas: need('c', '', ['c', 'w']),
    },
    (c, r) => containers.createContainer(c, r.container),
  ),
  on(
    {
      resource: 'container',
      method: 'DELETE',
      restype: container,
      comp: null,
      operation: 'DeleteContainer',
      sas: need('c', '', ['d']),
    },
    (c, r) => containers.deleteContainer(c, r.container),
  ),
  ...getAndHead(
    {
      resource: 'container',
      restype: container,
      comp: null,
      operation: 'GetContainerProperties',
      sas: need('c', '', ['r']),
    },
    (c, r) => containers.getContainerProperties(c, r.container),
  ),
  ...getAndHead(
    {
      resource: 'container',
      restype: container,
      comp: 'metadata',
      operation: 'GetContainerMetadata',
      sas: need('c', '', ['r']),
    },
    (c, r) => containers.getContainerMetadata(c, r.container),
  ),
  on(
    {
      resource: 'container',
      method: 'PUT',
      restype: container,
      comp: 'metadata',
      operation: 'SetContainerMetadata',
      sas: need('c', '', ['w']),
    },
    (c, r) => containers.setContainerMetadata(c, r.container),
  ),
  ...getAndHead(
    { resource: 'container', restype: container, comp: 'acl', operation: 'GetContainerACL', sas: keyOnly },
    (c, r) => containers.getContainerAcl(c, r.container),
  ),
  on(
    {
      resource: 'container',
      method: 'PUT',
      restype: container,
      comp: 'acl',
      operation: 'SetContainerACL',
      sas: keyOnly,
    },
    (c, r) => containers.setContainerAcl(c, r.container),
  ),
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

export const blobService: ServiceDefinition<BlobResource, BlobServices> = {
  name: 'blob',
  endpointKey: 'BlobEndpoint',
  parseResource: (path) => parseBlobResource(path),
  routes: [...serviceAndContainerRoutes, ...blobRoutes.map(withSasResponseHeaders)],
  unrouted,
  errorFormat: () => ({ kind: 'xml' }),
  sharedKey: blobQueueSharedKey,
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
  corsRules: async (services, account) => (await services.properties.get(account)).cors,
  faultScope: (resource) => (resource.kind === 'service' ? undefined : resource.container),
};
