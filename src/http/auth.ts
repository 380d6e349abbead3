// Shared Key and Shared Key Lite verification in the services' flavours: the Table service's
// (Azure REST: authorize-with-shared-key) and the Blob and Queue services' (canonicalized x-ms-* headers, every query
// parameter in the canonicalized resource:
// https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key).
// Pure: the caller hands over the request line, headers and clock; no node:http types here.
import { timingSafeEqual } from 'node:crypto';
import { StorageError } from '../errors.js';
import { clockSkewMs } from '../limits.js';
import {
  canonicalizedResource,
  type SharedKeyFields,
  sharedKeyLiteStringToSign,
  sharedKeyStringToSign,
  sign,
} from '../domain/shared-key.js';
import type { Account } from './accounts.js';

export { canonicalizedResource, sharedKeyLiteStringToSign, sharedKeyStringToSign, sign };
export type { SharedKeyFields };

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
  /** The query as received (after '?', still percent-encoded): the Blob/Queue flavour signs it decoded. */
  readonly rawQuery?: string | undefined;
  /** The version a request naming none is served at: a Blob Batch part's is its batch's (blob-batch). */
  readonly inheritedVersion?: string | undefined;
}

export type SharedKeyScheme = 'SharedKey' | 'SharedKeyLite';

/**
 * How a service builds the string a Shared Key request signs: the Table service's format, or the
 * Blob and Queue services' (canonicalized x-ms-* headers, every query parameter in the resource;
 * https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key), which the
 * Queue service supplies. `path` is one candidate path (as received, or a tolerated variant);
 * `date` is the signed date, already checked against the clock.
 */
export interface SharedKeyFlavour {
  stringToSign(scheme: SharedKeyScheme, request: AuthRequest, date: string, path: string): string;
}

/** The Table service's format (Azure REST: authorize-with-shared-key). */
export const tableSharedKey: SharedKeyFlavour = {
  stringToSign(scheme, request, date, path) {
    const resource = canonicalizedResource(request.account.name, path, request.query.get('comp'));
    if (scheme === 'SharedKeyLite') return sharedKeyLiteStringToSign(date, resource);
    return sharedKeyStringToSign({
      method: request.method,
      contentMd5: header(request, 'content-md5') ?? '',
      contentType: header(request, 'content-type') ?? '',
      date,
      canonicalizedResource: resource,
    });
  },
};

/**
 * The Blob and Queue services' format. Shared Key: the verb, eleven standard headers (Content-Length
 * empty when 0 from version 2015-02-21; Date as sent, empty when the client signs x-ms-date), the
 * canonicalized x-ms-* headers and the full canonicalized resource. Shared Key Lite: the verb,
 * Content-MD5, Content-Type, Date, the canonicalized headers and `/{account}{path}[?comp=…]`.
 */
export const blobQueueSharedKey: SharedKeyFlavour = {
  stringToSign(scheme, request, _date, path) {
    const value = (name: string): string => header(request, name) ?? '';
    const headers = canonicalizedHeaders(request);
    const account = request.account.name;
    if (scheme === 'SharedKeyLite') {
      const resource = canonicalizedResource(account, path, request.query.get('comp'));
      const fields = [request.method, value('content-md5'), value('content-type'), value('date')];
      return `${fields.join('\n')}\n${headers}${resource}`;
    }
    const length = value('content-length');
    const version = header(request, 'x-ms-version') ?? request.inheritedVersion ?? '';
    const contentLength = length === '0' && version >= '2015-02-21' ? '' : length;
    const fields = [request.method, value('content-encoding'), value('content-language'), contentLength];
    fields.push(value('content-md5'), value('content-type'), value('date'), value('if-modified-since'));
    fields.push(value('if-match'), value('if-none-match'), value('if-unmodified-since'), value('range'));
    const rawQuery = request.rawQuery ?? request.query.toString();
    return `${fields.join('\n')}\n${headers}${blobQueueCanonicalizedResource(account, path, rawQuery)}`;
  },
};

/** Every x-ms-* header as `name:value` on its own line, names lower-case in ordinal order. */
function canonicalizedHeaders(request: AuthRequest): string {
  const names = Object.keys(request.headers).filter((name) => name.startsWith('x-ms-'));
  return names
    .sort(ordinal)
    .map((name) => `${name}:${header(request, name) ?? ''}\n`)
    .join('');
}

/**
 * `/{account}{path}`, then each query parameter on its own line, `name:value[,value…]`, names
 * lower-case in ordinal order, values percent-decoded and sorted.
 */
export function blobQueueCanonicalizedResource(accountName: string, path: string, rawQuery: string): string {
  const values = new Map<string, string[]>();
  for (const pair of rawQuery === '' ? [] : rawQuery.split('&')) {
    const equals = pair.indexOf('=');
    const name = decodedOrRaw(equals < 0 ? pair : pair.slice(0, equals)).toLowerCase();
    const value = equals < 0 ? '' : decodedOrRaw(pair.slice(equals + 1));
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  const lines = [...values.keys()]
    .sort(ordinal)
    .map((name) => `\n${name}:${values.get(name)!.sort(ordinal).join(',')}`);
  return `/${accountName}${path === '' ? '/' : path}${lines.join('')}`;
}

function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function decodedOrRaw(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a malformed escape is signed as sent
  }
}

/**
 * Verifies the Authorization header; returns normally on success and throws
 * StorageError('AuthenticationFailed') otherwise. Accepts either account key and, per Azure REST:
 * authorize-with-shared-key's
 * recommendation, the path as received, without its account segment, and percent-decoded.
 */
export function verifySharedKey(request: AuthRequest, flavour: SharedKeyFlavour = tableSharedKey): void {
  const { scheme, signature } = parseAuthorization(request);
  const date = checkedDate(request);
  // Compare the base64 text, not decoded bytes: Buffer.from would also accept non-canonical forms.
  const provided = Buffer.from(signature);
  // Lazily: the raw path is what every SDK signs, so the variants are made only when it fails.
  let rawStringToSign: string | undefined;
  for (const path of candidatePaths(request)) {
    const candidate = flavour.stringToSign(scheme, request, date, path);
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

function parseAuthorization(request: AuthRequest): { scheme: SharedKeyScheme; signature: string } {
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
  return { scheme: scheme as SharedKeyScheme, signature };
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

/** The raw path first (what every SDK signs), then the tolerated variants (repeats possible). */
function* candidatePaths(request: AuthRequest): Generator<string, void, undefined> {
  const paths = [request.rawPath];
  yield request.rawPath;
  if (request.pathStyle) {
    paths.push(withoutFirstSegment(request.rawPath));
    yield paths[1]!;
  }
  for (const path of paths) {
    const decoded = percentDecoded(path);
    if (decoded !== undefined) yield decoded;
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

function authenticationFailed(detail: string): StorageError {
  return new StorageError('AuthenticationFailed', undefined, detail);
}
