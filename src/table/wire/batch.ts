// $batch entity group transactions (Azure REST: performing-entity-group-transactions): reads the multipart request into
// operations and
// writes the multipart response byte-exactly. Pure: no I/O. Framing lives in src/wire/multipart.ts; this
// file knows the batch's shape: one change set of 1-100 operations, or one query.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BatchOperationError, StorageError } from '../../errors.js';
import { batchOperationsMax, bodyBytesMax, headersBytesMax } from '../../limits.js';
import {
  type ByteRange,
  type HeaderBlock,
  type MediaType,
  MultipartSyntaxError,
  bodyParts,
  isValidBoundary,
  parseHeaderBlock,
  parseHttpRequest,
  parseMediaType,
} from '../../wire/multipart.js';

export interface BatchOperationRequest {
  /** Request-line method, upper-case (POST, PUT, MERGE, PATCH, DELETE, GET). */
  readonly method: string;
  /** As written: absolute (`http://host/account/t(...)`) or origin-form (`/account/t(...)`). */
  readonly url: string;
  /** The sub-request's own headers; lower-case names. */
  readonly headers: ReadonlyMap<string, string>;
  /** Payload with the surrounding CR/LF/space padding trimmed (the JS SDK adds CRLFs). */
  readonly body: Buffer;
  /** From the part's MIME headers, else from the sub-request headers. */
  readonly contentId: string | undefined;
}

export interface BatchOperationResponse {
  readonly status: number;
  /** Written in this order, after the status line and Content-ID. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** One-line JSON text (a 201 entity, a query result, or the `"value":"<index>:…"` error). */
  readonly body?: string;
  /** Echo of the request part's Content-ID. */
  readonly contentId?: string;
}

/** Where batch failures were defined; the service raises them too, so they live with the errors. */
export { BatchOperationError };

const identityTransferEncodings = new Set(['binary', '8bit', '7bit']);

/**
 * Parses a $batch body. `contentType` is the outer Content-Type header (the boundary comes from it).
 * Returns the change set's operations in order, or a single GET when the batch is a query (the
 * only case in which GET appears). Malformed input throws StorageError InvalidInput
 * (a MultipartSyntaxError carrying the byte offset); more than batchOperationsMax operations
 * throws BatchOperationError for index batchOperationsMax - 1.
 */
export function parseBatchRequest(contentType: string | undefined, body: Buffer): BatchOperationRequest[] {
  if (body.length > bodyBytesMax) throw new StorageError('RequestBodyTooLarge');
  const batchBoundary = mixedBoundary(parseMediaType(contentType ?? ''));
  if (batchBoundary === undefined) {
    throw new StorageError('InvalidInput', 'The $batch Content-Type must be multipart/mixed with a valid boundary.');
  }
  // Azure REST: performing-entity-group-transactions: the batch holds exactly one part, a change set or a query.
  const batchPart = onlyPart(body, { start: 0, end: body.length }, batchBoundary);
  const part = parseHeaderBlock(body, batchPart, headersBytesMax);
  const mediaType = partMediaType(part, batchPart.start);
  if (mediaType.essence === 'multipart/mixed') {
    const changesetBoundary = mixedBoundary(mediaType);
    if (changesetBoundary === undefined) throw syntaxError(batchPart.start, 'the change set has no valid boundary');
    return parseChangeset(body, { start: part.bodyStart, end: batchPart.end }, changesetBoundary);
  }
  const query = parseOperation(body, batchPart, part);
  if (query.method !== 'GET') throw syntaxError(batchPart.start, 'a write operation must be inside a change set');
  return [query];
}

function mixedBoundary(mediaType: MediaType | undefined): string | undefined {
  if (mediaType?.essence !== 'multipart/mixed') return undefined;
  const boundary = mediaType.parameters.get('boundary');
  return boundary !== undefined && isValidBoundary(boundary) ? boundary : undefined;
}

function onlyPart(input: Buffer, range: ByteRange, boundary: string): ByteRange {
  const parts = bodyParts(input, range, boundary);
  const first = parts.next();
  if (first.done === true) throw syntaxError(range.start, 'the batch holds neither a change set nor a query');
  const second = parts.next();
  if (second.done !== true) throw syntaxError(second.value.start, 'a batch holds only one change set or query');
  return first.value;
}

function parseChangeset(input: Buffer, range: ByteRange, boundary: string): BatchOperationRequest[] {
  const operations: BatchOperationRequest[] = [];
  for (const partRange of bodyParts(input, range, boundary)) {
    if (operations.length === batchOperationsMax) {
      // The service was seen naming the last allowed index (Azure REST: performing-entity-group-transactions,
      // unverified).
      throw new BatchOperationError(
        batchOperationsMax - 1,
        'InvalidInput',
        `The batch request operation exceeds the maximum ${batchOperationsMax} changes per change set.`,
      );
    }
    const operation = parseOperation(input, partRange, parseHeaderBlock(input, partRange, headersBytesMax));
    if (operation.method === 'GET') throw syntaxError(partRange.start, 'a query cannot be part of a change set');
    operations.push(operation);
  }
  if (operations.length === 0) throw syntaxError(range.start, 'the change set holds no operations');
  return operations;
}

/** One `application/http` part: its MIME headers are `part`, the HTTP request follows them. */
function parseOperation(input: Buffer, partRange: ByteRange, part: HeaderBlock): BatchOperationRequest {
  const mediaType = partMediaType(part, partRange.start);
  if (mediaType.essence !== 'application/http') {
    throw syntaxError(partRange.start, `an operation part has Content-Type ${mediaType.essence}, not application/http`);
  }
  const encoding = part.headers.get('content-transfer-encoding');
  if (encoding !== undefined && !identityTransferEncodings.has(encoding.toLowerCase())) {
    throw syntaxError(partRange.start, `Content-Transfer-Encoding ${encoding} is not supported`);
  }
  const request = parseHttpRequest(input, { start: part.bodyStart, end: partRange.end });
  return { ...request, contentId: part.headers.get('content-id') ?? request.headers.get('content-id') };
}

function partMediaType(part: HeaderBlock, offset: number): MediaType {
  const mediaType = parseMediaType(part.headers.get('content-type') ?? '');
  if (mediaType === undefined) throw syntaxError(offset, 'a part has no valid Content-Type');
  return mediaType;
}

function syntaxError(offset: number, reason: string): MultipartSyntaxError {
  return new MultipartSyntaxError(offset, reason);
}

const CRLF = '\r\n';
const httpPartHeaders = `Content-Type: application/http${CRLF}Content-Transfer-Encoding: binary${CRLF}${CRLF}`;

/**
 * Writes the 202 body (Azure REST: performing-entity-group-transactions): a change set with one part per response (on
 * failure
 * the caller passes only the failing operation's response), or for a query batch the single part
 * directly inside the batch. Returns the outer Content-Type and the body bytes.
 */
export function serializeBatchResponse(
  responses: readonly BatchOperationResponse[],
  options: { changeset: boolean },
): { contentType: string; body: Buffer } {
  assert(responses.length > 0, 'a batch response holds at least one part');
  const batchBoundary = `batchresponse_${randomUUID()}`;
  const parts = responses.map(httpResponsePart);
  let text: string;
  if (options.changeset) {
    const changesetBoundary = `changesetresponse_${randomUUID()}`;
    text =
      `--${batchBoundary}${CRLF}Content-Type: multipart/mixed; boundary=${changesetBoundary}${CRLF}${CRLF}` +
      `${multipartText(changesetBoundary, parts)}${CRLF}--${batchBoundary}--${CRLF}`;
  } else {
    assert(responses.length === 1, 'a query batch is answered with exactly one part');
    text = `${multipartText(batchBoundary, parts)}${CRLF}`;
  }
  return { contentType: `multipart/mixed; boundary=${batchBoundary}`, body: Buffer.from(text, 'utf8') };
}

/** Each part is followed by the CRLF that belongs to the next delimiter, then the close delimiter. */
function multipartText(boundary: string, parts: readonly string[]): string {
  return parts.map((part) => `--${boundary}${CRLF}${part}${CRLF}`).join('') + `--${boundary}--`;
}

function httpResponsePart(response: BatchOperationResponse): string {
  // The docs put Content-ID right after the status line (Azure REST: performing-entity-group-transactions).
  const fields: (readonly [string, string])[] =
    response.contentId === undefined ? [] : [['Content-ID', response.contentId]];
  fields.push(...response.headers);
  let text = `${httpPartHeaders}HTTP/1.1 ${response.status} ${statusReason(response.status)}${CRLF}`;
  let fieldText = '';
  for (const [name, value] of fields) fieldText += `${name}: ${value}${CRLF}`;
  // One check for all fields: a line break inside a name or value adds a line.
  assert(countLines(fieldText) === fields.length, 'header names and values must not contain a line break');
  text += fieldText;
  assert(
    response.body === undefined || !/[\r\n]/.test(response.body),
    'part bodies are one line (Azure REST: performing-entity-group-transactions)',
  );
  return `${text}${CRLF}${response.body ?? ''}`;
}

function countLines(text: string): number {
  return Math.max(count(text, '\n'), count(text, '\r'));
}

function count(text: string, character: string): number {
  let found = 0;
  for (let at = text.indexOf(character); at !== -1; at = text.indexOf(character, at + 1)) found++;
  return found;
}

const reasonPhrases: ReadonlyMap<number, string> = new Map([
  [200, 'OK'],
  [201, 'Created'],
  [202, 'Accepted'],
  [204, 'No Content'],
  [400, 'Bad Request'],
  [401, 'Unauthorized'],
  [403, 'Forbidden'],
  [404, 'Not Found'],
  [405, 'Method Not Allowed'],
  [409, 'Conflict'],
  [411, 'Length Required'],
  [412, 'Precondition Failed'],
  [413, 'Request Entity Too Large'],
  [415, 'Unsupported Media Type'],
  [500, 'Internal Server Error'],
  [501, 'Not Implemented'],
  [503, 'Service Unavailable'],
]);

/** Reason phrase for a status line (`No Content`, `Created`, …); empty for codes the service never uses. */
export function statusReason(status: number): string {
  return reasonPhrases.get(status) ?? '';
}
