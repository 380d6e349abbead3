// Raw $batch requests laid out byte for byte as the JS and Python SDKs write them (Azure REST:
// performing-entity-group-transactions),
// and a reader for multipart batch responses (Azure REST: performing-entity-group-transactions). Written independently
// of
// src/table/wire/batch.ts, so a wrong server codec cannot agree with a wrong test codec.
import { randomUUID } from 'node:crypto';
import { devPath, send, type RawRequest, type RawResponse } from './http.js';
import { devAccount } from './server.js';

const CRLF = '\r\n';

/** Whose byte layout to copy (the table in Azure REST: performing-entity-group-transactions). */
export type ClientStyle = 'js' | 'python';

/** One operation of a change set, or the single query of a query batch. */
export interface SubRequest {
  method: string;
  /** Exactly as written on the request line: absolute (`http://…/devstoreaccount1/t(…)`) or origin-form. */
  url: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON. */
  body?: object | string;
}

export interface BatchBody {
  /** The outer Content-Type, carrying the batch boundary. */
  contentType: string;
  body: Buffer;
}

export type EntityBody = { PartitionKey: string; RowKey: string } & Record<string, unknown>;

/** `http://127.0.0.1:PORT/devstoreaccount1/<resource>`, as both SDKs write request lines. */
export function absoluteUrl(port: number, resource: string): string {
  return `http://127.0.0.1:${port}/${devAccount}/${resource}`;
}

/** `table(PartitionKey='pk',RowKey='rk')` with quotes doubled and percent-encoded as the JS SDK does. */
export function entityResource(table: string, pk: string, rk: string): string {
  const literal = (key: string) => encodeURIComponent(key.replaceAll("'", "''"));
  return `${table}(PartitionKey='${literal(pk)}',RowKey='${literal(rk)}')`;
}

/** Sub-requests as the SDKs issue them; `url` is a table URL for insert, an entity URL otherwise. */
export const op = {
  insert: (url: string, entity: EntityBody): SubRequest => ({
    method: 'POST',
    url,
    headers: { Prefer: 'return-no-content' },
    body: entity,
  }),
  /** Insert Or Replace (PUT) / Insert Or Merge (MERGE): no If-Match. */
  upsert: (url: string, mode: 'Merge' | 'Replace', entity: EntityBody): SubRequest => ({
    method: mode === 'Merge' ? 'MERGE' : 'PUT',
    url,
    body: entity,
  }),
  /** Update (PUT) / Merge (MERGE) with If-Match (`*` unless an ETag is given). */
  update: (url: string, mode: 'Merge' | 'Replace', entity: EntityBody, etag = '*'): SubRequest => ({
    method: mode === 'Merge' ? 'MERGE' : 'PUT',
    url,
    headers: { 'If-Match': etag },
    body: entity,
  }),
  delete: (url: string, etag = '*'): SubRequest => ({ method: 'DELETE', url, headers: { 'If-Match': etag } }),
  get: (url: string): SubRequest => ({
    method: 'GET',
    url,
    headers: { Accept: 'application/json;odata=minimalmetadata' },
  }),
};

function bodyText(body: SubRequest['body']): string | undefined {
  if (body === undefined) return undefined;
  return typeof body === 'string' ? body : JSON.stringify(body);
}

function headerLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}${CRLF}`)
    .join('');
}

/** JS: lower-case part headers, no Content-ID, no x-ms-version, an extra CRLF before the body. */
function jsPart(request: SubRequest): string {
  const body = bodyText(request.body);
  const headers = {
    ...(body !== undefined ? { 'Content-Type': 'application/json;odata=nometadata' } : {}),
    Accept: 'application/json;odata=minimalmetadata',
    DataServiceVersion: '3.0',
    ...request.headers,
  };
  return (
    `content-type: application/http${CRLF}content-transfer-encoding: binary${CRLF}${CRLF}` +
    `${request.method} ${request.url} HTTP/1.1${CRLF}${headerLines(headers)}${CRLF}${CRLF}${body ?? ''}`
  );
}

/**
 * Python: capitalised part headers, Content-ID 0…n-1, x-ms-version and dates inside, body right after the empty line.
 */
function pythonPart(request: SubRequest, index: number): string {
  const body = bodyText(request.body);
  const date = new Date().toUTCString();
  const headers = {
    'x-ms-version': '2019-02-02',
    DataServiceVersion: '3.0',
    ...request.headers,
    ...(body !== undefined ? { 'Content-Type': 'application/json;odata=nometadata' } : {}),
    Accept: 'application/json;odata=minimalmetadata',
    ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}),
    'x-ms-date': date,
    Date: date,
  };
  return (
    `Content-Type: application/http${CRLF}Content-Transfer-Encoding: binary${CRLF}Content-ID: ${index}${CRLF}${CRLF}` +
    `${request.method} ${request.url} HTTP/1.1${CRLF}${headerLines(headers)}${CRLF}${body ?? ''}`
  );
}

/** A batch holding one change set with `requests` in order. */
export function changesetBody(requests: readonly SubRequest[], style: ClientStyle = 'js'): BatchBody {
  const batch = `batch_${randomUUID()}`;
  const changeset = `changeset_${randomUUID()}`;
  const parts = requests.map((request, index) => (style === 'js' ? jsPart(request) : pythonPart(request, index)));
  const header =
    style === 'js'
      ? `content-type: multipart/mixed; boundary=${changeset}${CRLF}${CRLF}${CRLF}`
      : `Content-Type: multipart/mixed; boundary=${changeset}${CRLF}${CRLF}`;
  const close = style === 'js' ? `--${changeset}--${CRLF}` : `--${changeset}--${CRLF}${CRLF}`;
  const text =
    `--${batch}${CRLF}${header}` +
    parts.map((part) => `--${changeset}${CRLF}${part}${CRLF}`).join('') +
    `${close}--${batch}--${CRLF}`;
  return { contentType: `multipart/mixed; boundary=${batch}`, body: Buffer.from(text, 'utf8') };
}

/** A batch holding one GET directly, without a change set (Azure REST: performing-entity-group-transactions). */
export function queryBody(request: SubRequest): BatchBody {
  const batch = `batch_${randomUUID()}`;
  const text =
    `--${batch}${CRLF}Content-Type: application/http${CRLF}Content-Transfer-Encoding: binary${CRLF}${CRLF}` +
    `${request.method} ${request.url} HTTP/1.1${CRLF}${headerLines(request.headers ?? {})}${CRLF}` +
    `--${batch}--${CRLF}`;
  return { contentType: `multipart/mixed; boundary=${batch}`, body: Buffer.from(text, 'utf8') };
}

/** POSTs a batch body to `/devstoreaccount1/$batch` with the JS SDK's outer headers, signed Shared Key Lite. */
export function postBatch(port: number, batch: BatchBody, extra: Partial<RawRequest> = {}): Promise<RawResponse> {
  return send(port, {
    method: 'POST',
    path: devPath('$batch'),
    body: batch.body,
    ...extra,
    headers: {
      'Content-Type': batch.contentType,
      Accept: 'application/json',
      DataServiceVersion: '3.0;',
      MaxDataServiceVersion: '3.0;NetFx',
      ...extra.headers,
    },
  });
}

/** One HTTP response inside a batch response. */
export interface ResponsePart {
  /** E.g. `HTTP/1.1 204 No Content`. */
  statusLine: string;
  status: number;
  /** Header lines exactly as written, in order. */
  headerLines: string[];
  /** Everything after the empty line that ends the headers, up to the next delimiter's CRLF. */
  body: string;
  /** The value of the first header of that name, any case. */
  header(name: string): string | undefined;
}

export interface BatchResponse {
  batchBoundary: string;
  /** Undefined for a query batch, whose part sits directly in the batch. */
  changesetBoundary: string | undefined;
  parts: ResponsePart[];
}

/** Parts between `--boundary` delimiters; the CRLF before a delimiter belongs to it. Throws on bad framing. */
function splitParts(text: string, boundary: string): string[] {
  const pieces = text.split(`--${boundary}`);
  const [preamble, ...rest] = pieces;
  const close = rest.pop();
  if (preamble !== '' || close === undefined || !close.startsWith('--')) {
    throw new Error(`not a multipart body with boundary ${boundary}:\n${text.slice(0, 800)}`);
  }
  return rest.map((piece) => {
    if (!piece.startsWith(CRLF) || !piece.endsWith(CRLF))
      throw new Error(`part not framed by CRLFs: ${JSON.stringify(piece)}`);
    return piece.slice(CRLF.length, -CRLF.length);
  });
}

function splitHead(text: string): { lines: string[]; rest: string } {
  const end = text.indexOf(CRLF + CRLF);
  if (end < 0) throw new Error(`no empty line after the headers: ${JSON.stringify(text)}`);
  return { lines: text.slice(0, end).split(CRLF), rest: text.slice(end + 2 * CRLF.length) };
}

function headerLookup(lines: readonly string[]): (name: string) => string | undefined {
  return (name) => {
    const line = lines.find((l) => l.slice(0, l.indexOf(':')).toLowerCase() === name.toLowerCase());
    return line?.slice(line.indexOf(':') + 1).trim();
  };
}

function boundaryOf(contentType: string | undefined): string {
  const match = /^multipart\/mixed; boundary=(\S+)$/.exec(contentType ?? '');
  if (match === null) throw new Error(`not a multipart/mixed Content-Type: ${contentType}`);
  return match[1]!;
}

/** An `application/http` part: MIME headers, then the HTTP response. */
function readHttpPart(text: string): ResponsePart {
  const mime = splitHead(text);
  const { lines, rest } = splitHead(mime.rest);
  const [statusLine = '', ...fields] = lines;
  return {
    statusLine,
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? NaN),
    headerLines: fields,
    body: rest,
    header: headerLookup(fields),
  };
}

/** Reads a 202 batch response; throws with the text if its framing is off. */
export function readBatchResponse(res: RawResponse): BatchResponse {
  const batchBoundary = boundaryOf(res.headers['content-type']);
  const [only, ...others] = splitParts(res.text, batchBoundary);
  if (only === undefined || others.length > 0) throw new Error(`expected exactly one batch part:\n${res.text}`);
  const head = splitHead(only);
  const contentType = headerLookup(head.lines)('content-type');
  if (contentType?.startsWith('application/http')) {
    return { batchBoundary, changesetBoundary: undefined, parts: [readHttpPart(only)] };
  }
  const changesetBoundary = boundaryOf(contentType);
  return { batchBoundary, changesetBoundary, parts: splitParts(head.rest, changesetBoundary).map(readHttpPart) };
}

/** `odata.error` of an error part's one-line JSON body. */
export function partError(part: ResponsePart): { code: string; message: { lang: string; value: string } } {
  return JSON.parse(part.body)['odata.error'];
}
