// What the request path (server.ts: locate → route → authorize → run) reads of a request: node's
// IncomingMessage as it arrived, or a request embedded in another one's body (a part of a Blob
// Batch), which goes the same way with its own target, headers and credential.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { StorageError } from '../errors.js';
import { bodyChunks, readBody } from './body.js';

export interface Incoming {
  readonly method: string;
  /** The request target: path and query, still percent-encoded. */
  readonly url: string;
  /** What authorization reads: the headers as sent (node-style lower-case names), with the Host to use. */
  readonly headers: IncomingHttpHeaders;
  /** What routing and the handler read: `headers`, with what an embedding request adds (its x-ms-version). */
  readonly operationHeaders: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly httpVersion: string;
  readonly clientIp: string;
  readonly https: boolean;
  /** The whole body, or 413 past `bytesMax`. */
  readBody(bytesMax: number): Promise<Buffer>;
  /** The body as it arrives. */
  bodyChunks(): AsyncIterable<Buffer>;
}

export function incomingOf(request: IncomingMessage): Incoming {
  return {
    method: request.method ?? '',
    url: request.url ?? '/',
    headers: request.headers,
    operationHeaders: request.headers,
    rawHeaders: request.rawHeaders,
    httpVersion: request.httpVersion,
    clientIp: request.socket.remoteAddress ?? '',
    https: (request.socket as Partial<TLSSocket>).encrypted === true,
    readBody: (bytesMax) => readBody(request, bytesMax),
    bodyChunks: () => bodyChunks(request),
  };
}

/** A request embedded in another's body, as its handler parsed it. */
export interface EmbeddedRequest {
  readonly method: string;
  /** Path and query (an absolute URL's are taken), still percent-encoded. */
  readonly url: string;
  /** Its own headers; lower-case names, a repeated one's values joined with ", ". */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/**
 * An embedded request as the request path reads it: the connection's facts (client address,
 * protocol) and, when it names none of its own, the Host of the request that carries it; the
 * carrier's x-ms-version for the operation ("This version will be used for all subrequests",
 * blob-batch), though not for its signature, which covers only what it sent. `accountSegment`:
 * the carrier's path-style account segment, which a path that lacks it is read under (the Python
 * SDK writes `/container/blob` whatever its endpoint; it signs `/{account}/container/blob`).
 */
export function embeddedIncoming(
  carrier: Incoming,
  embedded: EmbeddedRequest,
  accountSegment: string | undefined,
): Incoming {
  const headers: Record<string, string> = Object.fromEntries(embedded.headers);
  if (headers['host'] === undefined && typeof carrier.headers.host === 'string') headers['host'] = carrier.headers.host;
  const version = carrier.operationHeaders['x-ms-version'];
  const operationHeaders = version === undefined ? headers : { ...headers, 'x-ms-version': version };
  const body = embedded.body;
  return {
    method: embedded.method,
    url: underAccount(pathAndQuery(embedded.url), accountSegment),
    headers,
    operationHeaders,
    rawHeaders: [...embedded.headers].flat(),
    httpVersion: '1.1',
    clientIp: carrier.clientIp,
    https: carrier.https,
    async readBody(bytesMax) {
      if (body.length > bytesMax) throw new StorageError('RequestBodyTooLarge');
      return body;
    },
    async *bodyChunks() {
      if (body.length > 0) yield body;
    },
  };
}

function pathAndQuery(url: string): string {
  const scheme = /^https?:\/\/[^/?]*/i.exec(url);
  if (scheme === null) return url;
  const rest = url.slice(scheme[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

function underAccount(url: string, accountSegment: string | undefined): string {
  if (accountSegment === undefined) return url;
  const own = `/${accountSegment}`;
  const next = url.charAt(own.length);
  return url.startsWith(own) && (next === '' || next === '/' || next === '?') ? url : `${own}${url}`;
}
