// Worker-thread host of the SqliteWriter: owns the only write connection of an on-disk store.
// A message is a list of calls by method name; answers, each with its call's id, go back as lists
// too, gathered for one turn of the event loop: one message each way per group commit.
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

const outbox: WriterAnswer[] = [];
const answer = (reply: WriterAnswer): void => {
  if (outbox.length === 0) setImmediate(() => port.postMessage(outbox.splice(0)));
  outbox.push(reply);
};

port.on('message', (calls: WriterCall[]) => {
  for (const call of calls) {
    if (call.method === 'close') {
      writer.drain();
      db.close();
      port.postMessage([...outbox.splice(0), { id: call.id, result: undefined }] satisfies WriterAnswer[]);
      return;
    }
    const method = writer[call.method] as (...args: unknown[]) => Promise<unknown>;
    method.apply(writer, call.args).then(
      (result) => answer({ id: call.id, result }),
      (error: unknown) => answer({ id: call.id, error: String((error as Error)?.stack ?? error) }),
    );
  }
});
port.postMessage([{ id: 0, result: 'ready' }] satisfies WriterAnswer[]);
