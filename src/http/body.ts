// Request bodies: read as bytes under a cap enforced while reading, decoded as UTF-8 once over
// the whole buffer so a character split across network chunks survives.
import type { IncomingMessage } from 'node:http';
import { TableError } from '../errors.js';

/** The whole body, or 413 RequestBodyTooLarge as soon as it is known to exceed `bytesMax`. */
export async function readBody(request: IncomingMessage, bytesMax: number): Promise<Buffer> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > bytesMax) throw new TableError('RequestBodyTooLarge');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > bytesMax) throw new TableError('RequestBodyTooLarge');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 (a leading BOM is dropped); malformed bytes are 400 InvalidInput. */
export function decodeUtf8(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new TableError('InvalidInput', 'The request body is not valid UTF-8.');
  }
}
