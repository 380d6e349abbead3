// A Blob Batch body (https://learn.microsoft.com/rest/api/storageservices/blob-batch): a
// multipart/mixed entity whose parts are each `Content-Type: application/http`, a Content-ID and
// one embedded request (request line, its own headers, an empty line). Pure: no I/O.
import { invalidHeaderValue, StorageError } from '../../errors.js';
import type { EmbeddedRequest } from '../../http/service-definition.js';
import { headersBytesMax } from '../../limits.js';
import {
  bodyParts,
  isValidBoundary,
  MultipartSyntaxError,
  parseHeaderBlock,
  parseHttpRequest,
  parseMediaType,
} from '../../wire/multipart.js';
import { batchPartsMax } from '../limits.js';

export interface BatchPart extends EmbeddedRequest {
  /** The part's Content-ID, echoed on its answer; undefined when it names none. */
  readonly contentId: string | undefined;
}

/**
 * The batch's parts in order. A Content-Type that is not multipart/mixed with a valid boundary:
 * 400 InvalidHeaderValue (chosen; the docs require it, the code is unverified). Malformed framing
 * and a batch of no parts: 400 InvalidInput (an empty batch's code is the C++ SDK's recorded
 * test). More than 256 parts: 400 ExceedsMaxBatchRequestCount (the .NET SDK's recorded test),
 * found without reading past the 257th part.
 */
export function parseBatchBody(contentType: string | undefined, body: Buffer): BatchPart[] {
  const mediaType = parseMediaType(contentType ?? '');
  const boundary = mediaType?.essence === 'multipart/mixed' ? mediaType.parameters.get('boundary') : undefined;
  if (boundary === undefined || !isValidBoundary(boundary)) throw invalidHeaderValue('Content-Type', contentType ?? '');
  const parts: BatchPart[] = [];
  for (const range of bodyParts(body, { start: 0, end: body.length }, boundary)) {
    if (parts.length === batchPartsMax) throw new StorageError('ExceedsMaxBatchRequestCount');
    const head = parseHeaderBlock(body, range, headersBytesMax);
    const type = parseMediaType(head.headers.get('content-type') ?? '');
    if (type?.essence !== 'application/http') {
      throw new MultipartSyntaxError(range.start, 'a batch part is not Content-Type: application/http');
    }
    const request = parseHttpRequest(body, { start: head.bodyStart, end: range.end });
    parts.push({ ...request, contentId: head.headers.get('content-id') });
  }
  if (parts.length === 0) throw new StorageError('InvalidInput', 'The batch holds no subrequests.');
  return parts;
}
