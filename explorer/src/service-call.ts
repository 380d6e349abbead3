// A signed request to the Queue or Blob service of this server, on its own port: Shared Key in the
// Blob and Queue services' format (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key):
// the verb, eleven standard headers (Content-Length empty when 0, Date empty as x-ms-date is signed
// instead), every x-ms-* header as `name:value` in order, then `/{account}{path}` and each query
// parameter on its own line, decoded, names in order.
import { apiError, hmacBase64, type Credentials } from './api.js';
import { serviceOrigin, type ServiceName } from './endpoints.js';

const apiVersion = '2021-02-12';
const explorerAgent = 'cerulean-explorer/1';

export interface ServiceRequest {
  readonly method: string;
  /** Path after the account, already percent-encoded, e.g. `/orders/messages`; '' for the account. */
  readonly path: string;
  readonly query?: Record<string, string | undefined>;
  readonly headers?: Record<string, string>;
  readonly body?: string | Blob;
}

/** The standard headers Shared Key signs, in its order, after the verb. */
const signedStandardHeaders = [
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
];

/** The URL of a request: the query built with encodeURIComponent (a space is %20, never '+'). */
export function serviceUrl(service: ServiceName, account: string, request: ServiceRequest): URL {
  const origin = serviceOrigin(service);
  if (origin === undefined) throw new Error(`This server serves no ${service} service.`);
  const url = new URL(`/${account}${request.path === '' ? '/' : request.path}`, origin);
  url.search = Object.entries(request.query ?? {})
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value!)}`)
    .join('&');
  return url;
}

/** Signs and sends one request to `service`; throws ApiError for any status of 400 or more. */
export async function serviceCall(
  service: ServiceName,
  credentials: Credentials,
  request: ServiceRequest,
): Promise<Response> {
  // A body without a Content-Type would get the browser's, which the signature would not cover.
  if (request.body !== undefined && !Object.keys(request.headers ?? {}).some((name) => /^content-type$/i.test(name))) {
    throw new Error('a request with a body must name its Content-Type');
  }
  const url = serviceUrl(service, credentials.account, request);
  const headers: Record<string, string> = {
    'x-ms-date': new Date().toUTCString(),
    'x-ms-version': apiVersion,
    'x-ms-useragent': explorerAgent,
    ...request.headers,
  };
  const length = bodyBytes(request.body);
  headers['Authorization'] = await sharedKey(credentials, request.method, url, {
    ...headers,
    'content-length': String(length),
  });
  const response = await fetch(url, { method: request.method, headers, body: request.body, cache: 'no-store' });
  if (response.status >= 400) throw await apiError(response);
  return response;
}

/** The Content-Length the browser will send. */
function bodyBytes(body: string | Blob | undefined): number {
  if (body === undefined) return 0;
  return typeof body === 'string' ? new TextEncoder().encode(body).length : body.size;
}

/** The Authorization header of a request to `url` with these headers (Content-Length among them, when not 0). */
export async function sharedKey(
  credentials: Credentials,
  method: string,
  url: URL,
  headers: Record<string, string>,
): Promise<string> {
  return `SharedKey ${credentials.account}:${await signature(credentials, method, url, headers)}`;
}

function signature(credentials: Credentials, method: string, url: URL, headers: Record<string, string>) {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const standard = signedStandardHeaders.map((name) =>
    name === 'content-length' && lower.get(name) === '0' ? '' : (lower.get(name) ?? ''),
  );
  const canonicalHeaders = [...lower.keys()]
    .filter((name) => name.startsWith('x-ms-'))
    .sort()
    .map((name) => `${name}:${lower.get(name)}\n`)
    .join('');
  const values = new Map<string, string[]>();
  for (const [name, value] of url.searchParams) {
    values.set(name.toLowerCase(), [...(values.get(name.toLowerCase()) ?? []), value]);
  }
  const parameters = [...values.keys()].sort().map((name) => `\n${name}:${values.get(name)!.sort().join(',')}`);
  // Path-style, as the emulators sign it: the account, then the path with the account again.
  const resource = `/${credentials.account}${url.pathname}`;
  const text = `${[method, ...standard].join('\n')}\n${canonicalHeaders}${resource}${parameters.join('')}`;
  return hmacBase64(credentials.key, text);
}
