// The explorer's own origins (docs/explorer.md "Across the service ports"). The page is served on
// every service listener, but each service's REST API answers only on its own port, so the page
// loaded from the table port calls the queue port cross-origin. A request whose Origin is one of
// this server's own listeners, on the host name the request itself used, comes from a page only
// Cerulean serves: it gets CORS from here, not from the account's CORS rules. Any other Origin is
// answered exactly as before. The grant carries no credentials mode: the explorer signs each
// request with the key the user typed, so CORS lets it read answers, it authorizes nothing.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { firstHeader } from './headers.js';
import type { Reply } from './respond.js';

/** One service's listener as the page sees it. */
export interface ListenerPort {
  readonly service: string;
  readonly port: number;
}

/**
 * Services whose listener serves content anyone with write access chose, with the type they chose
 * (a blob of text/html runs as a page of the blob port's origin). The explorer is not served on
 * them (it keeps the key in the tab's sessionStorage, which such a page could read) and their
 * origins are not the explorer's.
 */
const userContentServices: ReadonlySet<string> = new Set(['blob']);

/** Whether this service's listener serves the explorer's page. */
export function servesExplorer(service: string): boolean {
  return !userContentServices.has(service);
}

/** How long a browser may keep an own-origin preflight's grant. */
const preflightMaxAgeSeconds = 600;

/** A host name as the URL parser normalizes it: letters, digits, dots, dashes, or a bracketed IPv6 address. */
const plainHostName = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])$/;

/** `http:` or `https:`, as the request came in. */
export function requestScheme(request: IncomingMessage): 'http:' | 'https:' {
  return (request.socket as Partial<TLSSocket>).encrypted === true ? 'https:' : 'http:';
}

/**
 * The host name the request's Host header names, lower-case without the port; undefined when absent
 * or anything but a plain name (it goes into headers such as the explorer's CSP).
 */
export function requestHostName(request: IncomingMessage): string | undefined {
  const host = request.headers.host;
  if (host === undefined) return undefined;
  try {
    const { hostname } = new URL(`http://${host}`);
    return plainHostName.test(hostname) ? hostname : undefined;
  } catch {
    return undefined;
  }
}

/** The origins of this server's listeners on the host name the request used: where the page may connect. */
export function ownOrigins(request: IncomingMessage, listeners: readonly ListenerPort[]): string[] {
  const hostName = requestHostName(request);
  if (hostName === undefined) return [];
  const scheme = requestScheme(request);
  return listeners.map(({ port }) => `${scheme}//${hostName}:${port}`);
}

/** The origins the explorer's page is served from. */
function explorerOrigins(request: IncomingMessage, listeners: readonly ListenerPort[]): string[] {
  return ownOrigins(request, listeners.filter(({ service }) => servesExplorer(service)));
}

/** The request's Origin when the explorer is served there (compared as the URL parser normalizes them). */
export function ownOrigin(request: IncomingMessage, listeners: readonly ListenerPort[]): string | undefined {
  const origin = firstHeader(request.headers.origin);
  if (origin === undefined) return undefined;
  let normalized: string;
  try {
    normalized = new URL(origin).origin;
  } catch {
    return undefined;
  }
  return explorerOrigins(request, listeners).includes(normalized) ? origin : undefined;
}

/** The answer to an own-origin preflight: whatever method and headers it asks for. */
export function ownOriginPreflight(origin: string, request: IncomingMessage): Reply {
  const method = firstHeader(request.headers['access-control-request-method']);
  const headers = firstHeader(request.headers['access-control-request-headers']);
  return {
    status: 200,
    headers: {
      'Access-Control-Allow-Origin': origin,
      ...(method !== undefined && { 'Access-Control-Allow-Methods': method }),
      ...(headers !== undefined && { 'Access-Control-Allow-Headers': headers }),
      'Access-Control-Max-Age': String(preflightMaxAgeSeconds),
      Vary: 'Origin',
    },
  };
}

/** `reply` readable by the own-origin page, every response header exposed (ETag, x-ms-*, counts). */
export function withOwnOriginCors(origin: string, reply: Reply): Reply {
  const cors = {
    'Access-Control-Allow-Origin': origin,
    // '*' means every header only for requests without credentials, which the explorer's are.
    'Access-Control-Expose-Headers': '*',
    Vary: 'Origin',
  };
  return { ...reply, headers: { ...reply.headers, ...cors } };
}
