// Worker-thread host of the SqliteWriter: owns the only write connection of an on-disk store.
// Messages are calls by method name; each answer carries the call's id.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './schema.js';
import { SqliteWriter, type WriterApi } from './writer.js';

export interface WriterCall {
  readonly id: number;
  readonly method: keyof WriterApi | 'close';
  readonly args: unknown[];
}

export type WriterAnswer =
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: string };

const port = parentPort!;
const db = openDatabase((workerData as { file: string }).file, 'writer');
const writer = new SqliteWriter(db);

port.on('message', (call: WriterCall) => {
  if (call.method === 'close') {
    writer.drain();
    db.close();
    port.postMessage({ id: call.id, result: undefined } satisfies WriterAnswer);
    return;
  }
  const method = writer[call.method] as (...args: unknown[]) => Promise<unknown>;
  method.apply(writer, call.args).then(
    (result) => port.postMessage({ id: call.id, result } satisfies WriterAnswer),
    (error: unknown) => port.postMessage({ id: call.id, error: String((error as Error)?.stack ?? error) } satisfies WriterAnswer),
  );
});
port.postMessage({ id: 0, result: 'ready' } satisfies WriterAnswer);
