// Worker-thread host of the SqliteWriter: owns the only write connection of an on-disk store.
import { workerData } from 'node:worker_threads';
import { openDatabase } from './schema.js';
import { blobCallName, blobWriterMethods } from './blob/writer.js';
import { pathCallName, pathWriterMethods } from './dfs/writer.js';
import { queueCallName, queueWriterMethods } from './queue-writer.js';
import { serveCalls } from './worker-rpc.js';
import { SqliteWriter } from './writer.js';

const db = openDatabase((workerData as { file: string }).file, 'writer');
// Commit figures travel back to the store as notices, in the same messages as the answers.
const writer = new SqliteWriter(db, (stats) => calls.notify(stats));

const calls = serveCalls(
  {
    commit: writer.commit.bind(writer),
    createTable: writer.createTable.bind(writer),
    deleteTable: writer.deleteTable.bind(writer),
    createIndex: writer.createIndex.bind(writer),
    putSettings: writer.putSettings.bind(writer),
    ...Object.fromEntries(
      queueWriterMethods.map((method) => [queueCallName(method), writer.queues[method].bind(writer.queues)]),
    ),
    ...Object.fromEntries(
      blobWriterMethods.map((method) => [blobCallName(method), writer.blobs[method].bind(writer.blobs)]),
    ),
    ...Object.fromEntries(
      pathWriterMethods.map((method) => [pathCallName(method), writer.paths[method].bind(writer.paths)]),
    ),
  },
  () => {
    writer.drain();
    db.close();
  },
);
