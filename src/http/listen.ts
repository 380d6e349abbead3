// Opening a listener for the server process: a port that cannot be had (in use, not permitted, an
// address not on this machine) ends the process with one line naming the port and the flag that
// chose it, instead of Node's unhandled 'error' event and its stack.
import type { Server } from 'node:net';

/** Why a listen failed, in words, for the errno codes a user can act on. */
const listenReasons: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine',
};

/** The one line a failed listen prints: `cannot listen on HOST:PORT (--flag): reason`. */
export function listenFailure(error: NodeJS.ErrnoException, host: string, port: number, flag: string): string {
  const reason = listenReasons[error.code ?? ''] ?? error.message;
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return `cannot listen on ${address} (${flag}): ${reason}; choose another with ${flag}`;
}

/**
 * `server.listen(port, host)`, calling `onListening` once it listens; a failure to listen prints
 * listenFailure on stderr and exits with status 1. `flag` names the option that chose the port
 * (`--port`, or that of another listener of the same process).
 */
export function listenOrExit(server: Server, port: number, host: string, flag: string, onListening: () => void): void {
  const failed = (error: NodeJS.ErrnoException): void => {
    process.stderr.write(`${listenFailure(error, host, port, flag)}\n`);
    process.exit(1);
  };
  server.once('error', failed);
  server.listen(port, host, () => {
    server.removeListener('error', failed);
    onListening();
  });
}
