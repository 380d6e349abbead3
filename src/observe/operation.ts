// The name of the operation a request asks for, in the terms of Azure Storage Analytics logs
// (QueryEntity, InsertOrMergeEntity, EntityGroupTransaction, …): the label of metrics, the key of
// fault rules. A fixed, small set, so metric cardinality stays bounded.
import type { Resource } from '../http/routes.js';

export const operationNames = [
  'QueryTables',
  'CreateTable',
  'QueryTable',
  'DeleteTable',
  'GetTableAcl',
  'SetTableAcl',
  'InsertEntity',
  'QueryEntities',
  'QueryEntity',
  'UpdateEntity',
  'MergeEntity',
  'InsertOrReplaceEntity',
  'InsertOrMergeEntity',
  'DeleteEntity',
  'EntityGroupTransaction',
  'GetTableServiceProperties',
  'SetTableServiceProperties',
  'GetTableServiceStats',
  'Unknown',
] as const;

export type OperationName = (typeof operationNames)[number];

/** `method` is the effective one (after X-HTTP-Method); `ifMatch` whether the request carries If-Match. */
export function operationName(
  method: string,
  resource: Resource,
  query: URLSearchParams,
  ifMatch: boolean,
): OperationName {
  switch (resource.kind) {
    case 'tables':
      return method === 'GET' ? 'QueryTables' : method === 'POST' ? 'CreateTable' : 'Unknown';
    case 'table':
      return method === 'GET' ? 'QueryTable' : method === 'DELETE' ? 'DeleteTable' : 'Unknown';
    case 'tableRoot':
      if (query.get('comp') === 'acl')
        return method === 'GET' ? 'GetTableAcl' : method === 'PUT' ? 'SetTableAcl' : 'Unknown';
      return method === 'POST' ? 'InsertEntity' : method === 'GET' ? 'QueryEntities' : 'Unknown';
    case 'entities':
      return method === 'GET' ? 'QueryEntities' : 'Unknown';
    case 'entity':
      switch (method) {
        case 'GET':
          return 'QueryEntity';
        case 'PUT':
          return ifMatch ? 'UpdateEntity' : 'InsertOrReplaceEntity';
        case 'MERGE':
        case 'PATCH':
          return ifMatch ? 'MergeEntity' : 'InsertOrMergeEntity';
        case 'DELETE':
          return 'DeleteEntity';
      }
      return 'Unknown';
    case 'batch':
      return 'EntityGroupTransaction';
    case 'service':
      switch (query.get('comp')) {
        case 'properties':
          return method === 'GET' ? 'GetTableServiceProperties' : 'SetTableServiceProperties';
        case 'stats':
          return 'GetTableServiceStats';
      }
      return 'Unknown';
  }
}

/** The table a request's URL names, if any (a batch names its table inside the body). */
export function tableOf(resource: Resource): string | undefined {
  return resource.kind === 'service' || resource.kind === 'tables' || resource.kind === 'batch'
    ? undefined
    : resource.table;
}
