// The node:http (or node:https) front door, one listener per service (service-definition.ts) and
// everything else shared: accounts, TLS, authorization, CORS, hooks, the in-flight limit. Each
// request runs one readable path, top to bottom: target → route → authorize → read body →
// operation → reply, with every failure rendered in one place (in the service's error format)
// and CORS headers added last. OPTIONS preflights are anonymous and answered before authorization.
import assert from 'node:assert/strict';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import https from 'node:https';
import { diskFullFailure, StorageError } from '../errors.js';
import {
  bodyBytesMax,
  connectionsMax,
  headersBytesMax,
  headersTimeoutMs,
  keepAliveTimeoutMs,
  requestTimeoutMs,
  streamIdleTimeoutMs,
  unreadBodyDrainBytesMax,
  unreadBodyDrainMs,
} from '../limits.js';
import type { Account } from './accounts.js';
import {
  authorize,
  authorizeSasOnly,
  bearerAccess,
  hasCredential,
  type Access,
  type AuthorizeOptions,
  type AuthorizeRequest,
} from './authorize.js';
import { bearerChallenge, type BearerVerifier } from './bearer.js';
import { delegationKeyValue } from './user-delegation.js';
import { localTarget } from './local-url.js';
import { BodyTooLargeToDrain, discardBody } from './body.js';
import { firstHeader } from './headers.js';
import { embeddedIncoming, incomingOf, type Incoming } from './incoming.js';
import { preflight, withCorsHeaders } from './cors.js';
import type { Explorer } from './explorer.js';
import {
  ownOrigin,
  ownOriginPreflight,
  servesExplorer,
  withOwnOriginCors,
  type ListenerPort,
} from './explorer-origin.js';
import { logFailure, loggedTarget, type Logger } from './log.js';
import { answerParserEvents } from './parser-events.js';
import { errorReply, headErrorReply, responseContext, send, type Reply, type ResponseContext } from './respond.js';
import { checkCommonInputs } from './request-checks.js';
import { parseAccountTarget, splitRequestTarget, type AccountTarget, type RequestTarget } from './account-target.js';
import { InjectedFault, type RequestHooks } from './hooks.js';
import { intercept, type Operation, type RunOperation } from './interceptors.js';
import {
  findRoute,
  routingError,
  unknownOperation,
  type ErrorFormat,
  type OperationName,
  type EmbeddedAnswer,
  type EmbeddedRequest,
  type EmbeddedRequests,
  type Route,
  type RouteRequest,
  type ServiceCall,
  type ServiceDefinition,
} from './service-definition.js';

/** What every service's listener shares. */
/** HTTPS material: a PEM certificate chain and key (the key perhaps encrypted), or a PFX file and its password. */
export type TlsMaterial =
  | { readonly cert: Buffer; readonly key: Buffer; readonly passphrase?: string }
  | { readonly pfx: Buffer; readonly passphrase: string };

export interface FrontDoorOptions {
  readonly accounts: ReadonlyMap<string, Account>;
  readonly log: Logger;
  /** PEM certificate chain and private key: serve HTTPS instead of HTTP. */
  readonly tls?: TlsMaterial | undefined;
  /** Requests handled at once, over all services; more are answered 503 ServerBusy. */
  readonly requestsInFlightMax: number;
  /** Verifies Entra ID bearer tokens; undefined refuses them. */
  readonly bearer?: BearerVerifier | undefined;
  /** The web explorer's files at /_explorer/; undefined when it is off. */
  readonly explorer?: Explorer | undefined;
  /** Cerulean's own endpoints, metrics and fault injection (src/observe); undefined: none. */
  readonly hooks?: RequestHooks | undefined;
}

/** The shared front door; `server()` makes each service's listener. */
export class FrontDoor {
  private inFlight = 0;
  /** Every service's server made here, for the explorer: its endpoints and own origins. */
  private readonly servers: { readonly service: string; readonly server: http.Server }[] = [];

  constructor(readonly options: FrontDoorOptions) {}

  /** A server answering for one service over its store; the caller listens it on the service's port. */
  /** `secondaryServices` answer the `{account}-secondary` endpoint (a read replica); default `services`. */
  server<R extends { readonly kind: string }, S>(
    definition: ServiceDefinition<R, S>,
    services: S,
    secondaryServices?: S,
  ): http.Server {
    const service: Service<R, S> = {
      definition,
      services,
      secondaryServices,
      fallbackErrors: definition.errorFormat(new URLSearchParams(), {}, undefined),
      listeners: () => this.listening(),
    };
    const listener = (request: IncomingMessage, response: ServerResponse): void => {
      if (this.inFlight >= this.options.requestsInFlightMax) {
        const context = responseContext(request.headers, service.fallbackErrors);
        send(response, context, errorReply(context, new StorageError('ServerBusy'), { Connection: 'close' }));
        this.options.hooks?.answered(unknownOperation, 503, 0); // refused before it was read: no operation yet
        return;
      }
      this.inFlight++;
      response.once('close', () => this.inFlight--);
      handle(this.options, service, request, response).catch((error: unknown) => {
        this.options.log.error(`unhandled failure answering ${request.method} ${loggedTarget(request.url)}`, error);
        if (!response.headersSent) response.destroy();
      });
    };
    // A missing Host is answered by dispatch (HostInformationNotPresent), not with node's bare 400.
    const serverOptions = { maxHeaderSize: headersBytesMax, requireHostHeader: false };
    const { tls } = this.options;
    const server: http.Server =
      tls === undefined
        ? http.createServer(serverOptions, listener)
        : https.createServer({ ...serverOptions, ...tls }, listener);
    this.servers.push({ service: definition.name, server });
    answerParserEvents(server, listener, service.fallbackErrors);
    server.maxConnections = connectionsMax;
    server.headersTimeout = headersTimeoutMs;
    if (definition.routes.some((route) => route.streamsBody === true)) {
      server.requestTimeout = 0;
      server.setTimeout(streamIdleTimeoutMs, (socket) => socket.destroy());
    } else {
      server.requestTimeout = requestTimeoutMs;
    }
    server.keepAliveTimeout = keepAliveTimeoutMs;
    return server;
  }

  /** Each service's port, of the servers listening now. */
  private listening(): ListenerPort[] {
    return this.servers.flatMap(({ service, server }) => {
      const address = server.address();
      return address === null || typeof address === 'string' ? [] : [{ service, port: address.port }];
    });
  }
}

/** One service as its listener holds it. */
interface Service<R extends { readonly kind: string }, S> {
  readonly definition: ServiceDefinition<R, S>;
  readonly services: S;
  readonly secondaryServices?: S | undefined;
  /** Its error format before anything of a request is known. */
  readonly fallbackErrors: ErrorFormat;
  /** Every service's listener of this front door (explorer-origin.ts). */
  readonly listeners: () => ListenerPort[];
}

async function handle<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Service<R, S>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const startedMs = performance.now();
  const context = responseContext(request.headers, service.fallbackErrors);
  if (service.definition.noDefaultCacheControl === true) context.cacheControl = undefined;
  // Cerulean's own paths start with `/_`, which no account name can: answered before account parsing.
  const explorer = servesExplorer(service.definition.name) ? options.explorer : undefined;
  if (explorer?.claims(splitRequestTarget(request.url ?? '/').rawPath)) {
    const reply = explorer.reply(request, context, service.listeners());
    send(response, context, await settleUnreadBody(request, reply));
    return;
  }
  // The explorer's page on another port of this server: CORS from here, not the account's rules.
  // Only a request with an Origin can come from the explorer's page: the listeners' ports (a system
  // call each) are not looked up for the others.
  const explorerOrigin =
    options.explorer && request.headers.origin !== undefined ? ownOrigin(request, service.listeners()) : undefined;
  if (explorerOrigin !== undefined && request.method === 'OPTIONS') {
    send(response, context, await settleUnreadBody(request, ownOriginPreflight(explorerOrigin, request)));
    return;
  }
  const admin = () => options.hooks!.admin(request, splitRequestTarget(request.url ?? '/'));
  const known = await dispatch(options, service, incomingOf(request), context, admin);
  let reply: Reply | 'drop';
  if ('reply' in known.outcome) {
    reply = known.outcome.reply;
  } else {
    const error = diskFullFailure(known.outcome.failure) ?? known.outcome.failure;
    // An injected fault was logged when it was injected.
    const what = `${request.method} ${loggedTarget(request.url)}`;
    if (!(error instanceof InjectedFault)) logFailure(options.log, what, error);
    reply = errorReply(context, error, errorHeaders(options, error));
    if (request.method === 'HEAD') reply = headErrorReply(reply);
  }
  if (reply === 'drop') {
    response.destroy();
    if (known.operation !== undefined)
      options.hooks?.answered(known.operation, 'dropped', performance.now() - startedMs);
    return;
  }
  if (explorerOrigin !== undefined) {
    reply = withOwnOriginCors(explorerOrigin, reply);
  } else if (known.account !== undefined && request.headers.origin !== undefined) {
    const cors = await service.definition.corsRules(service.services, known.account);
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

/** What dispatch learned of a request, and its reply or the failure that stopped it. */
interface Dispatched {
  /** The account a request named, once known to exist: its CORS rules apply to the reply. */
  readonly account: string | undefined;
  /** For metrics: the matched route's, 'Unknown' when none matched; undefined for Cerulean's own endpoints. */
  readonly operation: OperationName | undefined;
  readonly outcome: Outcome;
}

type Outcome = { readonly reply: Reply | 'drop' } | { readonly failure: unknown };

/** The outcome of `answer`: its reply, or what it threw. */
async function settle(answer: () => Promise<Reply | 'drop'>): Promise<Outcome> {
  try {
    return { reply: await answer() };
  } catch (failure) {
    return { failure };
  }
}

/**
 * The request's reply, or the failure that stopped it, with its account and operation as far as
 * they were known when it stopped (an error to a known account still carries its CORS headers).
 * `admin` answers Cerulean's own paths; undefined for an embedded request, which has none.
 */
async function dispatch<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Service<R, S>,
  request: Incoming,
  context: ResponseContext,
  admin: (() => Promise<Reply>) | undefined,
): Promise<Dispatched> {
  const unknown = { account: undefined, operation: unknownOperation };
  let located: Located<R> | Reply | 'admin';
  try {
    located = await locate(options, service, request, context, admin !== undefined);
  } catch (failure) {
    return { ...unknown, outcome: { failure } };
  }
  if (located === 'admin') return { account: undefined, operation: undefined, outcome: await settle(admin!) };
  if (!('account' in located)) return { ...unknown, outcome: { reply: located } };
  const account = located.account.name;
  let routed: Routed<R, S>;
  try {
    const method = service.definition.effectiveMethod?.(request.method, request.headers) ?? request.method;
    const routeRequest = { method, query: located.target.query, headers: request.operationHeaders };
    const matched = findRoute(service.definition.routes, located.resource, routeRequest);
    routed = { ...located, routeRequest, matched, operation: matched?.operation ?? unknownOperation };
  } catch (failure) {
    return { account, operation: unknownOperation, outcome: { failure } };
  }
  const outcome = await settle(() => run(options, service, request, context, routed));
  return { account, operation: routed.operation, outcome };
}

/** A request's account (known to exist), resource and target, before its route is chosen. */
interface Located<R> {
  readonly account: Account;
  readonly resource: R;
  readonly requestTarget: RequestTarget;
  readonly target: AccountTarget;
}

/**
 * Finds the request's account and resource; a preflight is answered here, and Cerulean's own paths
 * (`/_…`) are left to the hooks ('admin'). Throws what stops it.
 */
async function locate<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  { definition, services }: Service<R, S>,
  request: Incoming,
  context: ResponseContext,
  ownPaths: boolean,
): Promise<Located<R> | Reply | 'admin'> {
  const { headers } = request;
  const requestTarget = splitRequestTarget(request.url);
  if (ownPaths && options.hooks !== undefined && requestTarget.rawPath.startsWith('/_')) return 'admin';
  // Read before the target so that even a malformed target answers in the right format ($format).
  context.errorFormat = definition.errorFormat(requestTarget.query, headers, undefined);
  const target = parseAccountTarget(requestTarget, headers.host, (name) => options.accounts.has(name));
  const resource = definition.parseResource(target.resourcePath, target.query, request.method ?? 'GET');
  context.errorFormat = definition.errorFormat(target.query, headers, resource);
  checkCommonInputs(request.httpVersion, headers, target.query);
  const account = options.accounts.get(target.account);
  if (request.method === 'OPTIONS') {
    const rules = account === undefined ? [] : await definition.corsRules(services, account.name);
    return preflight(rules, headers);
  }
  if (account === undefined)
    throw new StorageError('AuthenticationFailed', undefined, `Unknown account '${target.account}'.`);
  return { account, resource, requestTarget, target };
}

/** A located request with its route (if any) chosen. */
interface Routed<R extends { readonly kind: string }, S> extends Located<R> {
  readonly routeRequest: RouteRequest;
  readonly matched: Route<R, S> | undefined;
  readonly operation: OperationName;
}

function errorHeaders(options: FrontDoorOptions, error: unknown): Record<string, string> | undefined {
  if (!(error instanceof StorageError)) return undefined;
  // A body we stopped reading cannot be left on a kept-alive connection.
  if (error instanceof BodyTooLargeToDrain) return { Connection: 'close' };
  if (error.code === 'InvalidAuthenticationInfo') {
    return { 'WWW-Authenticate': options.bearer?.challenge ?? bearerChallenge(undefined) };
  }
  return undefined;
}

/** Authorizes a routed request and runs its operation (through the hooks' interceptors when there are any). */
async function run<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Service<R, S>,
  request: Incoming,
  context: ResponseContext,
  { account, resource, requestTarget, target, routeRequest, matched, operation: name }: Routed<R, S>,
): Promise<Reply | 'drop'> {
  const headers = request.operationHeaders;
  const { definition } = service;
  let { services } = service;
  const { method } = routeRequest;
  const resourceName = definition.sas.resourceOf(resource);
  const access = await accessOf(options, { definition, services }, request, requestTarget, {
    ...target,
    resourceName,
    resource,
    known: account,
    operation: name,
  });
  // The -secondary endpoint is a read replica; the code for a write is unverified.
  if (target.secondary && (method !== 'GET' || matched?.writes === true)) {
    throw new StorageError('InsufficientAccountPermissions', 'The secondary endpoint of an account is read-only.');
  }
  if (target.secondary) services = service.secondaryServices ?? services;
  if (matched === undefined) throw routingError(definition, resource, routeRequest);
  const verdict = matched.sas === undefined ? undefined : access.require(matched.sas, resourceName);
  const call: ServiceCall<S> = {
    services,
    requestId: context.requestId,
    account: account.name,
    access,
    createOnly: verdict === 'createOnly',
    sasAccessOf: otherSasAccess(options, service, request, requestTarget, { ...target, known: account }),
    bearerAccessOf: (authorization, other) =>
      bearerAccess(options.bearer, authorization, Date.now(), { account: other, service: definition.name }),
    localTarget: (url) =>
      localTarget(url, firstHeader(request.headers.host), request.https, (name) => options.accounts.has(name)),
    delegationKeyValue: (fields) => delegationKeyValue(account.keys[0]!, fields),
    baseUrl: baseUrl(request, target),
    method,
    query: target.query,
    headers,
    rawHeaders: request.rawHeaders,
    body: matched.streamsBody === true ? emptyBody : await request.readBody(bodyBytesMax),
    bodyStream: matched.streamsBody === true ? request.bodyChunks() : undefined,
    logInfo: (line) => options.log.info(line),
    embedded: embeddedRequests(options, service, request, target.pathStyle ? target.rawPath.split('/')[1] : undefined),
  };
  const overrides = matched.sasResponseHeaders === true ? access.responseHeaders : undefined;
  const execute = async (bodyStream: AsyncIterable<Buffer> | undefined): Promise<Reply> => {
    const handled = bodyStream === call.bodyStream ? call : { ...call, bodyStream };
    return withResponseHeaders(await matched.handler(handled, resource), overrides);
  };
  if (options.hooks === undefined) return execute(call.bodyStream);
  const operation: Operation = {
    name,
    account: account.name,
    scope: () => definition.faultScope(resource, call),
    object: definition.objectScope?.(resource),
    headers,
    body: call.bodyStream,
  };
  return intercept<RunOperation>((ran) => execute(ran.body), options.hooks.operations)(operation);
}


/** ServiceCall.embedded: the requests `carrier` embeds, each dispatched as if it had come on its own. */
function embeddedRequests<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Service<R, S>,
  carrier: Incoming,
  accountSegment: string | undefined,
): EmbeddedRequests {
  const incoming = (embedded: EmbeddedRequest) => embeddedIncoming(carrier, embedded, accountSegment);
  return {
    async routeOf(embedded) {
      const request = incoming(embedded);
      const context = responseContext(request.operationHeaders, service.fallbackErrors);
      try {
        const located = await locate(options, service, request, context, false);
        if (located === 'admin' || !('account' in located)) throw new StorageError('InvalidUri');
        const routeRequest = { method: request.method, query: located.target.query, headers: request.operationHeaders };
        const matched = findRoute(service.definition.routes, located.resource, routeRequest);
        return {
          operation: matched?.operation ?? unknownOperation,
          account: located.account.name,
          resourceName: service.definition.sas.resourceOf(located.resource),
        };
      } catch {
        return { operation: unknownOperation, account: undefined, resourceName: undefined };
      }
    },
    answer: (embedded) => answerEmbedded(options, service, incoming(embedded)),
    async refuse(embedded, error) {
      const request = incoming(embedded);
      const context = responseContext(request.operationHeaders, service.fallbackErrors);
      return wireAnswer(context, errorReply(context, error));
    },
  };
}

/**
 * An embedded request's answer: dispatched, authorized and run as an ordinary one (hooks
 * included: it is throttled, faulted and counted as its own operation), its failure rendered in
 * the service's format. A fault that would drop the connection answers 500 OperationTimedOut
 * instead (chosen: the carrier's connection is not this request's alone).
 */
async function answerEmbedded<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Service<R, S>,
  request: Incoming,
): Promise<EmbeddedAnswer> {
  const startedMs = performance.now();
  const context = responseContext(request.operationHeaders, service.fallbackErrors);
  context.cacheControl = undefined;
  const known = await dispatch(options, service, request, context, undefined);
  let reply: Reply;
  if ('reply' in known.outcome && known.outcome.reply !== 'drop') {
    reply = known.outcome.reply;
  } else {
    const failure = 'failure' in known.outcome ? known.outcome.failure : new StorageError('OperationTimedOut');
    const error = diskFullFailure(failure) ?? failure;
    if (!(error instanceof InjectedFault))
      logFailure(options.log, `${request.method} ${loggedTarget(request.url)}`, error);
    reply = errorReply(context, error);
    if (request.method === 'HEAD') reply = headErrorReply(reply);
  }
  if (known.operation !== undefined)
    options.hooks?.answered(known.operation, reply.status, performance.now() - startedMs);
  return wireAnswer(context, reply);
}

function wireAnswer(context: ResponseContext, reply: Reply): EmbeddedAnswer {
  assert(reply.stream === undefined, 'an embedded request answers no streamed body');
  const headers: Record<string, string> = {
    ...reply.headers,
    'x-ms-request-id': context.requestId,
    'x-ms-version': context.version,
  };
  if (context.clientRequestId !== undefined) headers['x-ms-client-request-id'] = context.clientRequestId;
  return { status: reply.status, headers, body: reply.body };
}

const emptyBody = Buffer.alloc(0);

/** A successful reply with some of its headers replaced (names as the reply spells them, any case). */
function withResponseHeaders(reply: Reply, replaced: Readonly<Record<string, string>> | undefined): Reply {
  if (replaced === undefined || reply.status >= 300) return reply;
  const names = new Set(Object.keys(replaced).map((name) => name.toLowerCase()));
  const kept = Object.entries(reply.headers ?? {}).filter(([name]) => !names.has(name.toLowerCase()));
  return { ...reply, headers: { ...Object.fromEntries(kept), ...replaced } };
}

/**
 * What the request may do: without any credential, what the service allows anonymously (public
 * blob containers), if anything; otherwise what its credential allows.
 */
async function accessOf<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Pick<Service<R, S>, 'definition' | 'services'>,
  request: Incoming,
  requestTarget: RequestTarget,
  target: AccountTarget & {
    readonly resourceName: string | undefined;
    readonly resource: R;
    /** The account the request names, as configured. */
    readonly known: Account;
    readonly operation: OperationName;
  },
): Promise<Access> {
  const { definition, services } = service;
  const anonymous = hasCredential(request.headers, requestTarget.rawQuery)
    ? undefined
    : await definition.anonymousAccess?.(services, target.known.name, target.resource, target.operation);
  return anonymous ?? authorize(...authorizeInputs(options, service, request, requestTarget, target));
}

/**
 * ServiceCall.sasAccessOf: the SAS of another URL of this server (a copy source), as if it came with
 * the request, for its account (the request's unless named).
 */
function otherSasAccess<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  service: Pick<Service<R, S>, 'definition' | 'services'>,
  request: Incoming,
  requestTarget: RequestTarget,
  target: AccountTarget & { readonly known: Account },
): ServiceCall<S>['sasAccessOf'] {
  return async (rawQuery, resourceName, accountName) => {
    const known = accountName === undefined ? target.known : options.accounts.get(accountName);
    if (known === undefined) return undefined;
    return authorizeSasOnly(
      ...authorizeInputs(options, service, request, { ...requestTarget, rawQuery }, { ...target, known, resourceName }),
    );
  };
}

/** The request as authorize() reads it, and how to check it in the service's way (Shared Key flavour, SAS scope). */
function authorizeInputs<R extends { readonly kind: string }, S>(
  options: FrontDoorOptions,
  { definition, services }: Pick<Service<R, S>, 'definition' | 'services'>,
  request: Incoming,
  requestTarget: RequestTarget,
  target: AccountTarget & { readonly resourceName: string | undefined; readonly known: Account },
): [AuthorizeRequest, AuthorizeOptions] {
  return [
    {
      method: request.method,
      rawPath: target.rawPath,
      rawQuery: requestTarget.rawQuery,
      query: target.query,
      headers: request.headers,
      account: target.known,
      pathStyle: target.pathStyle,
      resourceName: target.resourceName,
      clientIp: request.clientIp,
      https: request.https,
      inheritedVersion: firstHeader(request.operationHeaders['x-ms-version']),
      now: Date.now(),
    },
    {
      bearer: options.bearer,
      lookupPolicy: (name, resourceName, id) => definition.sas.findPolicy(services, name, resourceName, id),
      sharedKey: definition.sharedKey,
      accountServiceLetter: definition.sas.accountServiceLetter,
    },
  ];
}

function baseUrl(request: Incoming, target: AccountTarget): string {
  const scheme = request.https ? 'https' : 'http';
  const host = request.headers.host ?? 'localhost';
  return target.pathStyle ? `${scheme}://${host}/${target.account}` : `${scheme}://${host}`;
}
