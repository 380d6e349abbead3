// Two services on one port: the Data Lake API (dfs) answers on the Blob service's port, as the
// service's `.dfs.` and `.blob.` endpoints reach one account's one namespace. The composition
// (compose.ts) joins the two modules into one that the front door serves like any other: a request
// the second service claims (by its query and method alone, before routing) is parsed, routed, authorized and
// answered by the second's definition, every other one by the first's. Neither service knows of
// the other (docs/architecture.md, docs/datalake.md).
import assert from 'node:assert/strict';
import type { ServiceCall, ServiceModule } from './service-definition.js';

/** The two services' operations, each made over the same engine's stores. */
export interface PortServices<A, B> {
  readonly first: A;
  readonly second: B;
}

/**
 * A resource of either service: the first's keep their kinds, the second's are prefixed (`dfs:path`),
 * so that no route of one addresses a resource of the other.
 */
export type PortResource<RA, RB> =
  | { readonly kind: string; readonly side: 'first'; readonly inner: RA }
  | { readonly kind: string; readonly side: 'second'; readonly inner: RB };

function narrowed<A, B, S extends 'first' | 'second'>(
  call: ServiceCall<PortServices<A, B>>,
  side: S,
): ServiceCall<PortServices<A, B>[S]> {
  return { ...call, services: call.services[side] };
}

/**
 * One module serving `first` and, for the requests `claims` picks by their query and method, `second`; the
 * name, endpoint, Shared Key flavour, SAS service letter, stored access policies and CORS rules are
 * the first's (the second shares its account, keys and containers).
 */
export function sharePort<RA extends { readonly kind: string }, A, RB extends { readonly kind: string }, B>(
  first: ServiceModule<RA, A>,
  second: ServiceModule<RB, B>,
  claims: (query: URLSearchParams, method?: string) => boolean,
  prefix: string,
): ServiceModule<PortResource<RA, RB>, PortServices<A, B>> {
  assert(first.sharedKey === second.sharedKey, 'services sharing a port sign requests alike');
  assert(first.effectiveMethod === undefined && second.effectiveMethod === undefined, 'no method tunnelling');
  const firstRoutes = first.routes.map((line) => ({
    ...line,
    handler: (call: ServiceCall<PortServices<A, B>>, resource: PortResource<RA, RB>) =>
      line.handler(narrowed(call, 'first'), resource.inner as RA),
  }));
  const secondRoutes = second.routes.map((line) => ({
    ...line,
    resource: `${prefix}${line.resource}`,
    handler: (call: ServiceCall<PortServices<A, B>>, resource: PortResource<RA, RB>) =>
      line.handler(narrowed(call, 'second'), resource.inner as RB),
  }));
  return {
    name: first.name,
    endpointKey: first.endpointKey,
    open: (context) => ({ first: first.open(context), second: second.open(context) }),
    parseResource(path, query, method) {
      if (!claims(query, method)) {
        const inner = first.parseResource(path, query, method);
        return { kind: inner.kind, side: 'first', inner };
      }
      const inner = second.parseResource(path, query, method);
      return { kind: `${prefix}${inner.kind}`, side: 'second', inner };
    },
    routes: [...firstRoutes, ...secondRoutes],
    unrouted: (resource, query, otherMethods) =>
      resource.side === 'first'
        ? first.unrouted(resource.inner, query, otherMethods)
        : second.unrouted(resource.inner, query, otherMethods),
    errorFormat(query, headers, resource) {
      if (resource === undefined) {
        return claims(query)
          ? second.errorFormat(query, headers, undefined)
          : first.errorFormat(query, headers, undefined);
      }
      return resource.side === 'first'
        ? first.errorFormat(query, headers, resource.inner)
        : second.errorFormat(query, headers, resource.inner);
    },
    sharedKey: first.sharedKey,
    noDefaultCacheControl: first.noDefaultCacheControl,
    sas: {
      accountServiceLetter: first.sas.accountServiceLetter,
      resourceOf: (resource) =>
        resource.side === 'first' ? first.sas.resourceOf(resource.inner) : second.sas.resourceOf(resource.inner),
      findPolicy: (services, account, name, id) => first.sas.findPolicy(services.first, account, name, id),
    },
    anonymousAccess: async (services, account, resource, operation) =>
      resource.side === 'first'
        ? first.anonymousAccess?.(services.first, account, resource.inner, operation)
        : second.anonymousAccess?.(services.second, account, resource.inner, operation),
    corsRules: (services, account) => first.corsRules(services.first, account),
    faultScope: (resource, call) =>
      resource.side === 'first'
        ? first.faultScope(resource.inner, narrowed(call, 'first'))
        : second.faultScope(resource.inner, narrowed(call, 'second')),
    objectScope: (resource) =>
      resource.side === 'first' ? first.objectScope?.(resource.inner) : second.objectScope?.(resource.inner),
  };
}
