// Raw HTTP for system tests: exact request targets, headers and bodies, signed with Shared Key or
// Shared Key Lite (Azure REST: authorize-with-shared-key). Only the HMAC comes from src/http/auth.ts; the
// string-to-sign and
// canonicalized resource are built here on purpose, so a wrong server canonicalization cannot agree
// with a wrong test one.
import assert from 'node:assert/strict';
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { sign } from '../../src/http/auth.js';
import { devAccount, devKey } from './server.js';

export type AuthScheme = 'SharedKeyLite' | 'SharedKey';

export interface Signing {
  scheme: AuthScheme;
  /** Account in the Authorization header and canonicalized resource (default: devstoreaccount1). */
  account?: string;
  /** Base64 account key (default: the development key). */
  key?: string;
  /** x-ms-date to send and sign (default: now). */
  date?: string;
  /** Sign as if this were the verb (SharedKey only), to forge a mismatch. */
  signedVerb?: string;
  /** Sign this request target instead of the real one, to forge a mismatch. */
  signedTarget?: string;
}

export interface RawRequest {
  method: string;
  /** Request target exactly as sent, e.g. `/devstoreaccount1/Tables?$top=1`. */
  path: string;
  /** `undefined` as a value removes a default header. */
  headers?: Record<string, string | string[] | undefined>;
  /** An object is sent as JSON. */
  body?: string | Buffer | object;
  /** Default: Shared Key Lite as the development account; 'none' (or an Authorization in headers) signs nothing. */
  auth?: Signing | 'none';
  /** Send the body in pieces of this many bytes (with chunkDelayMs between them). */
  chunkBytes?: number;
  chunkDelayMs?: number;
  /** Omit Content-Length so the body goes out with Transfer-Encoding: chunked. */
  chunkedEncoding?: boolean;
  host?: string;
  /** Read nothing of the response for this long after its head arrives (a slow reader). */
  pauseResponseMs?: number;
  /**
   * Send `Expect: 100-continue` and hold the body until the server's 100 Continue, then call this:
   * from that moment the server has read the request's head, so the request is in flight.
   */
  onContinue?: () => void;
  /** Default: a fresh connection that closes after the response. */
  agent?: http.Agent;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json(): any;
}

export const defaultVersion = '2019-02-02';

/** Base64 HMAC-SHA256 of `text` under a base64 account key. */
export function hmacBase64(key: string, text: string): string {
  return sign(text, Buffer.from(key, 'base64'));
}

/** `/account` + the raw path as sent + `?comp=` if present (Azure REST: authorize-with-shared-key). */
export function canonicalizedResource(account: string, target: string): string {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const comp = q < 0 ? null : new URLSearchParams(target.slice(q + 1)).get('comp');
  return `/${account}${path === '' ? '/' : path}${comp ? `?comp=${comp}` : ''}`;
}

export interface SignParts {
  verb: string;
  contentMd5: string;
  contentType: string;
  date: string;
  resource: string;
}

export function stringToSign(scheme: AuthScheme, p: SignParts): string {
  return scheme === 'SharedKeyLite'
    ? `${p.date}\n${p.resource}`
    : `${p.verb}\n${p.contentMd5}\n${p.contentType}\n${p.date}\n${p.resource}`;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string {
  const found = Object.entries(headers).find(([k]) => k.toLowerCase() === name);
  const value = found?.[1];
  return Array.isArray(value) ? value.join(',') : (value ?? '');
}

function authorization(req: RawRequest, headers: Record<string, string | string[] | undefined>, s: Signing): string {
  const account = s.account ?? devAccount;
  const parts: SignParts = {
    verb: (s.signedVerb ?? req.method).toUpperCase(),
    contentMd5: header(headers, 'content-md5'),
    contentType: header(headers, 'content-type'),
    date: header(headers, 'x-ms-date') || header(headers, 'date'),
    resource: canonicalizedResource(account, s.signedTarget ?? req.path),
  };
  return `${s.scheme} ${account}:${hmacBase64(s.key ?? devKey, stringToSign(s.scheme, parts))}`;
}

function bodyBytes(body: RawRequest['body']): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  return Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
}

function buildHeaders(req: RawRequest, body: Buffer | undefined): Record<string, string | string[]> {
  const auth = req.auth ?? { scheme: 'SharedKeyLite' };
  const merged: Record<string, string | string[] | undefined> = {
    'x-ms-version': defaultVersion,
    'x-ms-date': auth === 'none' || auth.date === undefined ? new Date().toUTCString() : auth.date,
    Accept: 'application/json;odata=minimalmetadata',
    DataServiceVersion: '3.0',
    ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    ...(body !== undefined && !req.chunkedEncoding ? { 'Content-Length': String(body.length) } : {}),
  };
  for (const [name, value] of Object.entries(req.headers ?? {})) {
    for (const existing of Object.keys(merged))
      if (existing.toLowerCase() === name.toLowerCase()) delete merged[existing];
    merged[name] = value;
  }
  const givenAuthorization = Object.keys(req.headers ?? {}).some((h) => h.toLowerCase() === 'authorization');
  if (auth !== 'none' && !givenAuthorization) merged.Authorization = authorization(req, merged, auth);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(merged)) if (value !== undefined) out[name] = value;
  return out;
}

async function writeBody(req: http.ClientRequest, body: Buffer, options: RawRequest): Promise<void> {
  const step = options.chunkBytes ?? body.length;
  for (let at = 0; at < body.length; at += step) {
    if (req.destroyed) return;
    req.write(body.subarray(at, at + step));
    if (options.chunkDelayMs && at + step < body.length) await sleep(options.chunkDelayMs);
  }
}

/** Sends one request (on a fresh connection unless `agent`) to 127.0.0.1:port and reads the whole response. */
export function send(port: number, options: RawRequest): Promise<RawResponse> {
  const body = bodyBytes(options.body);
  const gate = options.onContinue;
  const headers = buildHeaders(gate === undefined ? options : withExpectContinue(options), body);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request({
      host: options.host ?? '127.0.0.1',
      port,
      method: options.method,
      path: options.path,
      headers,
      agent: options.agent ?? false,
      setHost: !Object.keys(headers).some((h) => h.toLowerCase() === 'host'),
    });
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      if (options.pauseResponseMs !== undefined) {
        res.pause();
        setTimeout(() => res.resume(), options.pauseResponseMs);
      }
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: bytes,
          text,
          json: () => JSON.parse(text),
        });
      });
    });
    // A server may answer early (413) and close while the body is still going out: that is fine.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (gate !== undefined) req.flushHeaders();
    const continued = gate === undefined ? Promise.resolve() : once(req, 'continue').then(() => gate());
    const finish = continued.then(() => (body === undefined ? undefined : writeBody(req, body, options)));
    finish.then(
      () => req.end(),
      (error) => reject(error),
    );
  });
}

function withExpectContinue(options: RawRequest): RawRequest {
  return { ...options, headers: { ...options.headers, Expect: '100-continue' } };
}

/** Path-style request target for the development account. */
export function devPath(resource: string, account = devAccount): string {
  return `/${account}/${resource}`;
}

/**
 * OData key literal as the JS SDK writes it: quotes doubled, then encodeURIComponent (Azure REST:
 * addressing-table-service-resources).
 */
export function jsKeyLiteral(key: string): string {
  return encodeURIComponent(key.replaceAll("'", "''"));
}

/** As the Python SDK writes it: quotes doubled, then every quote percent-encoded too. */
export function pythonKeyLiteral(key: string): string {
  return jsKeyLiteral(key).replaceAll("'", '%27');
}

export function entityPath(table: string, pk: string, rk: string, literal = jsKeyLiteral): string {
  return devPath(`${table}(PartitionKey='${literal(pk)}',RowKey='${literal(rk)}')`);
}

/** The odata.error.code of a JSON error body, or undefined. */
export function errorCode(res: RawResponse): string | undefined {
  try {
    return res.json()['odata.error']?.code;
  } catch {
    return undefined;
  }
}

export function describeResponse(res: RawResponse): string {
  return `${res.status} ${res.text.slice(0, 500)}`;
}

/** Asserts the status and, if given, the odata.error.code, printing the body on failure. */
export function assertError(res: RawResponse, status: number, code?: string): void {
  assert.equal(res.status, status, describeResponse(res));
  if (code !== undefined) assert.equal(errorCode(res), code, describeResponse(res));
}

/**
 * Writes raw bytes on a fresh socket and returns (as latin1) whatever comes back before the server
 * closes or goes quiet for `quietMs` after answering. Until its first byte the wait is
 * `answerWithinMs`: a loaded machine may take seconds to answer at all.
 */
export function exchangeRaw(
  port: number,
  bytes: Buffer | string,
  quietMs = 1500,
  answerWithinMs = 60_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(done, received === '' ? answerWithinMs : quietMs);
    };
    socket.on('connect', () => {
      socket.write(bytes);
      arm();
    });
    socket.on('data', (d) => {
      received += d.toString('latin1');
      arm();
    });
    socket.on('end', done);
    socket.on('close', done);
    // The server may answer and close while we are still writing: keep what it said.
    socket.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'ECONNRESET' || e.code === 'EPIPE' ? done() : reject(e),
    );
  });
}

/** Status code of a raw HTTP/1.x response text, if it has a status line. */
export function rawStatus(rawResponse: string): number | undefined {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(rawResponse);
  return m ? Number(m[1]) : undefined;
}
