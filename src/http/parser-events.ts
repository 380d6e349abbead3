// Requests node:http does not hand to the request listener. Left alone, node closes a CONNECT
// without a word, answers parse errors with a bare 400/431 and an unknown Expect with a bare 417;
// here each gets an Azure error body (Azure REST: status-and-error-codes2) and, where node has given up on the
// connection, a closed connection.
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { StorageError } from '../errors.js';
import { defaultErrorFormat, errorReply, rawResponse, responseContext } from './respond.js';
import type { ErrorFormat } from './service-definition.js';

/** `errorFormat`: the error bodies of the service this server answers for. */
export function answerParserEvents(
  server: Server,
  listener: RequestListener,
  errorFormat: ErrorFormat = defaultErrorFormat,
): void {
  // RFC 9110 §10.1.1 lets a server ignore an expectation it does not know; the request is served.
  server.on('checkExpectation', listener);
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const context = responseContext(request.headers, errorFormat);
    refuse(socket, rawResponse(context, errorReply(context, new StorageError('MethodNotAllowed'))));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // Not a malformed request but a slow one (headersTimeoutMs/requestTimeoutMs): node's own answer.
      refuse(socket, Buffer.from('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'));
      return;
    }
    const context = responseContext({}, errorFormat);
    refuse(socket, rawResponse(context, errorReply(context, parseFailure(error.code))));
  });
}

/** The Azure error for what llhttp could not parse. */
function parseFailure(code: string | undefined): StorageError {
  switch (code) {
    case 'HPE_INVALID_METHOD':
      return new StorageError('InvalidHttpVerb');
    case 'HPE_INVALID_URL':
      return new StorageError('RequestUrlFailedToParse');
    case 'HPE_HEADER_OVERFLOW':
      // 400 rather than node's 431, as HTTP.sys (the service's front end) answers oversized headers
      // (unverified for the Table service; no Azure error code exists for it).
      return new StorageError('InvalidHeaderValue', 'The request headers are larger than this server accepts (64 KiB).');
    default:
      return new StorageError('InvalidInput', `The request is not well-formed HTTP/1.1 (${code ?? 'unknown'}).`);
  }
}

/** Writes the whole answer, then closes: the parser has given up on this connection. */
function refuse(socket: Duplex, answer: Buffer): void {
  socket.once('finish', () => socket.destroy());
  socket.end(answer);
}

/** As node's own clientError fallback: never write into a response already under way. */
function responseStarted(socket: Duplex): boolean {
  const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
  return inFlight?.headersSent === true;
}
