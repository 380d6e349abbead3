// Request bodies: read as bytes under a cap enforced while reading, decoded as UTF-8 once over
// the whole buffer so a character split across network chunks survives. Bodies nobody will use are
// read and dropped only up to a bound; past it the reply closes the connection instead.
import type { IncomingMessage } from 'node:http';
import { StorageError } from '../errors.js';
import { oversizeBodyReadBytesMax } from '../limits.js';

/**
 * The whole body, or 413 RequestBodyTooLarge. A body that is too large is not kept: it is read and
 * dropped up to `oversizeBodyReadBytesMax` in all, so that a client still sending can read the 413
 * instead of a reset connection; past that reading stops (BodyTooLargeToDrain: the reply closes).
 */
export async function readBody(request: IncomingMessage, bytesMax: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > oversizeBodyReadBytesMax) throw new BodyTooLargeToDrain();
  const chunks: Buffer[] = [];
  let size = 0;
  const ended = await consume(request, oversizeBodyReadBytesMax, Infinity, (chunk) => {
    size += chunk.length;
    if (size <= bytesMax) chunks.push(chunk);
  });
  if (!ended) throw new BodyTooLargeToDrain();
  if (size > bytesMax) throw new StorageError('RequestBodyTooLarge');
  return Buffer.concat(chunks, size);
}

/**
 * The body as it arrives, chunk by chunk, for operations that stream it to storage (blob content)
 * and never hold it whole. Stopping early leaves the rest unread (the front door then drains a
 * little or closes the connection); a client that goes away before the end is BodyAborted.
 */
export async function* bodyChunks(request: IncomingMessage): AsyncGenerator<Buffer, void, undefined> {
  for (;;) {
    const chunk = request.read() as Buffer | null;
    if (chunk !== null) {
      yield chunk;
      continue;
    }
    if (request.readableEnded || isEmptyAndReceived(request)) return;
    if (request.destroyed) throw new BodyAborted();
    await nextBodyEvent(request);
  }
}

/** Resolves at the next 'readable' or 'end'; rejects with BodyAborted when the client goes away first. */
function nextBodyEvent(request: IncomingMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    const onReady = (): void => finish(undefined);
    const onClose = (): void => finish(request.readableEnded ? undefined : new BodyAborted());
    function finish(error: BodyAborted | undefined): void {
      request.off('readable', onReady).off('end', onReady).off('close', onClose).off('error', onClose);
      if (error === undefined) resolve();
      else reject(error);
    }
    request.once('readable', onReady).once('end', onReady).once('close', onClose).once('error', onClose);
  });
}

/** The client went away before the body's end: nothing can be answered, and nothing is kept. */
export class BodyAborted extends StorageError {
  constructor() {
    super('InvalidInput', 'The request body ended before it was complete.');
  }
}

/** 413 for a body too large even to read and drop: the reply must close the connection. */
export class BodyTooLargeToDrain extends StorageError {
  constructor() {
    super('RequestBodyTooLarge');
  }
}

/**
 * Reads and drops what is left of a body the reply does not need, up to `bytesMax` and `waitMs`.
 * True when the body ended (the connection can carry the next request); false when it did not, and
 * then reading has stopped: the reply must close the connection.
 */
export function discardBody(request: IncomingMessage, bytesMax: number, waitMs: number): Promise<boolean> {
  return consume(request, bytesMax, waitMs, () => undefined);
}

/**
 * A message received to its end with nothing buffered has an empty body (a GET, a DELETE): no need
 * to wait for its 'end' event. Node reads it to that end itself when the response finishes.
 */
function isEmptyAndReceived(request: IncomingMessage): boolean {
  return request.complete && request.readableLength === 0 && !request.readableFlowing;
}

/**
 * Feeds the body's chunks to `take` until it ends (true) or more than `bytesMax` bytes came, the
 * wait ran out or the client went away (false; the stream is left paused). Events, not `for await`:
 * leaving a `for await` early destroys the request and with it the socket the reply needs.
 */
function consume(
  request: IncomingMessage,
  bytesMax: number,
  waitMs: number,
  take: (chunk: Buffer) => void,
): Promise<boolean> {
  if (request.readableEnded || isEmptyAndReceived(request)) return Promise.resolve(true);
  return new Promise((resolve) => {
    let size = 0;
    const timer = Number.isFinite(waitMs) ? setTimeout(() => finish(false), waitMs) : undefined;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > bytesMax) finish(false);
      else take(chunk);
    };
    const onEnd = (): void => finish(true);
    const onClose = (): void => finish(false);
    function finish(ended: boolean): void {
      clearTimeout(timer);
      request.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      if (!ended) request.pause();
      resolve(ended);
    }
    request.on('data', onData).once('end', onEnd).once('close', onClose).once('error', onClose);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict UTF-8 (a leading BOM is dropped); malformed bytes are 400 InvalidInput. */
export function decodeUtf8(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new StorageError('InvalidInput', 'The request body is not valid UTF-8.');
  }
}
