// The Data Lake Storage Gen2 API (dfs) as the front door sees it
// (https://learn.microsoft.com/rest/api/storageservices/data-lake-storage-gen2): its resources,
// route table, JSON errors and SAS side. It answers on the Blob service's port (compose.ts joins
// the two with http/shared-port.ts): a request is the Data Lake API's when its query says so
// (`claims`); every other request on that port is the Blob API's. docs/datalake.md has the choices.
import { invalidQueryParameter, StorageError } from '../errors.js';
import { blobQueueSharedKey } from '../http/auth.js';
import { firstHeader } from '../http/headers.js';
import type { Reply } from '../http/respond.js';
import type { SasNeed } from '../http/sas.js';
import { routeMaker, type RouteRequest, type ServiceCall, type ServiceModule } from '../http/service-definition.js';
import { appendData, flushData } from './operations/data.js';
import {
  createFilesystem,
  deleteFilesystem,
  getFilesystemProperties,
  listFilesystems,
  setFilesystemProperties,
} from './operations/filesystem.js';
import { leasePath } from './operations/lease.js';
import { listPaths } from './operations/list-paths.js';
import { createPath, deletePath, getPathProperties, setAccessControl } from './operations/path.js';
import { renamePath } from './operations/rename.js';
import { setAccessControlRecursive } from './operations/access-recursive.js';
import { parseDatalakeResource, type DatalakeResource } from './resources.js';
import type { DatalakeServices } from './services.js';

type Call = ServiceCall<DatalakeServices>;

/**
 * Whether a request on the Blob service's port is the Data Lake API's: its query names a
 * `resource` (account, filesystem, directory, file), an `action` (append, flush, getStatus,
 * getAccessControl, setAccessControl), a rename `mode`, or `recursive` (Delete Path). The Blob API
 * has none of these parameters. Requests without them (Read Path as GET, Get Properties as HEAD,
 * Delete of a file) are answered by the Blob API, for the same blob: the official SDKs send
 * those to the blob endpoint anyway. A POST without `comp` or `restype` is Lease Path: the Blob
 * API's POSTs (Blob Batch, Query Blob Contents) all name a `comp`.
 */
export function claimsDatalake(query: URLSearchParams, method?: string): boolean {
  if (method === 'POST' && !query.has('comp') && !query.has('restype')) return true;
  return query.has('resource') || query.has('action') || query.has('mode') || query.has('recursive');
}

const on = routeMaker<DatalakeResource, DatalakeServices, Call>((call) => call);

const need = (resourceType: 'c' | 'o', service: string, account: string[]): SasNeed => ({
  resourceType,
  service,
  account,
});
/** File systems are containers: a service SAS does not manage them (as for the Blob API's containers). */
const filesystemNeed = (letters: string[]) => need('c', '', letters);
const read = need('o', 'r', ['r']);
const write = need('o', 'w', ['w']);
const create: SasNeed = { ...write, serviceAlso: [{ letters: 'c' }] };
const append: SasNeed = { ...write, serviceAlso: [{ letters: 'a' }] };

const queryIs =
  (name: string, ...values: string[]) =>
  (request: RouteRequest) =>
    values.includes(request.query.get(name) ?? '');
const hasLeaseAction = (request: RouteRequest) => firstHeader(request.headers['x-ms-lease-action']) !== undefined;
const hasRenameSource = (request: RouteRequest) => firstHeader(request.headers['x-ms-rename-source']) !== undefined;

function filesystemLine(
  method: string,
  operation: string,
  sas: SasNeed,
  handler: (call: Call, filesystem: string) => Promise<Reply>,
) {
  return on({ resource: 'filesystem', method, when: queryIs('resource', 'filesystem'), operation, sas }, (c, r) =>
    handler(c, r.filesystem),
  );
}

function pathLine(
  method: string,
  when: (request: RouteRequest) => boolean,
  operation: string,
  sas: SasNeed,
  handler: (call: Call, filesystem: string, path: string) => Promise<Reply>,
  streamsBody = false,
) {
  return on({ resource: 'path', method, when, operation, sas, streamsBody }, (c, r) =>
    handler(c, r.filesystem, r.path),
  );
}

function rootLine(
  method: string,
  action: string,
  operation: string,
  sas: SasNeed,
  handler: (call: Call, filesystem: string, path: string) => Promise<Reply>,
) {
  return on({ resource: 'filesystem', method, when: queryIs('action', action), operation, sas }, (c, r) =>
    handler(c, r.filesystem, ''),
  );
}

/** Operation names as Storage Analytics logs name the Data Lake API's (CreatePathFile, AppendFile, …). */
export const datalakeRoutes = [
  on(
    {
      resource: 'account',
      method: 'GET',
      when: queryIs('resource', 'account'),
      operation: 'ListFilesystems',
      sas: need('c', '', ['l']),
    },
    (c) => listFilesystems(c),
  ),
  filesystemLine('PUT', 'CreateFilesystem', filesystemNeed(['c', 'w']), createFilesystem),
  filesystemLine('DELETE', 'DeleteFilesystem', filesystemNeed(['d']), deleteFilesystem),
  filesystemLine('HEAD', 'GetFilesystemProperties', filesystemNeed(['r']), getFilesystemProperties),
  filesystemLine('PATCH', 'SetFilesystemProperties', filesystemNeed(['w']), setFilesystemProperties),
  on(
    {
      resource: 'filesystem',
      method: 'GET',
      when: queryIs('resource', 'filesystem'),
      operation: 'ListPaths',
      sas: need('c', 'l', ['l']),
    },
    (c, r) => listPaths(c, r.filesystem),
  ),
  pathLine('PUT', hasRenameSource, 'RenamePath', create, renamePath),
  pathLine('PUT', queryIs('resource', 'file'), 'CreatePathFile', create, createPath),
  pathLine('PUT', queryIs('resource', 'directory'), 'CreatePathDir', create, createPath),
  pathLine('DELETE', (request) => request.query.has('recursive'), 'DeletePath', need('o', 'd', ['d']), deletePath),
  pathLine('HEAD', queryIs('action', 'getStatus'), 'GetPathStatus', read, getPathProperties),
  pathLine('HEAD', queryIs('action', 'getAccessControl'), 'GetPathAccessControl', read, getPathProperties),
  pathLine('PATCH', queryIs('action', 'append'), 'AppendFile', append, appendData, true),
  pathLine('PATCH', queryIs('action', 'flush'), 'FlushFile', write, flushData),
  pathLine('PATCH', queryIs('action', 'setAccessControl'), 'SetPathAccessControl', write, setAccessControl),
  pathLine(
    'PATCH',
    queryIs('action', 'setAccessControlRecursive'),
    'SetPathAccessControlRecursive',
    write,
    setAccessControlRecursive,
  ),
  // The root directory (`/{fs}/`, as the SDKs' root directory clients name it): its access control.
  rootLine('HEAD', 'getStatus', 'GetPathStatus', read, getPathProperties),
  rootLine('HEAD', 'getAccessControl', 'GetPathAccessControl', read, getPathProperties),
  rootLine('PATCH', 'setAccessControl', 'SetPathAccessControl', write, setAccessControl),
  rootLine('PATCH', 'setAccessControlRecursive', 'SetPathAccessControlRecursive', write, setAccessControlRecursive),
  pathLine('POST', hasLeaseAction, 'LeasePath', write, leasePath),
];

/**
 * No route: a method the resource has not is 405 UnsupportedHttpVerb; an action or resource value
 * Cerulean does not serve (undelete, a `mode` without x-ms-rename-source, …) is
 * 400 InvalidQueryParameterValue naming it (chosen, unverified).
 */
function unrouted(_resource: DatalakeResource, query: URLSearchParams, otherMethods: boolean): StorageError {
  if (otherMethods) return new StorageError('UnsupportedHttpVerb');
  for (const name of ['action', 'resource', 'mode']) {
    const value = query.get(name);
    if (value !== null)
      return invalidQueryParameter(name, value, 'Cerulean does not serve this request of the Data Lake API.');
  }
  return new StorageError('InvalidUri');
}

function resourceOf(resource: DatalakeResource): string | undefined {
  if (resource.kind === 'account') return undefined;
  return resource.kind === 'filesystem' ? resource.filesystem : `${resource.filesystem}/${resource.path}`;
}

export const datalakeService: ServiceModule<DatalakeResource, DatalakeServices> = {
  name: 'blob',
  endpointKey: 'BlobEndpoint',
  open: ({ stores, clock }) => ({ blobs: stores.blobs, paths: stores.paths, clock }),
  parseResource: (path) => parseDatalakeResource(path),
  routes: datalakeRoutes,
  unrouted,
  errorFormat: () => ({ kind: 'datalake' }),
  sharedKey: blobQueueSharedKey,
  noDefaultCacheControl: true,
  sas: {
    accountServiceLetter: 'b',
    resourceOf,
    findPolicy: async () => undefined,
  },
  corsRules: async () => [],
  faultScope: (resource) => (resource.kind === 'account' ? undefined : resource.filesystem),
  objectScope: (resource) => (resource.kind === 'path' ? `${resource.filesystem}/${resource.path}` : undefined),
};
