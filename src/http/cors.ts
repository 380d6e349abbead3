// CORS for browser clients (operations.md §4.4): the anonymous OPTIONS preflight, and the
// Access-Control-* headers on actual cross-origin requests, both from the account's CORS rules
// (Set Table Service Properties). Pure: rules and request headers in, reply or headers out.
import type { CorsRule } from '../protocol/service-properties-xml.js';
import type { Headers } from './operations.js';
import type { Reply } from './respond.js';
import { firstHeader } from './headers.js';

/**
 * The preflight reply: 200 with the grant, 400 without Origin or Access-Control-Request-Method,
 * 403 when no rule matches. Failures carry no body (errors.md §3, unverified) but do carry
 * x-ms-error-code.
 */
export function preflight(rules: readonly CorsRule[], headers: Headers): Reply {
  const origin = single(headers['origin']);
  const method = single(headers['access-control-request-method']);
  if (origin === undefined || method === undefined) {
    return { status: 400, headers: { 'x-ms-error-code': 'InvalidHeaderValue' } };
  }
  const requestedHeaders = single(headers['access-control-request-headers']);
  const names = (requestedHeaders ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  const rule = rules.find(
    (candidate) =>
      originAllowed(candidate, origin) &&
      candidate.allowedMethods.includes(method.toUpperCase()) &&
      names.every((name) => listed(candidate.allowedHeaders, name)),
  );
  if (rule === undefined) return { status: 403, headers: { 'x-ms-error-code': 'CorsPreflightFailure' } };
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

/** Headers respond.ts's send() adds to every reply; a rule may expose them too. */
const alwaysSentHeaders = [
  'x-ms-request-id',
  'x-ms-client-request-id',
  'Server',
  'x-ms-version',
  'X-Content-Type-Options',
  'Cache-Control',
  'Date',
  'Content-Length',
];

/**
 * `reply` with the CORS headers of the first rule matching the request's Origin and method, if any
 * (errors too, so that browsers can read them). Continuation headers are always exposed: browser
 * clients need them to page (operations.md §4.4 recommendation).
 */
export function withCorsHeaders(rules: readonly CorsRule[], headers: Headers, method: string, reply: Reply): Reply {
  const origin = single(headers['origin']);
  if (origin === undefined || rules.length === 0) return reply;
  const rule = rules.find((candidate) => originAllowed(candidate, origin) && candidate.allowedMethods.includes(method));
  if (rule === undefined) return { ...reply, headers: { ...reply.headers, Vary: 'Origin' } };
  const replyHeaders = [...alwaysSentHeaders, ...Object.keys(reply.headers ?? {})];
  const exposedByRule = (name: string) => listed(rule.exposedHeaders, name) || /^x-ms-continuation-/i.test(name);
  const exposed = new Set(replyHeaders.filter(exposedByRule));
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
