// The REST resources of the Table service (Azure REST: addressing-table-service-resources) and how a request's target
// names its account: path-style `/{account}/…` or host-style `{account}.table.host/…`.
import { TableError } from '../errors.js';
import { parseKeyPredicate, percentDecode } from '../protocol/keys.js';
import { type EntityKeys } from '../domain/entity.js';

export type Resource =
  /** `/` with ?restype=service&comp=… */
  | { readonly kind: 'service' }
  /** `/Tables`: Query Tables, Create Table. */
  | { readonly kind: 'tables' }
  /** `/Tables('name')`: Get Table, Delete Table. */
  | { readonly kind: 'table'; readonly table: string }
  /** `/$batch` */
  | { readonly kind: 'batch' }
  /** `/name`: Insert Entity, Query Entities, ?comp=acl. */
  | { readonly kind: 'tableRoot'; readonly table: string }
  /** `/name()`: Query Entities. */
  | { readonly kind: 'entities'; readonly table: string }
  /** `/name(PartitionKey='…',RowKey='…')` */
  | { readonly kind: 'entity'; readonly table: string; readonly keys: EntityKeys };

/** A request target split once: the path as received and the query, raw and parsed. */
export interface RequestTarget {
  /** Still percent-encoded, for signing. */
  readonly rawPath: string;
  /** Everything after `?`, as received (SAS signatures are checked against it). */
  readonly rawQuery: string;
  readonly query: URLSearchParams;
}

export function splitRequestTarget(url: string): RequestTarget {
  const queryAt = url.indexOf('?');
  const rawQuery = queryAt < 0 ? '' : url.slice(queryAt + 1);
  return { rawPath: queryAt < 0 ? url : url.slice(0, queryAt), rawQuery, query: new URLSearchParams(rawQuery) };
}

export interface Target {
  readonly account: string;
  /** The request-target path as received (still percent-encoded), for signing. */
  readonly rawPath: string;
  readonly pathStyle: boolean;
  /** Was the account named with `-secondary` (the read replica endpoint)? */
  readonly secondary: boolean;
  readonly resource: Resource;
  readonly query: URLSearchParams;
}

const tableSegment = /^([^()]*)\(([\s\S]*)\)$/;
const quotedTableName = /^'((?:[^']|'')*)'$/;

/** Splits a request target; throws 400 InvalidUri for one that names no resource. */
export function parseTarget(
  { rawPath, query }: RequestTarget,
  host: string | undefined,
  isAccount: (name: string) => boolean,
): Target {
  if (!rawPath.startsWith('/')) throw new TableError('InvalidUri');

  const hostAccount = accountFromHost(host, isAccount);
  let rest: string;
  let account: string;
  if (hostAccount === undefined) {
    const slash = rawPath.indexOf('/', 1);
    account = rawPath.slice(1, slash < 0 ? undefined : slash);
    rest = slash < 0 ? '' : rawPath.slice(slash + 1);
  } else {
    account = hostAccount;
    rest = rawPath.slice(1);
  }
  if (account === '') throw new TableError('InvalidUri');
  const secondary = account.endsWith('-secondary');
  if (secondary) account = account.slice(0, -'-secondary'.length);
  // The Python SDK (azure-data-tables 12.4.2) addresses the path-style secondary endpoint as
  // /{account}-secondary/{account}/…: the primary segment repeated after the secondary one.
  if (secondary && hostAccount === undefined && rest.startsWith(`${account}/`)) rest = rest.slice(account.length + 1);
  return { account, rawPath, pathStyle: hostAccount === undefined, secondary, resource: parseResource(rest), query };
}

/**
 * Host-style when the first DNS label (less `-secondary`) is a known account and the host is a
 * name with more labels, not an IP or `localhost` (docs/protocol-notes.md#urls-and-accounts, recommendation).
 */
function accountFromHost(host: string | undefined, isAccount: (name: string) => boolean): string | undefined {
  if (host === undefined) return undefined;
  const hostname = host.replace(/:\d+$/, '');
  const dot = hostname.indexOf('.');
  if (dot < 0 || /^[\d.]+$/.test(hostname) || hostname.startsWith('[')) return undefined;
  const label = hostname.slice(0, dot).toLowerCase();
  return isAccount(label.replace(/-secondary$/, '')) ? label : undefined;
}

/**
 * The resource named by the path after the account (still percent-encoded). One trailing slash
 * after a resource is ignored (`/Tables/`, `/$batch/`, `/t(PartitionKey='p',RowKey='r')/`): the
 * spec is silent, but the service resolves a request by its first path segment (it answered
 * `POST /{table}/Tables` as an insert into {table}, Azure/azure-sdk-for-js#18128) and so takes a
 * trailing slash as the resource itself. Other extra segments stay 400 InvalidUri: clearer for a
 * misconfigured endpoint than a write somewhere unexpected.
 */
export function parseResource(path: string): Resource {
  if (path === '') return { kind: 'service' };
  const encoded = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (encoded.includes('/')) throw new TableError('InvalidUri');
  const segment = percentDecode(encoded);
  if (segment === '$batch') return { kind: 'batch' };
  if (segment.toLowerCase() === 'tables') return { kind: 'tables' };
  const call = tableSegment.exec(segment);
  if (call === null) return { kind: 'tableRoot', table: segment };
  const [, name, inside] = call as unknown as [string, string, string];
  if (name.toLowerCase() === 'tables') {
    const quoted = quotedTableName.exec(inside);
    if (quoted === null) throw new TableError('InvalidUri');
    return { kind: 'table', table: quoted[1]!.replace(/''/g, "'") };
  }
  if (inside.trim() === '') return { kind: 'entities', table: name };
  const keys = parseKeyPredicate(inside);
  if (keys === undefined) throw new TableError('InvalidUri', 'The entity key in the URI is not valid.');
  return { kind: 'entity', table: name, keys };
}
