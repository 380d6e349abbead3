// The node:http front door. Each request runs one readable path, top to bottom:
// route → authenticate → read body → operation → reply, with every failure rendered in one place.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { TableError } from '../errors.js';
import {
  bodyBytesMax,
  headersBytesMax,
  headersTimeoutMs,
  keepAliveTimeoutMs,
  requestTimeoutMs,
} from '../limits.js';
import { negotiateMetadata, jsonContentType } from '../protocol/odata.js';
import type { Account } from './accounts.js';
import { verifySharedKey } from './auth.js';
import { submitBatch, type BatchCall } from './batch.js';
import { BodyTooLargeToDrain, readBody } from './body.js';
import type { Logger } from './log.js';
import * as op from './operations.js';
import { errorReply, responseContext, send, type Reply, type ResponseContext } from './respond.js';
import { parseTarget, type Resource, type Target } from './routes.js';

export interface ServerOptions {
  readonly accounts: ReadonlyMap<string, Account>;
  readonly services: op.Services;
  readonly log: Logger;
}

export function createServer(options: ServerOptions): http.Server {
  const server = http.createServer({ maxHeaderSize: headersBytesMax }, (request, response) => {
    handle(options, request, response).catch((error: unknown) => {
      options.log.error(`unhandled failure answering ${request.method} ${request.url}`, error);
      if (!response.headersSent) response.destroy();
    });
  });
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  server.keepAliveTimeout = keepAliveTimeoutMs;
  return server;
}

async function handle(options: ServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const context = responseContext(request.headers);
  let reply: Reply;
  try {
    reply = await dispatch(options, request, context);
  } catch (error) {
    if (!(error instanceof TableError) || error.status >= 500) {
      options.log.error(`failure answering ${request.method} ${request.url}`, error);
    }
    // A body we stopped reading cannot be left on a kept-alive connection.
    const close = error instanceof BodyTooLargeToDrain ? { Connection: 'close' } : undefined;
    reply = errorReply(context, error, close);
  }
  send(response, context, reply);
}

async function dispatch(options: ServerOptions, request: IncomingMessage, context: ResponseContext): Promise<Reply> {
  const { headers } = request;
  const metadata = negotiateMetadata(firstQueryValue(request.url, '$format'), headerValue(headers['accept']));
  context.errorContentType = jsonContentType(metadata);
  const target = parseTarget(request.url ?? '/', headers.host, (name) => options.accounts.has(name));
  context.xmlErrors = isXmlResource(target);
  const method = op.effectiveMethod(request.method ?? '', headers['x-http-method']);
  const account = options.accounts.get(target.account);
  if (account === undefined) throw new TableError('AuthenticationFailed', undefined, `Unknown account '${target.account}'.`);
  verifySharedKey({
    method: request.method ?? '',
    rawPath: target.rawPath,
    query: target.query,
    headers,
    account,
    pathStyle: target.pathStyle,
    now: Date.now(),
  });
  const body = await readBody(request, bodyBytesMax);
  const call: BatchCall = {
    requestId: context.requestId,
    host: headers.host,
    isAccount: (name) => options.accounts.has(name),
    services: options.services,
    account: account.name,
    baseUrl: baseUrl(request, target),
    query: target.query,
    headers,
    body,
    metadata,
    logQuery: (line) => options.log.info(line),
  };
  return route(call, method, target.resource);
}

/** The fixed table of (method, resource) → operation. */
function route(call: BatchCall, method: string, resource: Resource): Promise<Reply> {
  switch (resource.kind) {
    case 'tables':
      if (method === 'GET') return op.queryTables(call);
      if (method === 'POST') return op.createTable(call);
      break;
    case 'table':
      if (method === 'GET') return op.getTable(call, resource.table);
      if (method === 'DELETE') return op.deleteTable(call, resource.table);
      break;
    case 'tableRoot':
      if (call.query.get('comp') !== null) throw new TableError('NotImplemented');
      if (method === 'POST') return op.insertEntity(call, resource.table);
      if (method === 'GET') return op.queryEntities(call, resource.table);
      break;
    case 'entities':
      if (method === 'GET') return op.queryEntities(call, resource.table);
      break;
    case 'entity':
      switch (method) {
        case 'GET':
          return op.getEntity(call, resource.table, resource.keys);
        case 'PUT':
          return op.updateEntity(call, resource.table, resource.keys, 'replace');
        case 'MERGE':
        case 'PATCH':
          return op.updateEntity(call, resource.table, resource.keys, 'merge');
        case 'DELETE':
          return op.deleteEntity(call, resource.table, resource.keys);
      }
      break;
    case 'batch':
      if (method === 'POST') return submitBatch(call);
      break;
    case 'service':
      // Only ?restype=service names a service operation; the bare account root is no resource.
      if (call.query.get('restype') !== 'service') throw new TableError('InvalidUri');
      throw new TableError('NotImplemented');
    default:
      return assertNever(resource);
  }
  throw new TableError('MethodNotAllowed');
}

function isXmlResource(target: Target): boolean {
  return (target.resource.kind === 'service' && target.query.get('restype') === 'service') || target.query.get('comp') === 'acl';
}

function baseUrl(request: IncomingMessage, target: Target): string {
  const scheme = (request.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const host = request.headers.host ?? 'localhost';
  return target.pathStyle ? `${scheme}://${host}/${target.account}` : `${scheme}://${host}`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** $format must be known before routing so that even a routing error answers at the right level. */
function firstQueryValue(url: string | undefined, name: string): string | undefined {
  const queryAt = url?.indexOf('?') ?? -1;
  if (queryAt < 0) return undefined;
  return new URLSearchParams(url!.slice(queryAt + 1)).get(name) ?? undefined;
}

function assertNever(value: never): never {
  throw new Error(`unexpected ${JSON.stringify(value)}`);
}
