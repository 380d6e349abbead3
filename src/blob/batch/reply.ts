// The answer to a Blob Batch (https://learn.microsoft.com/rest/api/storageservices/blob-batch):
// 202 with a multipart/mixed body, boundary `batchresponse_{guid}`, one part per subrequest in
// the docs' layout: `Content-Type: application/http`, its Content-ID, an empty line, its own
// status line, headers (x-ms-request-id, x-ms-version, …), an empty line, then its body (the
// error XML of a failure) and a line break. Pure: no I/O.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { errorCodes, xmlMessages, type ErrorCode } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import type { EmbeddedAnswer } from '../../http/service-definition.js';

const CRLF = '\r\n';

export interface AnsweredPart {
  readonly contentId: string | undefined;
  readonly answer: EmbeddedAnswer;
}

export function batchReply(parts: readonly AnsweredPart[]): Reply {
  assert(parts.length > 0, 'a batch answers at least one part');
  const boundary = `batchresponse_${randomUUID()}`;
  const chunks: Buffer[] = [];
  for (const part of parts) chunks.push(Buffer.from(`--${boundary}${CRLF}`, 'latin1'), ...partBytes(part));
  chunks.push(Buffer.from(`--${boundary}--${CRLF}`, 'latin1'));
  return {
    status: 202,
    headers: { 'Content-Type': `multipart/mixed; boundary=${boundary}` },
    body: Buffer.concat(chunks),
  };
}

function partBytes({ contentId, answer }: AnsweredPart): Buffer[] {
  let head = `Content-Type: application/http${CRLF}`;
  if (contentId !== undefined) head += `Content-ID: ${contentId}${CRLF}`;
  head += `${CRLF}HTTP/1.1 ${answer.status} ${reasonOf(answer)}${CRLF}`;
  const body = answer.body === undefined ? Buffer.alloc(0) : Buffer.from(answer.body);
  // The docs' order: the answer's own headers, the request id and version, then the body's length and type.
  const { 'Content-Type': type, ...headers } = answer.headers as Record<string, string>;
  if (body.length > 0) headers['Content-Length'] = String(body.length);
  if (type !== undefined) headers['Content-Type'] = type;
  for (const [name, value] of Object.entries(headers)) {
    assert(!/[\r\n]/.test(name + value), 'a header of a batch part holds no line break');
    head += `${name}: ${value}${CRLF}`;
  }
  head += CRLF;
  return body.length === 0 ? [Buffer.from(head, 'latin1')] : [Buffer.from(head, 'latin1'), body, Buffer.from(CRLF)];
}

/**
 * The service puts a failure's message in its status line ("HTTP/1.1 404 The specified blob does
 * not exist.", blob-batch's example); a success has the standard reason phrase.
 */
function reasonOf(answer: EmbeddedAnswer): string {
  const code = answer.headers['x-ms-error-code'];
  if (code !== undefined && code in errorCodes) {
    return xmlMessages[code as ErrorCode] ?? errorCodes[code as ErrorCode].message;
  }
  return STATUS_CODES[answer.status] ?? '';
}
