// The HTTP face of $batch (Azure REST: performing-entity-group-transactions): parse the multipart body, turn each part
// into a service
// operation, run them as one transaction, and answer 202 with one part per operation, or only
// the failing operation's part.
import { StorageError } from '../errors.js';
import {
  BatchOperationError,
  parseBatchRequest,
  serializeBatchResponse,
  type BatchOperationRequest,
  type BatchOperationResponse,
} from './wire/batch.js';
import { encodeEntity, entityPath, jsonContentType, negotiateMetadata } from './wire/odata.js';
import { atIndex, type EntityOperation } from './service/entities.js';
import { decodeEntityOperation } from './entity-request.js';
import { firstHeader } from '../http/headers.js';
import { effectiveMethod, preferOf, type Call, type Headers } from './operations.js';
import { jsonError, type Reply } from '../http/respond.js';
import { parseResource, type Resource } from './resources.js';
import { sasNeeds } from '../http/sas.js';
import { etagOf } from '../domain/etag.js';

/** What the outer request adds to each part. */
export interface BatchCall extends Call {
  readonly requestId: string;
}

interface PlannedOperation {
  readonly operation: EntityOperation;
  readonly request: BatchOperationRequest;
}

const minimalJson = 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8';

export async function submitBatch(call: BatchCall): Promise<Reply> {
  let parts: BatchOperationRequest[] = [];
  try {
    parts = parseBatchRequest(firstHeader(call.headers['content-type']), call.body);
    if (parts.length === 1 && parts[0]!.method === 'GET') return await queryBatch(call, parts[0]!);
    // The parts of a batch mostly share one URL (every insert names the table): each is read once.
    const byUrl = new Map<string, Resource>();
    const resources = parts.map((request, index) =>
      atIndex(index, () => {
        let resource = byUrl.get(request.url);
        if (resource === undefined) byUrl.set(request.url, (resource = resourceOf(call, request)));
        return resource;
      }),
    );
    const tableName = commonTable(resources);
    const planned = parts.map((request, index) => atIndex(index, () => plan(call, request, resources[index]!)));
    const table = await atIndexAsync(0, () => call.services.tables.get(call.account, tableName));
    const timestamp = await call.services.entities.executeBatch(
      table,
      planned.map((p) => p.operation),
    );
    const responses = planned.map((p) => successPart(call, table.name, p, timestamp));
    return multipartReply(responses, true);
  } catch (error) {
    if (!(error instanceof BatchOperationError)) throw error;
    const failed = parts[error.operationIndex];
    return multipartReply([errorPart(call, error, failed?.contentId)], true);
  }
}

/** Every part names the same table (Azure REST: performing-entity-group-transactions); the first one decides. */
function commonTable(resources: readonly Resource[]): string {
  let name: string | undefined;
  resources.forEach((resource, index) =>
    atIndex(index, () => {
      const table = tableOf(resource);
      if (name === undefined) name = table;
      else if (name.toLowerCase() !== table.toLowerCase()) {
        throw new StorageError('InvalidInput', 'All operations in a batch must target the same table.');
      }
    }),
  );
  if (name === undefined) throw new StorageError('InvalidInput', 'The batch contains no operation.');
  return name;
}

function plan(call: BatchCall, request: BatchOperationRequest, resource: Resource): PlannedOperation {
  const headers = Object.fromEntries(request.headers) as Headers;
  const method = effectiveMethod(request.method, headers['x-http-method']);
  const operation = decodeEntityOperation(method, resource, headers, request.body, call.access);
  if (operation !== undefined) return { request, operation };
  if (method === 'GET') throw new StorageError('InvalidInput', 'A query must be the only operation of a batch.');
  if (resource.kind !== 'entity')
    throw new StorageError('InvalidInput', 'A batch operation must address a table or an entity.');
  throw new StorageError('MethodNotAllowed');
}

/**
 * The resource a part addresses. Its URL may be absolute or origin-form, with or without the
 * `/{account}` segment (Azure REST: performing-entity-group-transactions); only the path matters, and the account is
 * the outer one.
 */
function resourceOf(call: Pick<BatchCall, 'account'>, request: BatchOperationRequest): Resource {
  let path = request.url;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      throw new StorageError('InvalidUri', 'A batch operation has an invalid request URL.');
    }
  }
  const queryAt = path.indexOf('?');
  if (queryAt >= 0) path = path.slice(0, queryAt);
  const accountPrefix = `/${call.account}/`;
  return parseResource(path.startsWith(accountPrefix) ? path.slice(accountPrefix.length) : path.slice(1));
}

/** The table a batch body addresses (its first part's), undefined when it names none: for fault rules. */
export function batchTable(account: string, contentType: string | undefined, body: Buffer): string | undefined {
  try {
    const [first] = parseBatchRequest(contentType, body);
    return first === undefined ? undefined : tableOf(resourceOf({ account }, first));
  } catch {
    return undefined; // the batch itself will say what is wrong with it
  }
}

function tableOf(resource: Resource): string {
  if (resource.kind === 'tableRoot' || resource.kind === 'entity' || resource.kind === 'entities')
    return resource.table;
  throw new StorageError('InvalidInput', 'A batch operation must address a table or an entity.');
}

function successPart(
  call: BatchCall,
  tableName: string,
  planned: PlannedOperation,
  timestamp: bigint,
): BatchOperationResponse {
  const { operation, request } = planned;
  const etag = etagOf(timestamp);
  const common: [string, string][] = [
    ['X-Content-Type-Options', 'nosniff'],
    ['Cache-Control', 'no-cache'],
  ];
  const contentId = request.contentId;
  if (operation.kind !== 'insert') {
    const headers = [...common, ['DataServiceVersion', '1.0;'] as [string, string]];
    if (operation.kind === 'update') headers.push(['ETag', etag]);
    return { status: 204, headers, contentId };
  }
  const { partitionKey, rowKey } = operation.body as { partitionKey: string; rowKey: string };
  const url = `${call.baseUrl}/${entityPath(tableName, partitionKey, rowKey)}`;
  const located: [string, string][] = [
    ['Location', url],
    ['DataServiceId', url],
    ['ETag', etag],
  ];
  const prefer = preferOf(request.headers.get('prefer'));
  if (prefer === 'return-no-content') {
    const headers: [string, string][] = [
      ...common,
      ['Preference-Applied', 'return-no-content'],
      ['DataServiceVersion', '3.0;'],
      ...located,
    ];
    return { status: 204, headers, contentId };
  }
  const level = negotiateMetadata(undefined, request.headers.get('accept'));
  const entity = { partitionKey, rowKey, timestamp, properties: operation.body.properties };
  const headers: [string, string][] = [...common, ['DataServiceVersion', '3.0;']];
  if (prefer === 'return-content') headers.push(['Preference-Applied', 'return-content']);
  headers.push(['Content-Type', jsonContentType(level).replace(/; /g, ';')], ...located);
  const context = { baseUrl: call.baseUrl, account: call.account, table: tableName };
  return { status: 201, headers, body: encodeEntity(entity, level, context, { single: true }), contentId };
}

function errorPart(call: BatchCall, error: BatchOperationError, contentId: string | undefined): BatchOperationResponse {
  const time = new Date().toISOString().replace('Z', '0000Z');
  const text = `${error.operationIndex}:${error.message}\nRequestId:${call.requestId}\nTime:${time}`;
  return {
    status: error.status,
    headers: [
      ['X-Content-Type-Options', 'nosniff'],
      ['DataServiceVersion', '3.0;'],
      ['Content-Type', minimalJson],
    ],
    body: jsonError(error.code, text),
    contentId,
  };
}

/** A batch holding one point read (Azure REST: performing-entity-group-transactions), answered without a change set. */
async function queryBatch(call: BatchCall, request: BatchOperationRequest): Promise<Reply> {
  const response = await atIndexAsync(0, async (): Promise<BatchOperationResponse> => {
    const resource = resourceOf(call, request);
    // The service takes only a point read here (Azure REST: performing-entity-group-transactions); anything else is a
    // bad part, not a
    // server failure: 400 InvalidInput, as for a query mixed with writes.
    if (resource.kind !== 'entity')
      throw new StorageError('InvalidInput', 'Only a point query may be sent as a batch operation.');
    call.access.require(sasNeeds.queryEntities, resource.table);
    call.access.requireKey(resource.keys);
    const table = await call.services.tables.get(call.account, resource.table);
    const entity = await call.services.entities.get(table, resource.keys);
    const level = negotiateMetadata(undefined, request.headers.get('accept'));
    const context = { baseUrl: call.baseUrl, account: call.account, table: table.name };
    return {
      status: 200,
      headers: [
        ['DataServiceVersion', '3.0;'],
        ['Content-Type', jsonContentType(level).replace(/; /g, ';')],
        ['X-Content-Type-Options', 'nosniff'],
        ['Cache-Control', 'no-cache'],
        ['ETag', etagOf(entity.timestamp)],
      ],
      body: encodeEntity(entity, level, context, { single: true }),
      contentId: request.contentId,
    };
  }).catch((error: unknown) => {
    if (error instanceof BatchOperationError) return errorPart(call, error, request.contentId);
    throw error;
  });
  return multipartReply([response], false);
}

function multipartReply(responses: readonly BatchOperationResponse[], changeset: boolean): Reply {
  const { contentType, body } = serializeBatchResponse(responses, { changeset });
  return { status: 202, headers: { 'Content-Type': contentType }, body };
}

async function atIndexAsync<T>(index: number, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    return atIndex(index, () => {
      throw error;
    });
  }
}
