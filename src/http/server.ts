// The node:http (or node:https) front door. Each request runs one readable path, top to bottom:
// route → authorize → read body → operation → reply, with every failure rendered in one place and
// CORS headers added last. OPTIONS preflights are anonymous and answered before authorization.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { assertNever } from '../domain/assert.js';
import { TableError } from '../errors.js';
import {
  bodyBytesMax,
  connectionsMax,
  headersBytesMax,
  headersTimeoutMs,
  keepAliveTimeoutMs,
  requestTimeoutMs,
  unreadBodyDrainBytesMax,
  unreadBodyDrainMs,
} from '../limits.js';
import { negotiateMetadata, jsonContentType } from '../protocol/odata.js';
import type { Account } from './accounts.js';
import { authorize } from './authorize.js';
import { batchTable, submitBatch, type BatchCall } from './batch.js';
import { bearerChallenge, type BearerVerifier } from './bearer.js';
import { BodyTooLargeToDrain, discardBody, readBody } from './body.js';
import { preflight, withCorsHeaders } from './cors.js';
import type { Explorer } from './explorer.js';
import type { Logger } from './log.js';
import * as op from './operations.js';
import { answerParserEvents } from './parser-events.js';
import type { Services } from '../service/services.js';
import { firstHeader } from './headers.js';
import { errorReply, responseContext, send, type Reply, type ResponseContext } from './respond.js';
import { checkCommonInputs } from './request-checks.js';
import { parseTarget, splitRequestTarget, type RequestTarget, type Resource, type Target } from './routes.js';
import { InjectedFault } from '../observe/faults.js';
import { operationName, tableOf, type OperationName } from '../observe/operation.js';

export interface ServerOptions {
  readonly accounts: ReadonlyMap<string, Account>;
  readonly services: Services;
  readonly log: Logger;
  /** PEM certificate chain and private key: serve HTTPS instead of HTTP. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined;
  /** Requests handled at once; more are answered 503 ServerBusy. */
  readonly requestsInFlightMax: number;
  /** Verifies Entra ID bearer tokens; undefined refuses them. */
  readonly bearer?: BearerVerifier | undefined;
  /** The web explorer's files at /_explorer/; undefined when it is off. */
  readonly explorer?: Explorer | undefined;
  /** Cerulean's own endpoints, metrics and fault injection (src/observe); undefined: none. */
  readonly hooks?: RequestHooks | undefined;
}

/** What src/observe adds to the request path. */
export interface RequestHooks {
  /** Answers a request for Cerulean's own endpoints: paths starting with `/_`, which no account can have. */
  admin(request: IncomingMessage, target: RequestTarget): Promise<Reply>;
  /**
   * Runs an authorized operation; may delay or refuse it, or ask for the connection to be dropped
   * unanswered. `table` names the table it addresses, if any (computed on demand: a batch's is in its body).
   */
  run(
    operation: OperationName,
    table: () => string | undefined,
    execute: () => Promise<Reply>,
  ): Promise<Reply | 'drop'>;
  /** A request for an operation was answered (or dropped), `durationMs` after it arrived. */
  answered(operation: OperationName, status: number | 'dropped', durationMs: number): void;
}

export function createServer(options: ServerOptions): http.Server {
  let inFlight = 0;
  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    if (inFlight >= options.requestsInFlightMax) {
      const context = responseContext(request.headers);
      send(response, context, errorReply(context, new TableError('ServerBusy'), { Connection: 'close' }));
      options.hooks?.answered('Unknown', 503, 0); // refused before it was read: no operation yet
      return;
    }
    inFlight++;
    response.once('close', () => inFlight--);
    handle(options, request, response).catch((error: unknown) => {
      options.log.error(`unhandled failure answering ${request.method} ${request.url}`, error);
      if (!response.headersSent) response.destroy();
    });
  };
  // A missing Host is answered by dispatch (HostInformationNotPresent), not with node's bare 400.
  const serverOptions = { maxHeaderSize: headersBytesMax, requireHostHeader: false };
  const server: http.Server =
    options.tls === undefined
      ? http.createServer(serverOptions, listener)
      : https.createServer({ ...serverOptions, cert: options.tls.cert, key: options.tls.key }, listener);
  answerParserEvents(server, listener);
  server.maxConnections = connectionsMax;
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  server.keepAliveTimeout = keepAliveTimeoutMs;
  return server;
}

async function handle(options: ServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const startedMs = performance.now();
  const context = responseContext(request.headers);
  // Cerulean's own paths start with `/_`, which no account name can: answered before account parsing.
  if (options.explorer?.claims(splitRequestTarget(request.url ?? '/').rawPath)) {
    send(response, context, await settleUnreadBody(request, options.explorer.reply(request, context)));
    return;
  }
  const known: KnownRequest = { account: undefined, operation: 'Unknown' };
  let reply: Reply | 'drop';
  try {
    reply = await dispatch(options, request, context, known);
  } catch (error) {
    // An injected fault was logged when it was injected.
    if (!(error instanceof TableError) || (error.status >= 500 && !(error instanceof InjectedFault))) {
      options.log.error(`failure answering ${request.method} ${request.url}`, error);
    }
    reply = errorReply(context, error, errorHeaders(options, error));
  }
  if (reply === 'drop') {
    response.destroy();
    if (known.operation !== undefined)
      options.hooks?.answered(known.operation, 'dropped', performance.now() - startedMs);
    return;
  }
  if (known.account !== undefined && request.headers.origin !== undefined) {
    const { cors } = await options.services.serviceProperties.get(known.account);
    reply = withCorsHeaders(cors, request.headers, request.method ?? '', reply);
  }
  send(response, context, await settleUnreadBody(request, reply));
  if (known.operation !== undefined)
    options.hooks?.answered(known.operation, reply.status, performance.now() - startedMs);
}

/**
 * A reply chosen before the body was read (authentication, routing, preflight, validation) first
 * drops a little more of the body; a body longer or slower than that is left unread and the reply
 * closes the connection, so a client without credentials cannot make the server read more.
 */
async function settleUnreadBody(request: IncomingMessage, reply: Reply): Promise<Reply> {
  if (reply.headers?.['Connection'] === 'close') return reply;
  if (await discardBody(request, unreadBodyDrainBytesMax, unreadBodyDrainMs)) return reply;
  return { ...reply, headers: { ...reply.headers, Connection: 'close' } };
}

interface KnownRequest {
  /** The account a request named, once known to exist: its CORS rules apply to the reply. */
  account: string | undefined;
  /** For metrics; undefined for Cerulean's own endpoints. */
  operation: OperationName | undefined;
}

function errorHeaders(options: ServerOptions, error: unknown): Record<string, string> | undefined {
  if (!(error instanceof TableError)) return undefined;
  // A body we stopped reading cannot be left on a kept-alive connection.
  if (error instanceof BodyTooLargeToDrain) return { Connection: 'close' };
  if (error.code === 'InvalidAuthenticationInfo') {
    return { 'WWW-Authenticate': options.bearer?.challenge ?? bearerChallenge(undefined) };
  }
  return undefined;
}

async function dispatch(
  options: ServerOptions,
  request: IncomingMessage,
  context: ResponseContext,
  known: KnownRequest,
): Promise<Reply | 'drop'> {
  const { headers } = request;
  const requestTarget = splitRequestTarget(request.url ?? '/');
  if (options.hooks !== undefined && requestTarget.rawPath.startsWith('/_')) {
    known.operation = undefined;
    return options.hooks.admin(request, requestTarget);
  }
  // $format is read before routing so that even a routing error answers at the right level.
  const format = requestTarget.query.get('$format') ?? undefined;
  const metadata = negotiateMetadata(format, firstHeader(headers['accept']));
  context.errorContentType = jsonContentType(metadata);
  const target = parseTarget(requestTarget, headers.host, (name) => options.accounts.has(name));
  context.xmlErrors = isXmlResource(target);
  checkCommonInputs(request.httpVersion, headers, target.query);
  const account = options.accounts.get(target.account);
  if (request.method === 'OPTIONS') {
    const rules = account === undefined ? [] : (await options.services.serviceProperties.get(account.name)).cors;
    return preflight(rules, headers);
  }
  if (account === undefined)
    throw new TableError('AuthenticationFailed', undefined, `Unknown account '${target.account}'.`);
  known.account = account.name;
  const method = op.effectiveMethod(request.method ?? '', headers['x-http-method']);
  known.operation = operationName(method, target.resource, target.query, headers['if-match'] !== undefined);
  const access = await authorize(
    {
      method: request.method ?? '',
      rawPath: target.rawPath,
      rawQuery: requestTarget.rawQuery,
      query: target.query,
      headers,
      account,
      pathStyle: target.pathStyle,
      tableName: entityTable(target.resource),
      clientIp: request.socket.remoteAddress ?? '',
      https: isHttps(request),
      now: Date.now(),
    },
    { bearer: options.bearer, lookupPolicy: (name, table, id) => options.services.acls.findPolicy(name, table, id) },
  );
  // The -secondary endpoint is a read replica (Azure REST: get-table-service-stats); the code for a write is
  // unverified.
  if (target.secondary && method !== 'GET') {
    throw new TableError('InsufficientAccountPermissions', 'The secondary endpoint of an account is read-only.');
  }
  const body = await readBody(request, bodyBytesMax);
  const call: BatchCall = {
    requestId: context.requestId,
    services: options.services,
    account: account.name,
    access,
    baseUrl: baseUrl(request, target),
    query: target.query,
    headers,
    body,
    metadata,
    logQuery: (line) => options.log.info(line),
  };
  const execute = (): Promise<Reply> => route(call, method, target.resource);
  if (options.hooks === undefined) return execute();
  const { resource } = target;
  const table = () =>
    resource.kind === 'batch'
      ? batchTable(account.name, firstHeader(headers['content-type']), body)
      : tableOf(resource);
  return options.hooks.run(known.operation, table, execute);
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
      if (call.query.get('comp') === 'acl') {
        if (method === 'GET') return op.getTableAcl(call, resource.table);
        if (method === 'PUT') return op.setTableAcl(call, resource.table);
        break;
      }
      if (call.query.get('comp') !== null) throw new TableError('NotImplemented');
      if (method === 'POST') return op.writeEntity(call, method, resource);
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
        case 'MERGE':
        case 'PATCH':
        case 'DELETE':
          return op.writeEntity(call, method, resource);
      }
      break;
    case 'batch':
      if (method === 'POST') return submitBatch(call);
      break;
    case 'service':
      // Only ?restype=service names a service operation; the bare account root is no resource.
      if (call.query.get('restype') !== 'service') throw new TableError('InvalidUri');
      switch (call.query.get('comp')) {
        case 'properties':
          if (method === 'GET') return op.getServiceProperties(call);
          if (method === 'PUT') return op.setServiceProperties(call);
          break;
        case 'stats':
          if (method === 'GET') return op.getServiceStats(call);
          break;
        default:
          throw new TableError('NotImplemented');
      }
      break;
    default:
      return assertNever(resource);
  }
  throw new TableError('MethodNotAllowed');
}

function isXmlResource(target: Target): boolean {
  return (
    (target.resource.kind === 'service' && target.query.get('restype') === 'service') ||
    target.query.get('comp') === 'acl'
  );
}

/** The table a service SAS must be for, when the URL names one for entities. */
function entityTable(resource: Resource): string | undefined {
  return resource.kind === 'tableRoot' || resource.kind === 'entities' || resource.kind === 'entity'
    ? resource.table
    : undefined;
}

function isHttps(request: IncomingMessage): boolean {
  return (request.socket as Partial<TLSSocket>).encrypted === true;
}

function baseUrl(request: IncomingMessage, target: Target): string {
  const scheme = isHttps(request) ? 'https' : 'http';
  const host = request.headers.host ?? 'localhost';
  return target.pathStyle ? `${scheme}://${host}/${target.account}` : `${scheme}://${host}`;
}
