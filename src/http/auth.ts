// Shared Key and Shared Key Lite verification, Table service formats (Azure REST: authorize-with-shared-key).
// Pure: the caller hands over the request line, headers and clock; no node:http types here.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { TableError } from '../errors.js';
import { clockSkewMs } from '../limits.js';
import type { Account } from './accounts.js';

export interface AuthRequest {
  /** As on the request line, e.g. 'POST' (tunnelled merges sign the real method). */
  readonly method: string;
  /** The request-target path exactly as received, still percent-encoded, no query string. */
  readonly rawPath: string;
  readonly query: URLSearchParams;
  /** Node-style lower-case header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Resolved from the URL: the primary name, without -secondary. */
  readonly account: Account;
  /** Whether rawPath starts with the account segment (/{account} or /{account}-secondary). */
  readonly pathStyle: boolean;
  /** Server clock, ms since the epoch. */
  readonly now: number;
}

export interface SharedKeyFields {
  readonly method: string;
  readonly contentMd5: string;
  readonly contentType: string;
  readonly date: string;
  readonly canonicalizedResource: string;
}

type Scheme = 'SharedKey' | 'SharedKeyLite';

/** Base64 HMAC-SHA256 of the UTF-8 string-to-sign under a decoded account key. */
export function sign(stringToSign: string, key: Buffer): string {
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('base64');
}

/** Azure REST: authorize-with-shared-key: no canonicalized x-ms-* headers in the Table format. */
export function sharedKeyStringToSign(fields: SharedKeyFields): string {
  const { method, contentMd5, contentType, date, canonicalizedResource } = fields;
  return `${method}\n${contentMd5}\n${contentType}\n${date}\n${canonicalizedResource}`;
}

/** Azure REST: authorize-with-shared-key. */
export function sharedKeyLiteStringToSign(date: string, canonicalizedResource: string): string {
  return `${date}\n${canonicalizedResource}`;
}

/**
 * Azure REST: authorize-with-shared-key: "/" + account + path (empty path = "/") + "?comp=…" when the query has comp.
 */
export function canonicalizedResource(accountName: string, path: string, comp: string | null): string {
  const compPart = comp === null ? '' : `?comp=${comp}`;
  return `/${accountName}${path === '' ? '/' : path}${compPart}`;
}

/**
 * Verifies the Authorization header; returns normally on success and throws
 * TableError('AuthenticationFailed') otherwise. Accepts either account key and, per Azure REST:
 * authorize-with-shared-key's
 * recommendation, the path as received, without its account segment, and percent-decoded.
 */
export function verifySharedKey(request: AuthRequest): void {
  const { scheme, signature } = parseAuthorization(request);
  const date = checkedDate(request);
  // Compare the base64 text, not decoded bytes: Buffer.from would also accept non-canonical forms.
  const provided = Buffer.from(signature);
  // Lazily: the raw path is what every SDK signs, so the variants are made only when it fails.
  let rawStringToSign: string | undefined;
  for (const resource of candidateResources(request)) {
    const candidate = stringToSign(scheme, request, date, resource);
    rawStringToSign ??= candidate;
    if (request.account.keys.some((key) => timingSafeEqual(Buffer.from(sign(candidate, key)), provided))) return;
  }
  throw authenticationFailed(
    `The MAC signature found in the HTTP request '${signature}' is not the same as any computed signature. ` +
      `Server used following string to sign: '${rawStringToSign}'.`,
  );
}

const authorizationPattern = /^(SharedKey|SharedKeyLite) ([^:\s]+):(\S+)$/;
/** A base64 HMAC-SHA256 is always 43 characters and one '=' (32 bytes). */
const signaturePattern = /^[A-Za-z0-9+/]{43}=$/;

function parseAuthorization(request: AuthRequest): { scheme: Scheme; signature: string } {
  const value = header(request, 'authorization');
  if (value === undefined) throw authenticationFailed('The Authorization header is missing.');
  const match = authorizationPattern.exec(value);
  if (match === null) {
    throw authenticationFailed(
      "The Authorization header is not of the form 'SharedKey {account}:{signature}' " +
        "or 'SharedKeyLite {account}:{signature}'.",
    );
  }
  const [, scheme, accountName, signature] = match;
  if (accountName !== request.account.name) {
    throw authenticationFailed(
      `The account '${accountName}' in the Authorization header ` +
        `is not the account '${request.account.name}' of the request URL.`,
    );
  }
  if (!signaturePattern.test(signature)) {
    throw authenticationFailed(`The signature '${signature}' in the Authorization header is not a base64 HMAC-SHA256.`);
  }
  return { scheme: scheme as Scheme, signature };
}

/**
 * The signed date: x-ms-date wins over Date (Azure REST: authorize-with-shared-key); it must be within the clock skew.
 */
function checkedDate(request: AuthRequest): string {
  const date = header(request, 'x-ms-date') ?? header(request, 'date');
  if (date === undefined || date === '') {
    throw authenticationFailed('The request has neither an x-ms-date nor a Date header.');
  }
  const time = parsedDate(date);
  if (Number.isNaN(time)) throw authenticationFailed(`The request date header '${date}' is not an RFC 1123 date.`);
  if (time < request.now - clockSkewMs) throw authenticationFailed(`Request date header too old: '${date}'`);
  // The service's wording for a future date is unverified; this mirrors the "too old" text.
  if (time > request.now + clockSkewMs) throw authenticationFailed(`Request date header too new: '${date}'`);
  return date;
}

// Clients sign with a date to the second: most requests repeat the previous one's.
let lastDate = '';
let lastTime = NaN;

function parsedDate(date: string): number {
  if (date !== lastDate) {
    lastTime = Date.parse(date);
    lastDate = date;
  }
  return lastTime;
}

function stringToSign(scheme: Scheme, request: AuthRequest, date: string, resource: string): string {
  if (scheme === 'SharedKeyLite') return sharedKeyLiteStringToSign(date, resource);
  return sharedKeyStringToSign({
    method: request.method,
    contentMd5: header(request, 'content-md5') ?? '',
    contentType: header(request, 'content-type') ?? '',
    date,
    canonicalizedResource: resource,
  });
}

/** The raw path first (what every SDK signs), then the tolerated variants (repeats possible). */
function* candidateResources(request: AuthRequest): Generator<string, void, undefined> {
  const comp = request.query.get('comp');
  const resource = (path: string): string => canonicalizedResource(request.account.name, path, comp);
  const paths = [request.rawPath];
  yield resource(request.rawPath);
  if (request.pathStyle) {
    paths.push(withoutFirstSegment(request.rawPath));
    yield resource(paths[1]!);
  }
  for (const path of paths) {
    const decoded = percentDecoded(path);
    if (decoded !== undefined) yield resource(decoded);
  }
}

function withoutFirstSegment(path: string): string {
  const next = path.indexOf('/', 1);
  return next === -1 ? '' : path.slice(next);
}

function percentDecoded(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined; // malformed escapes: only the raw form can match
  }
}

function header(request: AuthRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

function authenticationFailed(detail: string): TableError {
  return new TableError('AuthenticationFailed', undefined, detail);
}
