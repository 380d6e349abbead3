// What a layer above the front door (src/observe) may add to the request path: its own endpoints,
// interceptors around each operation (throttling, fault injection, blob traffic) and hearing each
// answer (metrics).
// Defined here, implemented there, so that imports point down: observe knows http, not the reverse.
import type { IncomingMessage } from 'node:http';
import { StorageError } from '../errors.js';
import type { Reply } from './respond.js';
import type { RequestTarget } from './account-target.js';
import type { OperationInterceptor } from './interceptors.js';
import type { OperationName } from './service-definition.js';

export interface RequestHooks {
  /** Answers a request for Cerulean's own endpoints: paths starting with `/_`, which no account can have. */
  admin(request: IncomingMessage, target: RequestTarget): Promise<Reply>;
  /**
   * Around each authorized operation, the first the outermost: they may delay or refuse it, watch its
   * body and its reply, or ask for the connection to be dropped unanswered (interceptors.ts).
   */
  readonly operations: readonly OperationInterceptor[];
  /** A request was answered (or dropped), `durationMs` after it arrived; 'Unknown' when no route matched. */
  answered(operation: OperationName, status: number | 'dropped', durationMs: number): void;
}

/** The answer of an error-kind fault: the service's error, marked as injected (logged once, where injected). */
export class InjectedFault extends StorageError {
  constructor(kind: 'serverBusy' | 'operationTimedOut' | 'internalError') {
    super(kind === 'serverBusy' ? 'ServerBusy' : kind === 'operationTimedOut' ? 'OperationTimedOut' : 'InternalError');
  }
}
