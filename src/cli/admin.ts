// Requests to Cerulean's own endpoints (/_insights, /_faults), signed with the account key of the
// command's endpoint (Shared Key Lite over `/{account}/_path`, as the server verifies them). From
// loopback, /_insights needs no signature; /_faults always does.
import { sharedKeyLiteAuthorization } from '../domain/shared-key.js';
import { CliError } from './command.js';
import { type AdminTarget, cliUserAgent } from './endpoint.js';

const apiVersion = '2019-02-02';

export interface AdminRequest {
  readonly method: 'GET' | 'PUT' | 'DELETE';
  /** `/_faults`, `/_insights` */
  readonly path: string;
  readonly body?: string;
  /** Refuse before sending when no key is known (the server would answer 403 anyway). */
  readonly keyRequired?: boolean;
}

/** Sends `request` and returns the answer's text; a non-2xx answer or no answer is a CliError. */
export async function adminRequest(target: AdminTarget, request: AdminRequest): Promise<string> {
  if (request.keyRequired && target.key === undefined) {
    throw new CliError(`${request.path} needs the account key: give -c a connection string with AccountKey`, 2);
  }
  const url = new URL(request.path, target.origin);
  const headers: Record<string, string> = {
    'x-ms-date': new Date().toUTCString(),
    'x-ms-version': apiVersion,
    'User-Agent': cliUserAgent,
  };
  if (request.body !== undefined) headers['Content-Type'] = 'application/json';
  if (target.key !== undefined) {
    headers['Authorization'] = sharedKeyLiteAuthorization(target.account, target.key, headers['x-ms-date']!, request.path);
  }
  let response: Response;
  try {
    response = await fetch(url, { method: request.method, headers, body: request.body ?? null });
  } catch (error) {
    // fetch says only "fetch failed"; the cause says why (e.g. ECONNREFUSED).
    const { message, cause } = error as Error & { cause?: Error };
    throw new CliError(`${url.origin}: ${cause?.message === undefined ? message : `${message}: ${cause.message}`}`);
  }
  const text = await response.text();
  if (!response.ok) throw new CliError(`${url.href} answered ${response.status}: ${serviceMessage(text)}`);
  return text;
}

/** The `odata.error` message of a JSON error body, else the body's start. */
function serviceMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { 'odata.error'?: { code?: string; message?: { value?: string } } };
    const error = parsed['odata.error'];
    if (error !== undefined) return `${error.code ?? ''} ${error.message?.value?.split('\n')[0] ?? ''}`.trim();
  } catch {
    // not JSON: show it as it came
  }
  return text.slice(0, 300).replace(/\s+/g, ' ');
}
