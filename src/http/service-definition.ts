// What a storage service (Table, Queue, later Blob) gives the one front door: how to read a
// request target, its route table, how its errors look, how it is signed, and what its SAS
// covers. The front door (server.ts) owns everything shared: listeners, accounts and keys, TLS,
// Shared Key, SAS, bearer tokens, CORS, observation, the in-flight limit. docs/architecture.md
// has the picture.
import type { StorageError } from '../errors.js';
import type { Clock } from '../domain/clock.js';
import type { ServiceStores } from '../storage/engine.js';
import type { ReplicationSource } from '../storage/replication.js';
import type { CorsRule } from '../domain/service-properties.js';
import type { Access } from './authorize.js';
import type { SharedKeyFlavour } from './auth.js';
import type { EmbeddedRequest } from './incoming.js';
import type { Reply } from './respond.js';
import type { SasNeed, StoredPolicy } from './sas.js';
import type { DelegationKeyFields } from './user-delegation.js';
import type { LocalTarget } from './local-url.js';

export type { EmbeddedRequest };

export type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * An operation's name in the terms of Azure Storage Analytics logs (QueryEntity, PutMessage, …):
 * the label of metrics, the key of fault rules. 'Unknown' for a request no route matches.
 */
export type OperationName = string;
export const unknownOperation = 'Unknown';

/** A decoded, authorized request as a route's handler sees it. */
export interface ServiceCall<S> {
  /** The service's own operations over its store (the Table service's `TableServices`, …). */
  readonly services: S;
  readonly requestId: string;
  readonly account: string;
  /** What the request's credential allows; the front door checked the route's `sas` need already. */
  readonly access: Access;
  /**
   * Only a SAS's Create letter granted the route's need (SasVerdict): the operation may create a
   * blob but must refuse to replace one.
   */
  readonly createOnly: boolean;
  /**
   * The access a SAS in another URL of this server gives (a copy source's `?sv=…&sig=…`, still
   * percent-encoded), verified as if it came with this request, for `resourceName` (`container/blob`)
   * of `account` (default: the request's); undefined when that query carries no signature. Throws
   * the SAS's 403 when it is not valid.
   */
  readonly sasAccessOf: (rawQuery: string, resourceName: string, account?: string) => Promise<Access | undefined>;
  /**
   * The access an `Authorization`-style `Bearer …` value gives to `account` of this service (a copy
   * source's x-ms-copy-source-authorization), verified as the front door verifies bearer tokens;
   * throws 401 InvalidAuthenticationInfo when it does not verify or tokens are not enabled.
   */
  readonly bearerAccessOf: (authorization: string, account: string) => Access;
  /** Where `url` points on this server (http/local-url.ts); undefined: another host or port. */
  readonly localTarget: (url: URL) => LocalTarget | undefined;
  /** The Value of a user delegation key of the request's account with these fields (http/user-delegation.ts). */
  readonly delegationKeyValue: (fields: DelegationKeyFields) => string;
  /** `{scheme}://{host}[/{account}]`: the base of the URLs a reply names. */
  readonly baseUrl: string;
  /** The effective method (after the service's method tunnelling, if it has one). */
  readonly method: string;
  readonly query: URLSearchParams;
  readonly headers: Headers;
  /** Header names and values as sent, in pairs (node lower-cases `headers`; metadata names keep their case). */
  readonly rawHeaders: readonly string[];
  /** The whole body, read under the front door's cap; empty when the route streams it. */
  readonly body: Buffer;
  /** The body as it arrives, for a route with `streamsBody` (blob content); undefined otherwise. */
  readonly bodyStream: AsyncIterable<Buffer> | undefined;
  /** A line for the server log at info level (query plans). */
  readonly logInfo: (line: string) => void;
  /** Requests embedded in this one's body (a Blob Batch's parts), run through the same front door. */
  readonly embedded: EmbeddedRequests;
}

/**
 * The requests a request carries in its body (the parts of a Blob Batch), each routed by the same
 * route table and authorized by its own credential as if it had come on its own over this
 * connection; its reply is its own. The front door (server.ts) provides them.
 */
export interface EmbeddedRequests {
  /**
   * Its route, without running it: the operation the route table names ('Unknown' when none
   * matches or its target names no resource), its account, and the resource a service SAS would
   * have to cover (`container/blob`; undefined at service level).
   */
  routeOf(request: EmbeddedRequest): Promise<EmbeddedRoute>;
  /** Runs it: its reply, or its error rendered as the service renders errors; never throws. */
  answer(request: EmbeddedRequest): Promise<EmbeddedAnswer>;
  /** Its answer had it failed with `error`, without running it (a batch refused for this part). */
  refuse(request: EmbeddedRequest, error: StorageError): Promise<EmbeddedAnswer>;
}

export interface EmbeddedRoute {
  readonly operation: OperationName;
  readonly account: string | undefined;
  readonly resourceName: string | undefined;
}

/** An embedded request's answer as it goes on the wire: status, every header (request id, version) and body. */
export interface EmbeddedAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer | undefined;
}

/** What a route's conditions look at. */
export interface RouteRequest {
  readonly method: string;
  readonly query: URLSearchParams;
  readonly headers: Headers;
}

/** The member of a service's resource union whose kind is `K` (a `tableRoot`, a `blob`, …). */
export type ResourceOfKind<R extends { readonly kind: string }, K extends R['kind']> = Extract<R, { readonly kind: K }>;

/**
 * One line of a service's route table without its handler: (resource, method[, restype][, comp][, when])
 * → operation. Lines are tried in order; the first whose conditions all hold is the request's route.
 * `K` narrows the resource kind a line names, so that its handler sees that member of the union.
 */
export interface RouteLine<R extends { readonly kind: string }, K extends R['kind'] = R['kind']> {
  readonly resource: K;
  readonly method: string;
  /** The `restype` query value required; undefined: any. */
  readonly restype?: string | undefined;
  /** The `comp` query value required; null: the request has none; undefined: any. */
  readonly comp?: string | null | undefined;
  /** A further condition (a header, `peekonly=true`, …); undefined: none. */
  readonly when?: ((request: RouteRequest) => boolean) | undefined;
  readonly operation: OperationName;
  /** The operation changes state although its method is GET (Get Messages): refused on the read-only secondary. */
  readonly writes?: boolean | undefined;
  /**
   * The handler reads the body itself, streamed (ServiceCall.bodyStream): blob content of any size,
   * never held whole and not bound by the front door's body cap; the handler enforces its limits.
   */
  readonly streamsBody?: boolean | undefined;
  /**
   * A blob SAS's response headers (rscc, rscd, rsce, rscl, rsct) replace the reply's own when it
   * succeeds (Get Blob, Get Blob Properties: create-service-sas).
   */
  readonly sasResponseHeaders?: boolean | undefined;
  /**
   * What a SAS must grant, checked by the front door before the handler runs; undefined: the
   * handler checks each thing the request does (the parts of a $batch).
   */
  readonly sas: SasNeed | undefined;
}

/** A route line and who answers it. */
export interface Route<R extends { readonly kind: string }, S> extends RouteLine<R> {
  readonly handler: (call: ServiceCall<S>, resource: R) => Promise<Reply>;
}

/**
 * How a service's errors are written: the Table service's JSON at a metadata level, XML, or the
 * Data Lake API's JSON (`{"error":{"code":…,"message":…}}`).
 */
export type ErrorFormat =
  { readonly kind: 'xml' } | { readonly kind: 'json'; readonly contentType: string } | { readonly kind: 'datalake' };

/** The SAS side of a service; verifying a token is shared (sas.ts). */
export interface SasFlavour<R, S> {
  /** This service's letter in an account SAS's `ss` (b, q, t). */
  readonly accountServiceLetter: 'b' | 'q' | 't';
  /**
   * The resource (table, queue) the URL names, which a service SAS must be for; undefined for
   * service-level requests and those that name it in their body ($batch).
   */
  resourceOf(resource: R): string | undefined;
  /** A stored access policy of that resource (Set Table ACL, Set Queue ACL). */
  findPolicy(services: S, account: string, resourceName: string, id: string): Promise<StoredPolicy | undefined>;
}

/** What a service's operations are made over: an engine's stores (the primary's or a standby's). */
export interface ServiceContext {
  readonly stores: ServiceStores;
  /** The queue and blob services' clock (message visibility, leases). */
  readonly clock: Clock;
  /** The read-access secondary's replication status (its Get Service Stats); undefined on the primary. */
  readonly replication?: ReplicationSource | undefined;
  /** How long the Blob service's rehydrations from the archive tier take (--blob-rehydrate-delay); default 0. */
  readonly blobRehydrateDelayMs?: number | undefined;
  /** Whether the Blob service keeps blobs' previous versions (--blob-versioning); default no. */
  readonly blobVersioning?: boolean | undefined;
  /** Days the Blob service keeps a deleted container (--container-soft-delete-days); 0, the default: none. */
  readonly containerSoftDeleteDays?: number | undefined;
}

export interface ServiceDefinition<R extends { readonly kind: string }, S> {
  /** Also the host label of host-style URLs (`{account}.queue.localhost`). */
  readonly name: 'table' | 'queue' | 'blob';
  /** Its key in a connection string. */
  readonly endpointKey: 'TableEndpoint' | 'QueueEndpoint' | 'BlobEndpoint';
  /**
   * The resource named by the path after the account (still percent-encoded, no query);
   * throws the service's 400 (InvalidUri) for a path that names none.
   */
  parseResource(path: string, query: URLSearchParams, method: string): R;
  readonly routes: readonly Route<R, S>[];
  /**
   * The error for a request no route matches: `otherMethods` when routes name its (resource,
   * restype, comp) for other methods (405 MethodNotAllowed), else e.g. 400 InvalidUri or 501.
   */
  unrouted(resource: R, query: URLSearchParams, otherMethods: boolean): StorageError;
  /** The method the client means (the Table service's X-HTTP-Method tunnelling); undefined: as sent. */
  effectiveMethod?(method: string, headers: Headers): string;
  /** Error bodies for this request; `resource` is undefined when the target did not parse. */
  errorFormat(query: URLSearchParams, headers: Headers, resource: R | undefined): ErrorFormat;
  readonly sharedKey: SharedKeyFlavour;
  /**
   * Replies without a Cache-Control of their own get none, instead of `no-cache`: the Blob
   * service, whose Get Blob answers the blob's own Cache-Control, and only when it has one.
   */
  readonly noDefaultCacheControl?: boolean | undefined;
  readonly sas: SasFlavour<R, S>;
  /**
   * The access of a request that carries no credential at all (no Authorization header, no SAS):
   * undefined to authorize it as usual (which fails); may throw the service's answer instead.
   * The Blob service's public containers; undefined: every request needs a credential.
   */
  anonymousAccess?(services: S, account: string, resource: R, operation: OperationName): Promise<Access | undefined>;
  /** The account's CORS rules for this service (its Set Service Properties). */
  corsRules(services: S, account: string): Promise<readonly CorsRule[]>;
  /** The table or queue fault rules match a request by; may read the body ($batch). */
  faultScope(resource: R, call: ServiceCall<S>): string | undefined;
  /** The one object a per-object rate target applies to (a blob), for the throttle and the blob watch. */
  objectScope?(resource: R): string | undefined;
}

/**
 * A service's one module value: its definition for the front door, and how its operations (what its
 * route handlers work on) are made over an engine's stores, for the primary and a secondary alike.
 */
export interface ServiceModule<R extends { readonly kind: string }, S> extends ServiceDefinition<R, S> {
  open(context: ServiceContext): S;
}

/** Every operation name a set of services can count, for fault rules and metrics. */
export function operationNamesOf(
  definitions: readonly { readonly routes: readonly { readonly operation: OperationName }[] }[],
): string[] {
  const names = new Set<string>(definitions.flatMap((definition) => definition.routes.map((route) => route.operation)));
  return [...names, unknownOperation];
}

/** The request's route, or undefined when none matches (then `routingError` says why). */
export function findRoute<R extends { readonly kind: string }, S>(
  routes: readonly Route<R, S>[],
  resource: R,
  request: RouteRequest,
): Route<R, S> | undefined {
  return routes.find((route) => route.method === request.method && addresses(route, resource, request));
}

/** Why no route matched, in the service's words. */
export function routingError<R extends { readonly kind: string }, S>(
  definition: ServiceDefinition<R, S>,
  resource: R,
  request: RouteRequest,
): StorageError {
  const otherMethods = definition.routes.some((route) => addresses(route, resource, request));
  return definition.unrouted(resource, request.query, otherMethods);
}

function addresses<R extends { readonly kind: string }, S>(
  route: Route<R, S>,
  resource: R,
  request: RouteRequest,
): boolean {
  if (route.resource !== resource.kind) return false;
  if (route.restype !== undefined && request.query.get('restype') !== route.restype) return false;
  if (route.comp !== undefined && request.query.get('comp') !== route.comp) return false;
  return route.when === undefined || route.when(request);
}

/** A route line whose handler sees its resource narrowed to the kind it names. */
export function route<R extends { readonly kind: string }, S, K extends R['kind']>(
  line: RouteLine<R, K>,
  handler: (call: ServiceCall<S>, resource: ResourceOfKind<R, K>) => Promise<Reply>,
): Route<R, S> {
  return { ...line, handler: (call, resource) => handler(call, resource as ResourceOfKind<R, K>) };
}

/**
 * A service's route maker: its lines' handlers get the service's own call, made from the front
 * door's by `adapt` (the Table service's negotiated metadata level, the Queue service's endpoint),
 * and their resource narrowed to the kind the line names.
 */
export function routeMaker<R extends { readonly kind: string }, S, C>(adapt: (call: ServiceCall<S>) => C) {
  return <K extends R['kind']>(
    line: RouteLine<R, K>,
    handler: (call: C, resource: ResourceOfKind<R, K>) => Promise<Reply>,
  ): Route<R, S> => route<R, S, K>(line, (call, resource) => handler(adapt(call), resource));
}
