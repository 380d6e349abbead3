// Writing responses: the headers every response carries (docs/protocol-notes.md#headers-on-every-response) and the one
// place where errors become Azure error bodies (Azure REST: status-and-error-codes2).
import assert from 'node:assert/strict';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { clientRequestIdLengthMax } from '../limits.js';
import { errorCodes, StorageError, xmlMessages, type ErrorCode } from '../errors.js';
import { escapeXmlText } from '../wire/xml.js';
import { isVersionShaped } from './request-checks.js';
import { lingerAfterReply } from './linger.js';
import type { ErrorFormat } from './service-definition.js';

export interface Reply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /**
   * A body streamed instead of `body` (blob content), never held whole; the reply's headers must
   * then carry its Content-Length. If the stream fails midway the connection is destroyed: the
   * client sees a short body, never a different one.
   */
  readonly stream?: AsyncIterable<Buffer>;
  /** Called once the body has been handed to the OS, when its buffer may be reused (never if the connection fails). */
  readonly onSent?: () => void;
}

/** Per-request facts every response needs. */
export interface ResponseContext {
  readonly requestId: string;
  readonly version: string;
  readonly clientRequestId: string | undefined;
  /** How this request's errors are written (the service, and for tables the operation, decide). */
  errorFormat: ErrorFormat;
  /** The Cache-Control of replies that name none; undefined: none (blob replies carry the blob's own). */
  cacheControl: string | undefined;
}

/** The Table service's JSON errors at minimal metadata: the format before anything is known. */
export const defaultErrorFormat: ErrorFormat = {
  kind: 'json',
  contentType: 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8',
};

const defaultVersion = '2019-02-02';
const visibleAscii = /^[\x20-\x7e]*$/;

export function responseContext(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  errorFormat = defaultErrorFormat,
): ResponseContext {
  const version = headers['x-ms-version'];
  const clientRequestId = headers['x-ms-client-request-id'];
  return {
    requestId: randomUUID(),
    // Echo any date-shaped version; otherwise answer as 2019-02-02 (docs/protocol-notes.md#service-versions).
    version: typeof version === 'string' && isVersionShaped(version) ? version : defaultVersion,
    clientRequestId:
      typeof clientRequestId === 'string' &&
      clientRequestId.length <= clientRequestIdLengthMax &&
      visibleAscii.test(clientRequestId)
        ? clientRequestId
        : undefined,
    errorFormat,
    cacheControl: 'no-cache',
  };
}

export function send(response: ServerResponse, context: ResponseContext, reply: Reply): void {
  const { headers, body } = wireForm(context, reply);
  if (reply.headers?.['Connection'] === 'close') lingerAfterReply(response.req, response.socket);
  response.writeHead(reply.status, headers);
  if (reply.stream !== undefined) streamBody(response, reply.stream, reply.onSent);
  else if (reply.onSent === undefined) response.end(body);
  else response.end(body, reply.onSent);
}

function streamBody(response: ServerResponse, stream: AsyncIterable<Buffer>, onSent: (() => void) | undefined): void {
  pipeline(Readable.from(stream, { objectMode: false }), response).then(
    () => onSent?.(),
    () => response.destroy(),
  );
}

/**
 * The whole HTTP/1.1 response as bytes, for sockets node:http has handed over (CONNECT, parse
 * errors): nothing else can be answered on them, so the reply always closes the connection.
 */
export function rawResponse(context: ResponseContext, reply: Reply): Buffer {
  const { headers, body } = wireForm(context, { ...reply, headers: { ...reply.headers, Connection: 'close' } });
  const lines = [`HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  const bodyBytes = typeof body === 'string' ? Buffer.from(body) : (body ?? Buffer.alloc(0));
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bodyBytes]);
}

/**
 * The headers every response carries, the reply's own, and the body. A text body stays text:
 * node:http writes it after the head in one piece, with no Buffer copy of it in between.
 */
function wireForm(
  context: ResponseContext,
  reply: Reply,
): { headers: Record<string, string | number>; body: string | Buffer | undefined } {
  const headers: Record<string, string | number> = {
    ...(context.cacheControl === undefined ? {} : { 'Cache-Control': context.cacheControl }),
    'X-Content-Type-Options': 'nosniff',
    Server: 'Cerulean',
    'x-ms-request-id': context.requestId,
    'x-ms-version': context.version,
    Date: httpDate(),
    ...reply.headers,
  };
  if (context.clientRequestId !== undefined) headers['x-ms-client-request-id'] = context.clientRequestId;
  const { body } = reply;
  if (reply.stream !== undefined || reply.headers?.['Content-Length'] !== undefined) {
    // A streamed body, or a HEAD answering the length of the body a GET would have.
    // Or is chunked (a listing streamed as it is read: Get Page Ranges).
    const framed =
      reply.headers?.['Content-Length'] !== undefined || reply.headers?.['Transfer-Encoding'] === 'chunked';
    assert(body === undefined && framed, 'a streamed reply names its length');
  } else {
    headers['Content-Length'] =
      body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  }
  return { headers, body };
}

// The Date header has one-second resolution: made once a second, not once a response.
let dateSecond = -1;
let dateText = '';

function httpDate(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/**
 * An error answered to a HEAD: its status and x-ms-error-code. A HEAD answer carries no body
 * (RFC 9110), so it names no body type either: no Content-Type, Content-Length 0.
 */
export function headErrorReply(reply: Reply): Reply {
  const { 'Content-Type': _, ...headers } = reply.headers ?? {};
  return { status: reply.status, headers };
}

/** The reply for any thrown value: a StorageError as itself, anything else as a logged 500. */
export function errorReply(context: ResponseContext, error: unknown, extraHeaders?: Record<string, string>): Reply {
  const storageError = error instanceof StorageError ? error : new StorageError('InternalError');
  const time = new Date().toISOString().replace('Z', '0000Z');
  const trailer = `\nRequestId:${context.requestId}\nTime:${time}`;
  const headers = { 'x-ms-error-code': storageError.code, ...storageError.replyHeaders, ...extraHeaders };
  if (context.errorFormat.kind === 'xml') {
    return {
      status: storageError.status,
      headers: { ...headers, 'Content-Type': 'application/xml' },
      body: xmlError(storageError, `${xmlMessage(storageError)}${trailer}`),
    };
  }
  if (context.errorFormat.kind === 'datalake') {
    return {
      status: storageError.status,
      headers: { ...headers, 'Content-Type': 'application/json;charset=utf-8' },
      body: JSON.stringify({ error: { code: storageError.code, message: `${storageError.message}${trailer}` } }),
    };
  }
  return {
    status: storageError.status,
    headers: { ...headers, 'Content-Type': context.errorFormat.contentType },
    body: jsonError(storageError.code, `${storageError.message}${trailer}`),
  };
}

/** The message of an XML error body: the service's recorded wording where the error kept the default. */
function xmlMessage(error: StorageError): string {
  const recorded = xmlMessages[error.code];
  return recorded !== undefined && error.message === errorCodes[error.code].message ? recorded : error.message;
}

/**
 * `{"odata.error":…}` on one line; `text` may carry a batch index prefix (Azure REST:
 * performing-entity-group-transactions).
 */
export function jsonError(code: ErrorCode, text: string): string {
  return JSON.stringify({ 'odata.error': { code, message: { lang: 'en-US', value: text } } });
}

function xmlError(error: StorageError, text: string): string {
  const elements: (readonly [string, string])[] = [];
  if (error.authDetail !== undefined) elements.push(['AuthenticationErrorDetail', error.authDetail]);
  elements.push(...error.elements);
  const detail = elements.map(([name, value]) => `<${name}>${escapeXmlText(value)}</${name}>`).join('');
  const message = `<Message>${escapeXmlText(text)}</Message>`;
  return `<?xml version="1.0" encoding="utf-8"?><Error><Code>${error.code}</Code>${message}${detail}</Error>`;
}
