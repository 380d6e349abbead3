// Closing a connection while the client is still sending its request body. The reply goes out,
// then the server half-closes (FIN) and waits a little before it closes. Closing at once, with
// bytes of the body unread, makes the kernel answer them with a reset, which can wipe the reply
// from the client's receive buffer before the client has read it: the client sees ECONNRESET
// instead of its 403 or 503 (the "lingering close" of RFC 9112 §9.6). While it waits the server
// reads and drops at most lingerBytesMax more, so a client without credentials still cannot make
// it read the body; a client that closes its side ends the wait at once.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { lingerBytesMax, lingerMs } from '../limits.js';

/** Makes node:http's close of `socket` after this reply a lingering one, if `request`'s body is unread. */
export function lingerAfterReply(request: IncomingMessage, socket: Socket | null): void {
  if (socket === null || request.complete) return;
  // node:http closes a connection after a `Connection: close` reply with destroySoon().
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    socket.once('close', () => clearTimeout(timer));
    let droppedBytes = 0;
    request.on('data', (chunk: Buffer) => {
      droppedBytes += chunk.length;
      if (droppedBytes > lingerBytesMax) request.pause();
    });
    request.resume();
  };
}
