// The REST resources of the Table service (Azure REST: query-entities): what the path after the
// account names (account-target.ts finds the account).
import { StorageError } from '../errors.js';
import { parseKeyPredicate, percentDecode } from './wire/keys.js';
import { type EntityKeys } from '../domain/entity.js';

export type Resource =
  /** `/` with ?restype=service&comp=… */
  | { readonly kind: 'service' }
  /** `/Tables` or `/Tables()` (legacy .NET, parseResource): Query Tables, Create Table. */
  | { readonly kind: 'tables' }
  /** `/Tables('name')`: Get Table, Delete Table. */
  | { readonly kind: 'table'; readonly table: string }
  /** `/$batch` */
  | { readonly kind: 'batch' }
  /** `/name`: Insert Entity, Query Entities, ?comp=acl. */
  | { readonly kind: 'tableRoot'; readonly table: string }
  /** `/name()`: Query Entities; Insert Entity (legacy .NET, parseResource). */
  | { readonly kind: 'entities'; readonly table: string }
  /** `/name(PartitionKey='…',RowKey='…')` */
  | { readonly kind: 'entity'; readonly table: string; readonly keys: EntityKeys };

const tableSegment = /^([^()]*)\(([\s\S]*)\)$/;
const quotedTableName = /^'((?:[^']|'')*)'$/;

/**
 * The resource named by the path after the account (still percent-encoded).
 *
 * Legacy URL shapes: the .NET libraries WindowsAzure.Storage 9.x and Microsoft.Azure.Cosmos.Table
 * (built on the same code) write every single operation's URL and every $batch part's with
 * GenerateRequestURI, in https://github.com/Azure/azure-storage-net at tag v9.3.2,
 * Lib/Common/Table/TableOperation.Common.cs lines 413-440 (batch parts: absolute URLs,
 * Lib/ClassLibraryCommon/Table/Protocol/TableOperationHttpRequestFactory.cs line 280):
 * - Insert Entity: `POST /{table}()` (line 422), single or in a batch: resource `entities`;
 * - Create Table: the same insert into the table `Tables` (Lib/ClassLibraryCommon/Table/CloudTable.cs
 *   lines 1081-1087), so `POST /Tables()`: resource `tables`;
 * - Delete Table and its existence check: `/Tables('{name}')` (lines 427-430);
 * - every other entity operation: `/{table}(PartitionKey='…',RowKey='…')` (line 435).
 * Their queries use `GET /{table}` (Lib/ClassLibraryCommon/Table/TableQuery.cs line 554) and
 * `GET /Tables`, a batch `POST /$batch` (TableOperationHttpRequestFactory.cs line 213), ACLs
 * `/{table}?comp=acl`. The service and Azurite accept all of them.
 *
 * One trailing slash
 * after a resource is ignored (`/Tables/`, `/$batch/`, `/t(PartitionKey='p',RowKey='r')/`): the
 * spec is silent, but the service resolves a request by its first path segment (it answered
 * `POST /{table}/Tables` as an insert into {table}, Azure/azure-sdk-for-js#18128) and so takes a
 * trailing slash as the resource itself. Other extra segments stay 400 InvalidUri: clearer for a
 * misconfigured endpoint than a write somewhere unexpected.
 */
export function parseResource(path: string): Resource {
  if (path === '') return { kind: 'service' };
  const encoded = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (encoded.includes('/')) throw new StorageError('InvalidUri');
  const segment = percentDecode(encoded);
  if (segment === '$batch') return { kind: 'batch' };
  if (segment.toLowerCase() === 'tables') return { kind: 'tables' };
  const call = tableSegment.exec(segment);
  if (call === null) return { kind: 'tableRoot', table: segment };
  const [, name, inside] = call as unknown as [string, string, string];
  if (name.toLowerCase() === 'tables') {
    if (inside.trim() === '') return { kind: 'tables' };
    const quoted = quotedTableName.exec(inside);
    if (quoted === null) throw new StorageError('InvalidUri');
    return { kind: 'table', table: quoted[1]!.replace(/''/g, "'") };
  }
  if (inside.trim() === '') return { kind: 'entities', table: name };
  const keys = parseKeyPredicate(inside);
  if (keys === undefined) throw new StorageError('InvalidUri', 'The entity key in the URI is not valid.');
  return { kind: 'entity', table: name, keys };
}
