// The interceptors observation puts around each operation the front door runs (http/interceptors.ts),
// outermost first: Cerulean's own tools' requests marked as theirs, faults injected by the rules,
// a blob's request throttled against its blob's target and watched, and blob content counted as it
// moves.
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from '../errors.js';
import { InjectedFault } from '../http/hooks.js';
import type { Operation, OperationInterceptor, RunOperation } from '../http/interceptors.js';
import type { Logger } from '../http/log.js';
import type { Reply } from '../http/respond.js';
import { countedChunks, countedReply } from './blob-traffic.js';
import type { BlobWatch } from './blob-watch.js';
import type { FaultPlan } from './faults.js';
import type { Metrics } from './metrics.js';
import type { Throttle } from './throttle.js';
import { runAsToolWhen } from './tool-traffic.js';

/** Runs a request of Cerulean's own tools marked as theirs (tool-traffic.ts). */
export const toolTraffic: OperationInterceptor = (next) => (operation) =>
  runAsToolWhen(operation.headers, () => next(operation));

/** Applies the fault (if any) the rules pick for the operation; without rules, nothing stands between. */
export function injectedFaults(faults: FaultPlan, metrics: Metrics | undefined, log: Logger): OperationInterceptor {
  return (next) => async (operation) => {
    if (faults.empty) return next(operation);
    let known: { table: string | undefined } | undefined;
    const table = (): string | undefined => (known ??= { table: operation.scope() }).table;
    const fault = faults.pick(operation.name, table);
    if (fault === undefined) return next(operation);
    metrics?.faultInjected(fault.kind, operation.name);
    const latency = fault.kind === 'latency' ? ` ${fault.latencyMs} ms` : '';
    const where = table() === undefined ? '' : ` ${table()}`;
    // One line per fault: the front door does not log the failure again (InjectedFault).
    const line = `fault injected: ${fault.kind}${latency} on ${operation.name}${where} (rule ${fault.rule})`;
    if (fault.kind === 'latency') log.info(line);
    else log.warn(line);
    switch (fault.kind) {
      case 'latency':
        await sleep(fault.latencyMs);
        return next(operation);
      case 'connectionReset':
        return 'drop';
      case 'answerLost':
        // The operation runs to the end (a write is durable), then the answer is lost.
        await next(operation).catch(() => undefined);
        return 'drop';
      default:
        throw new InjectedFault(fault.kind);
    }
  };
}

export interface BlobObservers {
  readonly throttle: Throttle | undefined;
  readonly blobs: BlobWatch | undefined;
  readonly metrics: Metrics | undefined;
}

/**
 * A blob request's operation (one with an `object`): admitted by the throttle against its blob's
 * target (inside any fault: a fault's request is not executed), its download counted and its
 * answer told to the blob watch. Other operations pass as they are.
 */
export function blobTraffic(observers: BlobObservers): OperationInterceptor {
  return (next) => (operation) =>
    operation.object === undefined ? next(operation) : watchedBlob(observers, next, operation);
}

async function watchedBlob(
  { throttle, blobs, metrics }: BlobObservers,
  next: RunOperation,
  operation: Operation,
): Promise<Reply | 'drop'> {
  const { name, account, headers } = operation;
  const object = operation.object!;
  throttle?.admitBlob(account, object);
  let reply: Reply | 'drop';
  try {
    reply = await next(operation);
  } catch (error) {
    if (error instanceof StorageError) blobs?.refused(account, object, error.code);
    throw error;
  }
  if (reply === 'drop') return reply;
  if (metrics !== undefined && name === 'GetBlob') {
    reply = countedReply(reply, (bytes) => metrics.blobBytesMoved('downloaded', name, bytes));
  }
  const length = reply.headers?.['Content-Length'];
  blobs?.answered({
    operation: name,
    account,
    object,
    headers,
    status: reply.status,
    replyBytes: length === undefined ? undefined : Number(length),
  });
  return reply;
}

/** A streamed request body (blob content) counted as the handler reads it. */
export function uploadedBytes(metrics: Metrics): OperationInterceptor {
  return (next) => (operation) => {
    const { body, name } = operation;
    if (body === undefined) return next(operation);
    return next({
      ...operation,
      body: countedChunks(body, (bytes) => metrics.blobBytesMoved('uploaded', name, bytes)),
    });
  };
}
