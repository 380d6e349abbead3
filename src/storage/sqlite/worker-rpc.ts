// Calls to a worker thread as messages, both ways batched: the calls made in one turn of the
// event loop travel as one message, and so do the answers of one turn. The writer thread and
// the scan threads speak it.
import { once } from 'node:events';
import { parentPort, Worker } from 'node:worker_threads';

export interface WorkerCall {
  readonly id: number;
  readonly method: string;
  readonly args: unknown[];
}

/** A failed call's answer carries the error's code (`SQLITE_FULL`, `ENOSPC`) so the caller can tell causes apart. */
export type WorkerAnswer =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: string; readonly code?: string | undefined };

interface Pending {
  readonly resolve: (result: never) => void;
  readonly reject: (error: Error) => void;
}

const readyId = 0;
/** Answers with this id are notices the thread sends of its own accord (e.g. commit figures). */
const noticeId = -1;
const closeMethod = 'close';

/** The calling side. */
export class WorkerRpc {
  private nextId = readyId + 1;
  private readonly pending = new Map<number, Pending>();
  private outbox: WorkerCall[] = [];
  /** Why the thread can answer no more calls, once it cannot. */
  private failure: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    name: string,
    onNotice: ((notice: unknown) => void) | undefined,
  ) {
    worker.on('message', (answers: WorkerAnswer[]) => {
      for (const answer of answers) {
        if (answer.id === noticeId) {
          if ('result' in answer) onNotice?.(answer.result);
          continue;
        }
        const call = this.pending.get(answer.id);
        if (call === undefined) continue;
        this.pending.delete(answer.id);
        if ('error' in answer) call.reject(withCode(new Error(`${name} failed: ${answer.error}`), answer.code));
        else call.resolve(answer.result as never);
      }
    });
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', (code) => this.failAll(new Error(`${name} exited with code ${code}`)));
  }

  /** Starts the thread; resolves once it has said it is ready (see serveCalls). `onNotice` hears its notices. */
  static async start(
    script: URL,
    workerData: unknown,
    name: string,
    onNotice?: (notice: unknown) => void,
  ): Promise<WorkerRpc> {
    const worker = new Worker(script, { workerData });
    const [[ready]] = (await once(worker, 'message')) as [WorkerAnswer[]];
    if (ready === undefined || !('result' in ready) || ready.id !== readyId) throw new Error(`${name} failed to start`);
    return new WorkerRpc(worker, name, onNotice);
  }

  /** Calls not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  call<T>(method: string, args: unknown[]): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (result: never) => void, reject });
      if (this.outbox.length === 0) setImmediate(() => this.worker.postMessage(this.outbox.splice(0)));
      this.outbox.push({ id, method, args });
    });
  }

  /** Lets the thread finish what it was asked (its onClose runs last), then ends it. */
  async close(): Promise<void> {
    await this.call(closeMethod, []);
    await this.worker.terminate();
  }

  private failAll(error: Error): void {
    this.failure ??= error;
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}

export type Handlers = Readonly<Record<string, (...args: never[]) => unknown>>;

/**
 * The thread's side: answers every call with its handler (which may return a promise) and says
 * it is ready. A close call runs `onClose` and is answered after everything before it. `notify`
 * sends a notice with the next answers.
 */
export function serveCalls(handlers: Handlers, onClose: () => void): { notify(notice: unknown): void } {
  const port = parentPort!;
  const outbox: WorkerAnswer[] = [];
  const answer = (reply: WorkerAnswer): void => {
    if (outbox.length === 0) setImmediate(() => port.postMessage(outbox.splice(0)));
    outbox.push(reply);
  };
  port.on('message', (calls: WorkerCall[]) => {
    for (const call of calls) {
      if (call.method === closeMethod) {
        onClose();
        // After the microtasks that answer calls onClose just finished, so the close answer comes last.
        setImmediate(() =>
          port.postMessage([...outbox.splice(0), { id: call.id, result: undefined }] satisfies WorkerAnswer[]),
        );
        return;
      }
      const handler = handlers[call.method] as ((...args: unknown[]) => unknown) | undefined;
      if (handler === undefined) {
        answer({ id: call.id, error: `no method ${call.method}` });
        continue;
      }
      new Promise((resolve) => resolve(handler(...call.args))).then(
        (result) => answer({ id: call.id, result }),
        (error: unknown) =>
          answer({ id: call.id, error: String((error as Error)?.stack ?? error), code: codeOf(error) }),
      );
    }
  });
  port.postMessage([{ id: readyId, result: 'ready' }] satisfies WorkerAnswer[]);
  return { notify: (notice) => answer({ id: noticeId, result: notice }) };
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function withCode(error: Error, code: string | undefined): Error {
  if (code !== undefined) Object.assign(error, { code });
  return error;
}
