// Request bodies: read as bytes under a cap enforced while reading, decoded as UTF-8 once over
// the whole buffer so a character split across network chunks survives.
import type { IncomingMessage } from 'node:http';
import { TableError } from '../errors.js';
import { bodyDrainBytesMax } from '../limits.js';

/**
 * The whole body, or 413 RequestBodyTooLarge. A body that is too large is not kept: up to
 * `bodyDrainBytesMax` more is read and dropped so that the client, still sending, can read the 413
 * instead of a reset connection; past that the connection is closed (BodyTooLargeToDrain).
 */
export async function readBody(request: IncomingMessage, bytesMax: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > bytesMax + bodyDrainBytesMax) throw new BodyTooLargeToDrain();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > bytesMax + bodyDrainBytesMax) throw new BodyTooLargeToDrain();
    if (size <= bytesMax) chunks.push(chunk);
  }
  if (size > bytesMax) throw new TableError('RequestBodyTooLarge');
  return Buffer.concat(chunks, size);
}

/** 413 for a body too large even to read and drop: the reply must close the connection. */
export class BodyTooLargeToDrain extends TableError {
  constructor() {
    super('RequestBodyTooLarge');
  }
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
