// What a layer above the front door (src/observe) may add to the request path: its own endpoints,
// a say in running each operation (throttling, fault injection) and hearing each answer (metrics).
// Defined here, implemented there, so that imports point down: observe knows http, not the reverse.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { StorageError } from '../errors.js';
import type { Reply } from './respond.js';
import type { RequestTarget } from './account-target.js';
import type { OperationName } from './service-definition.js';

export interface RequestHooks {
  /** Answers a request for Cerulean's own endpoints: paths starting with `/_`, which no account can have. */
  admin(request: IncomingMessage, target: RequestTarget): Promise<Reply>;
  /**
   * Runs an authorized operation; may delay or refuse it, or ask for the connection to be dropped
   * unanswered. `scope` names the table or queue it addresses, if any (computed on demand: a
   * batch's is in its body). `headers` tell who asks (the workload watch leaves out Cerulean's own tools).
   * `target`: the account, and the one object the request addresses when its service has a per-object
   * rate target (a blob).
   */
  run(
    operation: OperationName,
    scope: () => string | undefined,
    execute: () => Promise<Reply>,
    headers: IncomingHttpHeaders,
    target?: RunTarget,
  ): Promise<Reply | 'drop'>;
  /** Watches a streamed request body (blob content) as its handler reads it: returns the chunks to hand it. */
  watchBody?(operation: OperationName, chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer>;
  /** A request was answered (or dropped), `durationMs` after it arrived; 'Unknown' when no route matched. */
  answered(operation: OperationName, status: number | 'dropped', durationMs: number): void;
}

export interface RunTarget {
  readonly account: string;
  /** The blob a blob request addresses (`container/name`: no container name has a slash); else undefined. */
  readonly object: string | undefined;
}

/** The answer of an error-kind fault: the service's error, marked as injected (logged once, where injected). */
export class InjectedFault extends StorageError {
  constructor(kind: 'serverBusy' | 'operationTimedOut' | 'internalError') {
    super(kind === 'serverBusy' ? 'ServerBusy' : kind === 'operationTimedOut' ? 'OperationTimedOut' : 'InternalError');
  }
}
