// The reading side's handle on the writer thread: a WriterApi whose calls are messages.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { CommitResult } from '../store.js';
import type { EncodedWrite, WriterApi } from './writer.js';
import type { WriterAnswer, WriterCall } from './writer-worker.js';

interface Pending {
  readonly resolve: (result: never) => void;
  readonly reject: (error: Error) => void;
}

export class WorkerWriterClient implements WriterApi {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Calls made in this turn of the event loop, posted together as one message. */
  private outbox: WriterCall[] = [];

  private constructor(private readonly worker: Worker) {
    worker.on('message', (answers: WriterAnswer[]) => {
      for (const answer of answers) {
        const call = this.pending.get(answer.id);
        if (call === undefined) continue;
        this.pending.delete(answer.id);
        if ('error' in answer) call.reject(new Error(`storage writer failed: ${answer.error}`));
        else call.resolve(answer.result as never);
      }
    });
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', (code) => this.failAll(new Error(`storage writer exited with code ${code}`)));
  }

  /** Starts the writer thread; resolves once it has opened the database and created the schema. */
  static async start(file: string): Promise<WorkerWriterClient> {
    const worker = new Worker(new URL('./writer-worker.js', import.meta.url), { workerData: { file } });
    const [[ready]] = (await once(worker, 'message')) as [WriterAnswer[]];
    if (ready === undefined || !('result' in ready) || ready.result !== 'ready') {
      throw new Error('storage writer failed to start');
    }
    return new WorkerWriterClient(worker);
  }

  commit(account: string, table: string, writes: readonly EncodedWrite[]): Promise<CommitResult> {
    return this.call('commit', [account, table, writes]);
  }

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.call('createTable', [account, name]);
  }

  deleteTable(account: string, name: string): Promise<boolean> {
    return this.call('deleteTable', [account, name]);
  }

  putSetting(account: string, scope: string, name: string, value: string | undefined): Promise<void> {
    return this.call('putSetting', [account, scope, name, value]);
  }

  async close(): Promise<void> {
    await this.call('close', []);
    await this.worker.terminate();
  }

  private call<T>(method: WriterCall['method'], args: unknown[]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (result: never) => void, reject });
      if (this.outbox.length === 0) setImmediate(() => this.worker.postMessage(this.outbox.splice(0)));
      this.outbox.push({ id, method, args });
    });
  }

  private failAll(error: Error): void {
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }
}
