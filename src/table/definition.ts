// The Table service as the front door sees it: its resources, its route table (the one place
// that says which request is which operation, what a SAS must grant for it, and who answers it),
// its error bodies (JSON at the request's OData metadata level; XML for the XML operations) and
// its Shared Key format.
import { StorageError } from '../errors.js';
import { jsonContentType, negotiateMetadata, type MetadataLevel } from './wire/odata.js';
import { createTableServices, type TableServices } from './service/services.js';
import { tableSharedKey } from '../http/auth.js';
import { batchTable, submitBatch, type BatchCall } from './batch.js';
import { firstHeader } from '../http/headers.js';
import {
  createTable,
  deleteTable,
  effectiveMethod,
  getEntity,
  getServiceProperties,
  getServiceStats,
  getTable,
  getTableAcl,
  queryEntities,
  queryTables,
  setServiceProperties,
  setTableAcl,
  writeEntity,
} from './operations.js';
import { parseResource, type Resource } from './resources.js';
import { sasNeeds } from '../http/sas.js';
import {
  routeMaker,
  type Headers,
  type ResourceOfKind,
  type Route,
  type ServiceCall,
  type ServiceModule,
} from '../http/service-definition.js';

/** A route whose handler gets the Table service's call (with the negotiated metadata level). */
const on = routeMaker<Resource, TableServices, BatchCall>(tableCall);

const ifMatch = (request: { readonly headers: Headers }): boolean => request.headers['if-match'] !== undefined;

/**
 * Names from Azure Storage Analytics logging
 * (https://learn.microsoft.com/rest/api/storageservices/storage-analytics-logged-operations-and-status-messages).
 * Entity writes are named by If-Match: with it an update or merge, without it an upsert.
 */
export const tableRoutes: readonly Route<Resource, TableServices>[] = [
  on({ resource: 'tables', method: 'GET', operation: 'QueryTables', sas: sasNeeds.queryTables }, (call) =>
    queryTables(call),
  ),
  on({ resource: 'tables', method: 'POST', operation: 'CreateTable', sas: sasNeeds.createTable }, (call) =>
    createTable(call),
  ),
  on({ resource: 'table', method: 'GET', operation: 'QueryTable', sas: sasNeeds.queryTables }, (call, r) =>
    getTable(call, r.table),
  ),
  on({ resource: 'table', method: 'DELETE', operation: 'DeleteTable', sas: sasNeeds.deleteTable }, (call, r) =>
    deleteTable(call, r.table),
  ),
  on(
    { resource: 'tableRoot', method: 'GET', comp: 'acl', operation: 'GetTableAcl', sas: sasNeeds.getTableAcl },
    (call, r) => getTableAcl(call, r.table),
  ),
  on(
    { resource: 'tableRoot', method: 'PUT', comp: 'acl', operation: 'SetTableAcl', sas: sasNeeds.setTableAcl },
    (call, r) => setTableAcl(call, r.table),
  ),
  on(
    { resource: 'tableRoot', method: 'POST', comp: null, operation: 'InsertEntity', sas: sasNeeds.insertEntity },
    (call, r) => writeEntity(call, 'POST', r),
  ),
  on(
    { resource: 'tableRoot', method: 'GET', comp: null, operation: 'QueryEntities', sas: sasNeeds.queryEntities },
    (call, r) => queryEntities(call, r.table),
  ),
  on({ resource: 'entities', method: 'GET', operation: 'QueryEntities', sas: sasNeeds.queryEntities }, (call, r) =>
    queryEntities(call, r.table),
  ),
  // Legacy .NET libraries insert with `POST /{table}()` (resources.ts).
  on({ resource: 'entities', method: 'POST', operation: 'InsertEntity', sas: sasNeeds.insertEntity }, (call, r) =>
    writeEntity(call, 'POST', r),
  ),
  on({ resource: 'entity', method: 'GET', operation: 'QueryEntity', sas: sasNeeds.queryEntities }, (call, r) =>
    getEntity(call, r.table, r.keys),
  ),
  ...entityWrites(),
  // Each part of a batch is checked against the SAS as it is decoded (entity-request.ts).
  on({ resource: 'batch', method: 'POST', operation: 'EntityGroupTransaction', sas: undefined }, (call) =>
    submitBatch(call),
  ),
  ...serviceLevel(),
];

function entityWrites(): Route<Resource, TableServices>[] {
  const write = (method: string) => (call: BatchCall, resource: ResourceOfKind<Resource, 'entity'>) =>
    writeEntity(call, method, resource);
  const update = { resource: 'entity', when: ifMatch, sas: sasNeeds.updateEntity } as const;
  const upsert = { resource: 'entity', sas: sasNeeds.upsertEntity } as const;
  return [
    on({ ...update, method: 'PUT', operation: 'UpdateEntity' }, write('PUT')),
    on({ ...upsert, method: 'PUT', operation: 'InsertOrReplaceEntity' }, write('PUT')),
    on({ ...update, method: 'MERGE', operation: 'MergeEntity' }, write('MERGE')),
    on({ ...upsert, method: 'MERGE', operation: 'InsertOrMergeEntity' }, write('MERGE')),
    on({ ...update, method: 'PATCH', operation: 'MergeEntity' }, write('PATCH')),
    on({ ...upsert, method: 'PATCH', operation: 'InsertOrMergeEntity' }, write('PATCH')),
    on(
      { resource: 'entity', method: 'DELETE', operation: 'DeleteEntity', sas: sasNeeds.deleteEntity },
      write('DELETE'),
    ),
  ];
}

function serviceLevel(): Route<Resource, TableServices>[] {
  const service = { resource: 'service', restype: 'service' } as const;
  return [
    on(
      {
        ...service,
        method: 'GET',
        comp: 'properties',
        operation: 'GetTableServiceProperties',
        sas: sasNeeds.getServiceProperties,
      },
      (call) => getServiceProperties(call),
    ),
    on(
      {
        ...service,
        method: 'PUT',
        comp: 'properties',
        operation: 'SetTableServiceProperties',
        sas: sasNeeds.setServiceProperties,
      },
      (call) => setServiceProperties(call),
    ),
    on(
      { ...service, method: 'GET', comp: 'stats', operation: 'GetTableServiceStats', sas: sasNeeds.getServiceStats },
      (call) => getServiceStats(call),
    ),
  ];
}

export const tableService: ServiceModule<Resource, TableServices> = {
  name: 'table',
  endpointKey: 'TableEndpoint',
  open: ({ stores, replication }) => ({ ...createTableServices(stores.tables), replication }),
  parseResource: (path) => parseResource(path),
  routes: tableRoutes,
  unrouted(resource, query, otherMethods) {
    if (otherMethods) return new StorageError('MethodNotAllowed');
    // Only ?restype=service names a service operation; the bare account root is no resource.
    if (resource.kind === 'service' && query.get('restype') !== 'service') return new StorageError('InvalidUri');
    return new StorageError('NotImplemented');
  },
  effectiveMethod: (method, headers) => effectiveMethod(method, headers['x-http-method']),
  errorFormat(query, headers, resource) {
    // The XML operations (service properties and stats, ACLs) answer errors in XML.
    const xml =
      resource !== undefined &&
      ((resource.kind === 'service' && query.get('restype') === 'service') || query.get('comp') === 'acl');
    return xml ? { kind: 'xml' } : { kind: 'json', contentType: jsonContentType(metadataOf(query, headers)) };
  },
  sharedKey: tableSharedKey,
  sas: {
    accountServiceLetter: 't',
    resourceOf: (resource) =>
      resource.kind === 'tableRoot' || resource.kind === 'entities' || resource.kind === 'entity'
        ? resource.table
        : undefined,
    findPolicy: (services, account, table, id) => services.acls.findPolicy(account, table, id),
  },
  corsRules: (services, account) => services.serviceProperties.cors(account),
  faultScope(resource, call) {
    if (resource.kind === 'batch')
      return batchTable(call.account, firstHeader(call.headers['content-type']), call.body);
    return resource.kind === 'service' || resource.kind === 'tables' ? undefined : resource.table;
  },
};

/** `$format` wins over Accept. */
function metadataOf(query: URLSearchParams, headers: Headers): MetadataLevel {
  return negotiateMetadata(query.get('$format') ?? undefined, firstHeader(headers['accept']));
}

function tableCall(call: ServiceCall<TableServices>): BatchCall {
  return {
    requestId: call.requestId,
    services: call.services,
    account: call.account,
    access: call.access,
    baseUrl: call.baseUrl,
    query: call.query,
    headers: call.headers,
    body: call.body,
    metadata: metadataOf(call.query, call.headers),
    logQuery: call.logInfo,
  };
}
