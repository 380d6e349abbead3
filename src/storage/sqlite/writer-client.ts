// The reading side's handle on the writer thread: a WriterApi whose calls are messages.
import type { CommitObserver, CommitResult, SettingChange } from '../table-store.js';
import { blobCallName, blobWriterMethods, type BlobWriterApi } from './blob/writer.js';
import { pathCallName, pathWriterMethods, type PathWriterApi } from './dfs/writer.js';
import { queueCallName, queueWriterMethods, type QueueWriterApi } from './queue-writer.js';
import { WorkerRpc } from './worker-rpc.js';
import type { EncodedWrites, WriterApi } from './writer.js';

export class WorkerWriterClient implements WriterApi {
  /** The queue jobs, each a message to the writer thread. */
  readonly queues: QueueWriterApi;
  /** The blob jobs, likewise. */
  readonly blobs: BlobWriterApi;
  /** The path store's jobs, likewise. */
  readonly paths: PathWriterApi;

  private constructor(private readonly rpc: WorkerRpc) {
    const calls = (methods: readonly string[], callName: (method: string) => string) =>
      Object.fromEntries(
        methods.map((method) => [method, (...args: unknown[]) => rpc.call(callName(method), args)]),
      ) as unknown;
    this.queues = calls(queueWriterMethods, queueCallName) as QueueWriterApi;
    this.blobs = calls(blobWriterMethods, blobCallName) as BlobWriterApi;
    this.paths = calls(pathWriterMethods, pathCallName) as PathWriterApi;
  }

  /** Starts the writer thread; resolves once it has opened the database and created the schema. */
  static async start(file: string, onCommit?: CommitObserver): Promise<WorkerWriterClient> {
    const script = new URL('./writer-worker.js', import.meta.url);
    return new WorkerWriterClient(
      await WorkerRpc.start(script, { file }, 'storage writer', onCommit as (notice: unknown) => void),
    );
  }

  commit(account: string, table: string, writes: EncodedWrites): Promise<CommitResult> {
    return this.rpc.call('commit', [account, table, writes]);
  }

  createTable(account: string, name: string): Promise<'created' | 'exists'> {
    return this.rpc.call('createTable', [account, name]);
  }

  deleteTable(account: string, name: string): Promise<boolean> {
    return this.rpc.call('deleteTable', [account, name]);
  }

  createIndex(account: string, name: string, property: string): Promise<number | undefined> {
    return this.rpc.call('createIndex', [account, name, property]);
  }

  putSettings(account: string, changes: readonly SettingChange[]): Promise<'ok' | 'tableNotFound'> {
    return this.rpc.call('putSettings', [account, changes]);
  }

  close(): Promise<void> {
    return this.rpc.close();
  }
}
