// The HTTP face of each table and entity operation: read headers and query options, call the
// service, shape the reply (Azure REST: operations-on-tables, operations-on-entities). One function per operation.
import assert from 'node:assert/strict';
import type { EntityKeys } from '../domain/entity.js';
import { etagOf } from '../domain/etag.js';
import { StorageError } from '../errors.js';
import { pageSizeMax } from '../limits.js';
import { decodeContinuation, encodeContinuation } from './wire/continuation.js';
import { rejectUnsupportedQueryOptions } from './query/index.js';
import {
  encodeEntity,
  encodeEntityFeedBytes,
  encodeTable,
  encodeTableFeed,
  entityPath,
  jsonContentType,
  type EntityUrlContext,
  type MetadataLevel,
} from './wire/odata.js';
import { parseSignedIdentifiers, writeSignedIdentifiers } from '../wire/acl-xml.js';
import {
  parseServiceProperties,
  writeServiceProperties,
  writeServiceStats,
} from '../wire/service-properties-xml.js';
import type { TableServices } from './service/services.js';
import type { TableInfo } from '../storage/table-store.js';
import type { Access } from '../http/authorize.js';
import { decodeUtf8 } from '../http/body.js';
import type { Reply } from '../http/respond.js';
import { decodeEntityOperation } from './entity-request.js';
import { headerText } from '../http/headers.js';
import type { Resource } from './resources.js';

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * A decoded request as the operations see it. The front door has checked the credential against
 * the route's SAS need (definition.ts); an operation checks only what depends on its input.
 */
export interface Call {
  readonly services: TableServices;
  readonly account: string;
  /** What the request's credential allows; every operation asks it first. */
  readonly access: Access;
  /** `{scheme}://{host}[/{account}]`: the base of Location, odata.id and odata.metadata. */
  readonly baseUrl: string;
  readonly query: URLSearchParams;
  readonly headers: Headers;
  readonly body: Buffer;
  readonly metadata: MetadataLevel;
  /** Query plans go to the log (issue: query cost made visible). */
  readonly logQuery: (line: string) => void;
}

// -- tables ------------------------------------------------------------------------------------

export async function queryTables(call: Call): Promise<Reply> {
  rejectUnsupportedQueryOptions(call.query.keys());
  const next = call.query.get('NextTableName') ?? undefined;
  const page = await call.services.tables.query(
    call.account,
    call.query.get('$filter') ?? undefined,
    parseTop(call.query),
    next === undefined ? undefined : decodeContinuation(next),
  );
  const headers: Record<string, string> = { 'Content-Type': jsonContentType(call.metadata) };
  if (page.nextTableName !== undefined)
    headers['x-ms-continuation-NextTableName'] = encodeContinuation(page.nextTableName);
  const names = page.tables.map((table) => table.name);
  return { status: 200, headers, body: encodeTableFeed(names, call.metadata, call.baseUrl, call.account) };
}

export async function createTable(call: Call): Promise<Reply> {
  const name = readTableName(call.body);
  const table = await call.services.tables.create(call.account, name);
  const location = `${call.baseUrl}/Tables('${table.name}')`;
  const body = encodeTable(table.name, call.metadata, call.baseUrl, call.account, true);
  return created(call, { Location: location, DataServiceId: location }, body);
}

export async function getTable(call: Call, name: string): Promise<Reply> {
  const table = await call.services.tables.get(call.account, name);
  return {
    status: 200,
    headers: { 'Content-Type': jsonContentType(call.metadata) },
    body: encodeTable(table.name, call.metadata, call.baseUrl, call.account, true),
  };
}

export async function deleteTable(call: Call, name: string): Promise<Reply> {
  await call.services.tables.delete(call.account, name);
  return { status: 204 };
}

function readTableName(body: Buffer): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decodeUtf8(body));
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new StorageError('InvalidInput', 'The request body is not valid JSON.');
  }
  const name = (parsed as { TableName?: unknown } | null)?.TableName;
  if (typeof name !== 'string') throw new StorageError('PropertiesNeedValue', 'The TableName property is required.');
  return name;
}

// -- entities ----------------------------------------------------------------------------------

/** Insert, Update, Merge, Delete and the two upserts: the route sends every entity write here. */
export async function writeEntity(
  call: Call,
  method: string,
  resource: Resource & { readonly table: string },
): Promise<Reply> {
  const operation = decodeEntityOperation(method, resource, call.headers, call.body, call.access);
  assert(operation !== undefined, 'the route sends only entity writes');
  const { table, written } = await call.services.entities.executeIn(call.account, resource.table, operation);
  if (operation.kind === 'delete') return { status: 204 };
  const etag = etagOf(written.timestamp);
  if (operation.kind === 'update') return { status: 204, headers: { ETag: etag } };
  const url = `${call.baseUrl}/${entityPath(table.name, written.partitionKey, written.rowKey)}`;
  const entity = { ...written, properties: operation.body.properties };
  const body = encodeEntity(entity, call.metadata, urlContext(call, table), { single: true });
  return created(call, { ETag: etag, Location: url, DataServiceId: url }, body);
}

export async function getEntity(call: Call, tableName: string, keys: EntityKeys): Promise<Reply> {
  call.access.requireKey(keys);
  const { table, entity } = await call.services.entities.getIn(call.account, tableName, keys);
  const select = parseSelect(call.query);
  return {
    status: 200,
    headers: { 'Content-Type': jsonContentType(call.metadata), ETag: etagOf(entity.timestamp) },
    body: encodeEntity(entity, call.metadata, urlContext(call, table), { single: true, select }),
  };
}

export async function queryEntities(call: Call, tableName: string): Promise<Reply> {
  rejectUnsupportedQueryOptions(call.query.keys());
  const table = await call.services.tables.get(call.account, tableName);
  const nextPartitionKey = call.query.get('NextPartitionKey');
  const nextRowKey = call.query.get('NextRowKey');
  const filter = call.query.get('$filter') ?? undefined;
  const page = await call.services.queries.queryEntities(table, {
    filter,
    top: parseTop(call.query),
    resume:
      nextPartitionKey === null
        ? undefined
        : {
            partitionKey: decodeContinuation(nextPartitionKey),
            // An empty NextRowKey resumes at the start of the partition (Azure REST: query-timeout-and-pagination
            // recommendation).
            rowKey: nextRowKey === null || nextRowKey === '' ? undefined : decodeContinuation(nextRowKey),
          },
    keyRange: call.access.keyRange,
  });
  const plan = `${page.queryClass}; scanned=${page.scanned}; returned=${page.entities.length}`;
  call.logQuery(`query ${call.account}/${table.name} ${plan} filter=${JSON.stringify(filter ?? '')}`);
  const headers: Record<string, string> = {
    'Content-Type': jsonContentType(call.metadata),
    'x-cerulean-query-plan': plan,
  };
  if (page.next !== undefined) {
    headers['x-ms-continuation-NextPartitionKey'] = encodeContinuation(page.next.partitionKey);
    headers['x-ms-continuation-NextRowKey'] = encodeContinuation(page.next.rowKey);
  }
  const context = urlContext(call, table);
  const select = parseSelect(call.query);
  const body = encodeEntityFeedBytes(call.metadata, context, page.entities, { select });
  return { status: 200, headers, body: body.bytes, onSent: body.release };
}

// -- table ACL and service properties (XML) ----------------------------------------------------

const xmlContentType = 'application/xml';

export async function getTableAcl(call: Call, tableName: string): Promise<Reply> {
  const identifiers = await call.services.acls.get(call.account, tableName);
  return { status: 200, headers: { 'Content-Type': xmlContentType }, body: writeSignedIdentifiers(identifiers) };
}

export async function setTableAcl(call: Call, tableName: string): Promise<Reply> {
  const identifiers = parseSignedIdentifiers(decodeUtf8(call.body));
  await call.services.acls.set(call.account, tableName, identifiers);
  return { status: 204 };
}

export async function getServiceProperties(call: Call): Promise<Reply> {
  const properties = await call.services.serviceProperties.get(call.account);
  return { status: 200, headers: { 'Content-Type': xmlContentType }, body: writeServiceProperties(properties) };
}

export async function setServiceProperties(call: Call): Promise<Reply> {
  const update = parseServiceProperties(decodeUtf8(call.body));
  await call.services.serviceProperties.set(call.account, update);
  return { status: 202 };
}

export async function getServiceStats(call: Call): Promise<Reply> {
  // Without a standby there is no replica: the primary's own data answers, always in sync.
  const { status, lastSyncTime } = call.services.replication?.status() ?? { status: 'live', lastSyncTime: new Date() };
  return { status: 200, headers: { 'Content-Type': xmlContentType }, body: writeServiceStats(status, lastSyncTime) };
}

// -- shared request and reply pieces -------------------------------------------------------------

/** Insert and Create Table honour Prefer (Azure REST: create-table, insert-entity). */
function created(call: Call, headers: Record<string, string>, body: string): Reply {
  const prefer = preferOf(call.headers['prefer']);
  if (prefer === 'return-no-content') {
    return { status: 204, headers: { ...headers, 'Preference-Applied': prefer } };
  }
  const applied: Record<string, string> = prefer === 'return-content' ? { 'Preference-Applied': prefer } : {};
  return { status: 201, headers: { ...headers, ...applied, 'Content-Type': jsonContentType(call.metadata) }, body };
}

/** The Prefer value we honour; unknown values are ignored (docs/protocol-notes.md#unknown-input-is-ignored). */
export function preferOf(value: string | string[] | undefined): 'return-no-content' | 'return-content' | undefined {
  const text = headerText(value);
  if (/\breturn-no-content\b/i.test(text)) return 'return-no-content';
  if (/\breturn-content\b/i.test(text)) return 'return-content';
  return undefined;
}

/**
 * The method the client means: POST with X-HTTP-Method (MERGE, and harmlessly PUT or DELETE)
 * tunnels another verb (Azure REST: merge-entity).
 */
export function effectiveMethod(method: string, tunnel: string | string[] | undefined): string {
  if (tunnel === undefined) return method;
  const text = headerText(tunnel);
  if (text.includes(',')) throw new StorageError('XMethodIncorrectCount');
  if (method !== 'POST') throw new StorageError('XMethodNotUsingPost');
  const tunnelled = text.trim().toUpperCase();
  if (!['MERGE', 'PATCH', 'PUT', 'DELETE'].includes(tunnelled)) throw new StorageError('XMethodIncorrectValue');
  return tunnelled;
}

function urlContext(call: Call, table: TableInfo): EntityUrlContext {
  return { baseUrl: call.baseUrl, account: call.account, table: table.name };
}

/**
 * `$top`: a page size from 1 to 1000 (Azure REST: query-timeout-and-pagination; 400 InvalidInput outside,
 * recommendation).
 */
function parseTop(query: URLSearchParams): number | undefined {
  const text = query.get('$top');
  if (text === null) return undefined;
  const top = /^\d{1,7}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(top >= 1 && top <= pageSizeMax)) {
    throw new StorageError('InvalidInput', `The $top value '${text}' must be an integer from 1 to ${pageSizeMax}.`);
  }
  return top;
}

function parseSelect(query: URLSearchParams): string[] | undefined {
  const text = query.get('$select');
  if (text === null) return undefined;
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  return names.length === 0 || names.includes('*') ? undefined : names;
}
