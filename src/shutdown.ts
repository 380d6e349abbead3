// Closing a listener gracefully: requests in flight finish, then every connection ends, including
// keep-alive ones. Node's server.close() stops accepting and ends idle connections, but a
// keep-alive connection whose request was in flight gets `Connection: keep-alive` on its response
// and then stays open, so close() never completed and the process ended only when its shutdown
// grace ran out (exit 1), with whatever the client sent next on it reset.
import type { Server, ServerResponse } from 'node:http';

export interface GracefulServer {
  /** Stops accepting; resolves once requests in flight are answered and all connections are closed. */
  close(): Promise<void>;
}

/** Call right after creating `server`, before it listens: it tracks the responses in flight. */
export function gracefulClose(server: Server): GracefulServer {
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  // The response says so before its head goes out (Node then ends the connection after it); a
  // head already sent promised keep-alive, so the connection is closed once it is idle.
  const endConnectionAfter = (response: ServerResponse): void => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
    response.once('close', () => server.closeIdleConnections());
  };
  server.on('request', (_request, response: ServerResponse) => {
    if (closing) return endConnectionAfter(response);
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        for (const response of inFlight) endConnectionAfter(response);
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
