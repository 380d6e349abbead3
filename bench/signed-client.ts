// A raw node:http client for the bench's Queue and Blob requests, signed with Shared Key in the Blob
// and Queue services' format (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key):
// the verb, the standard headers, the canonicalized x-ms-* headers, then the account, the path and
// every query parameter; one signature per request. A body is a string sent whole or a size streamed
// from one shared pattern buffer, respecting backpressure, so the client never holds a large body.
// Loopback only.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { collectResponse, devAccountKey, type TableResponse } from './client.js';

export interface ServiceEndpoint {
  host: string;
  port: number;
  account: string;
}

export interface SignedRequest {
  method: string;
  /** Path after the account, e.g. `myqueue/messages`; the names the bench uses need no encoding. */
  resource: string;
  /** Query parameters, unencoded (all are signed). */
  query?: Record<string, string>;
  /** Further headers, lower case (the x-ms-* and the standard ones are signed). */
  headers?: Record<string, string>;
  /** A small body sent whole, or the size of a streamed pattern body. */
  body?: string | { readonly streamedBytes: number };
  /** Collect the body as text; otherwise a success body is drained unread. */
  readBody?: boolean;
}

/** The content every streamed body repeats: 1 MiB of varied bytes (not all zero, in case a layer compresses). */
export const patternBytes: Buffer = Buffer.from(Array.from({ length: 1 << 20 }, (_, i) => (i * 2_654_435_761) >>> 24));

/** The standard headers in the order the string to sign lists them after the verb. */
const standardHeaders = [
  'content-encoding',
  'content-language',
  'content-length',
  'content-md5',
  'content-type',
  'date',
  'if-modified-since',
  'if-match',
  'if-none-match',
  'if-unmodified-since',
  'range',
] as const;

type OnResponse<T> = (res: http.IncomingMessage, resolve: (value: T) => void, reject: (error: Error) => void) => void;

export class SignedHttpClient {
  constructor(
    readonly endpoint: ServiceEndpoint,
    private readonly agent: http.Agent,
    private readonly requestTimeoutMs: number,
    private readonly version: string,
  ) {}

  /** Sends the request; the answer's body is text when `readBody`, else drained. */
  send(request: SignedRequest): Promise<TableResponse> {
    return this.exchange(request, (res, resolve, reject) =>
      collectResponse(res, request.readBody === true, resolve, reject),
    );
  }

  /** Sends the request and hands the response to `onResponse`, which settles the promise. */
  protected exchange<T>(request: SignedRequest, onResponse: OnResponse<T>): Promise<T> {
    const path = `/${this.endpoint.account}/${request.resource}`;
    const query = request.query ?? {};
    const body = request.body;
    const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.streamedBytes;
    const headers: Record<string, string | number> = {
      'x-ms-date': new Date().toUTCString(),
      'x-ms-version': this.version,
      ...request.headers,
      'content-length': length,
    };
    headers.authorization = sharedKeyAuthorization(this.endpoint.account, request.method, path, query, headers);
    // URLSearchParams writes a space as '+' (form encoding); %20 is a space to every service.
    const search = new URLSearchParams(query).toString().replace(/\+/g, '%20');
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.endpoint.host,
          port: this.endpoint.port,
          method: request.method,
          path: search === '' ? path : `${path}?${search}`,
          headers,
          agent: this.agent,
        },
        (res) => onResponse(res, resolve, reject),
      );
      req.setTimeout(this.requestTimeoutMs, () =>
        req.destroy(new Error(`no answer within ${this.requestTimeoutMs} ms`)),
      );
      req.on('error', reject);
      if (body === undefined || typeof body === 'string') req.end(body);
      else streamPattern(req, body.streamedBytes);
    });
  }
}

/** The Authorization header; `path` is `/{account}/…` as sent. Content-Length is signed as empty when 0. */
export function sharedKeyAuthorization(
  account: string,
  method: string,
  path: string,
  query: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string | number>>,
): string {
  const standard = standardHeaders.map((name) => {
    const value = headers[name];
    if (value === undefined || (name === 'content-length' && Number(value) === 0)) return '';
    return String(value);
  });
  const msHeaders = Object.keys(headers)
    .filter((name) => name.startsWith('x-ms-'))
    .sort()
    .map((name) => `${name}:${headers[name]}\n`)
    .join('');
  const parameters = Object.entries(query)
    .map(([name, value]) => `\n${name.toLowerCase()}:${value}`)
    .sort()
    .join('');
  const stringToSign = `${method}\n${standard.join('\n')}\n${msHeaders}/${account}${path}${parameters}`;
  const signature = createHmac('sha256', devAccountKey).update(stringToSign, 'utf8').digest('base64');
  return `SharedKey ${account}:${signature}`;
}

/** Writes `sizeBytes` of the pattern to the request, waiting for 'drain' whenever the socket is full. */
function streamPattern(req: http.ClientRequest, sizeBytes: number): void {
  let left = sizeBytes;
  const pump = (): void => {
    while (left > 0) {
      const chunk = left >= patternBytes.length ? patternBytes : patternBytes.subarray(0, left);
      left -= chunk.length;
      if (!req.write(chunk)) {
        req.once('drain', pump);
        return;
      }
    }
    req.end();
  };
  pump();
}
