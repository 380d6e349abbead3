// A signed request to the Queue (or Blob) service of this server, on its own port: Shared Key Lite
// in the Blob and Queue services' format (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key):
// the verb, Content-MD5, Content-Type, Date (empty: x-ms-date is signed instead), every x-ms-*
// header as `name:value` in order, then `/{account}{path}` and `?comp=…` when the query has comp.
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
  readonly body?: string | Blob | ArrayBuffer;
}

/** Signs and sends one request to `service`; throws ApiError for any status of 400 or more. */
export async function serviceCall(
  service: ServiceName,
  credentials: Credentials,
  request: ServiceRequest,
): Promise<Response> {
  const origin = await serviceOrigin(service);
  if (origin === undefined) throw new Error(`This server serves no ${service} service.`);
  const url = new URL(`/${credentials.account}${request.path === '' ? '/' : request.path}`, origin);
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, value);
  }
  // A body without a Content-Type would get the browser's, which the signature would not cover.
  if (request.body !== undefined && !Object.keys(request.headers ?? {}).some((name) => /^content-type$/i.test(name))) {
    throw new Error('a request with a body must name its Content-Type');
  }
  const headers: Record<string, string> = {
    'x-ms-date': new Date().toUTCString(),
    'x-ms-version': apiVersion,
    'x-ms-useragent': explorerAgent,
    ...request.headers,
  };
  headers['Authorization'] =
    `SharedKeyLite ${credentials.account}:${await signature(credentials, request, url, headers)}`;
  const response = await fetch(url, { method: request.method, headers, body: request.body, cache: 'no-store' });
  if (response.status >= 400) throw await apiError(response);
  return response;
}

function signature(
  credentials: Credentials,
  request: ServiceRequest,
  url: URL,
  headers: Record<string, string>,
): Promise<string> {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const canonical = [...lower.keys()]
    .filter((name) => name.startsWith('x-ms-'))
    .sort()
    .map((name) => `${name}:${lower.get(name)}\n`)
    .join('');
  const comp = url.searchParams.get('comp');
  const resource = url.pathname; // `/{account}/…`: path-style, as the page always calls
  const fields = [request.method, lower.get('content-md5') ?? '', lower.get('content-type') ?? '', ''];
  return hmacBase64(
    credentials.key,
    `${fields.join('\n')}\n${canonical}${resource}${comp === null ? '' : `?comp=${comp}`}`,
  );
}
