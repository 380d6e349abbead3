// CORS for browser clients (Azure REST: preflight-table-request): the anonymous OPTIONS preflight, and the
// Access-Control-* headers on actual cross-origin requests, both from the account's CORS rules
// (Set Table Service Properties). Pure: rules and request headers in, reply or headers out.
import { StorageError } from '../errors.js';
import type { CorsRule } from '../domain/service-properties.js';
import type { Headers } from './service-definition.js';
import type { Reply } from './respond.js';
import { firstHeader } from './headers.js';

/**
 * The preflight reply: 200 with the grant. Throws 400 InvalidHeaderValue without Origin or
 * Access-Control-Request-Method and 403 CorsPreflightFailure when no rule matches; these carry the
 * service's error body like any other failure, with the service's message text word for word
 * (tools match on it).
 */
export function preflight(rules: readonly CorsRule[], headers: Headers): Reply {
  const origin = single(headers['origin']);
  const method = single(headers['access-control-request-method']);
  if (origin === undefined || method === undefined) {
    throw new StorageError('InvalidHeaderValue', 'A required CORS header is not present.');
  }
  const requestedHeaders = single(headers['access-control-request-headers']);
  const names = (requestedHeaders ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const rule = rules.find(
    (candidate) =>
      originAllowed(candidate, origin) &&
      candidate.allowedMethods.includes(method.toUpperCase()) &&
      names.every((name) => listed(candidate.allowedHeaders, name)),
  );
  if (rule === undefined) throw new StorageError('CorsPreflightFailure');
  const allowAll = rule.allowedOrigins.includes('*');
  return {
    status: 200,
    headers: {
      'Access-Control-Allow-Origin': allowAll ? '*' : origin,
      'Access-Control-Allow-Methods': method,
      ...(requestedHeaders !== undefined && { 'Access-Control-Allow-Headers': requestedHeaders }),
      'Access-Control-Max-Age': String(rule.maxAgeInSeconds),
      'Access-Control-Allow-Credentials': 'true',
      ...(!allowAll && { Vary: 'Origin' }),
    },
  };
}

/** Headers respond.ts's send() adds to every reply (x-ms-client-request-id when the request had one). */
const alwaysSentHeaders = [
  'x-ms-request-id',
  'Server',
  'x-ms-version',
  'X-Content-Type-Options',
  'Cache-Control',
  'Date',
  'Content-Length',
];

/**
 * Response headers exposed whatever the rule lists. The service was recorded exposing every header
 * of its reply (Azure REST: preflight-table-request: x-ms-request-id, x-ms-client-request-id, Server, x-ms-version,
 * X-Content-Type-Options, Cache-Control, x-ms-continuation-*, Content-Type, Content-Length, Date);
 * browser clients need the x-ms-* ones (request ids, continuation to page, error code) and ETag
 * (the SDKs return it from writes for optimistic concurrency) — recommendation, not verified for
 * rules whose ExposedHeaders list less.
 */
function alwaysExposed(name: string): boolean {
  return (
    /^x-ms-/i.test(name) || alwaysSentHeaders.includes(name) || ['content-type', 'etag'].includes(name.toLowerCase())
  );
}

/**
 * `reply` with the CORS headers of the first rule matching the request's Origin and method, if any
 * (errors too, so that browsers can read them). Exposed: the reply's headers the rule lists, those
 * alwaysExposed, and the rule's literal names.
 */
export function withCorsHeaders(rules: readonly CorsRule[], headers: Headers, method: string, reply: Reply): Reply {
  const origin = single(headers['origin']);
  if (origin === undefined || rules.length === 0) return reply;
  const rule = rules.find((candidate) => originAllowed(candidate, origin) && candidate.allowedMethods.includes(method));
  if (rule === undefined) return { ...reply, headers: { ...reply.headers, Vary: 'Origin' } };
  const echoed = headers['x-ms-client-request-id'] === undefined ? [] : ['x-ms-client-request-id'];
  const replyHeaders = [...alwaysSentHeaders, ...echoed, ...Object.keys(reply.headers ?? {})];
  const exposed = new Set(replyHeaders.filter((name) => alwaysExposed(name) || listed(rule.exposedHeaders, name)));
  for (const name of rule.exposedHeaders) if (!name.endsWith('*')) exposed.add(name);
  const allowAll = rule.allowedOrigins.includes('*');
  const cors: Record<string, string> = {
    'Access-Control-Allow-Origin': allowAll ? '*' : origin,
    'Access-Control-Expose-Headers': [...exposed].join(','),
  };
  if (!allowAll) Object.assign(cors, { 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' });
  return { ...reply, headers: { ...reply.headers, ...cors } };
}

/** Origins compare case-insensitively (scheme and host are); '*' allows any. */
function originAllowed(rule: CorsRule, origin: string): boolean {
  const lower = origin.toLowerCase();
  return rule.allowedOrigins.some((allowed) => allowed === '*' || allowed.toLowerCase() === lower);
}

/** Header names compare case-insensitively; an entry ending in '*' is a prefix ('*' alone: any). */
function listed(entries: readonly string[], name: string): boolean {
  const lower = name.toLowerCase();
  return entries.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.endsWith('*') ? lower.startsWith(pattern.slice(0, -1)) : lower === pattern;
  });
}

/** A header's first value, trimmed; undefined when absent or blank. */
function single(value: string | string[] | undefined): string | undefined {
  const text = firstHeader(value)?.trim();
  return text === '' ? undefined : text;
}
