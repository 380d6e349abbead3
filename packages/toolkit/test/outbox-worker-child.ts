// A worker process for the crash test: drains the outbox of SOURCE_TABLE and prints one line per
// message applied, so the parent can SIGKILL it part-way. Not a test file itself.
import { connect, OutboxWorker } from '../src/index.js';

const connectionString = process.env.AZURE_TABLES_CONNECTION_STRING!;
const source = connect(connectionString, process.env.SOURCE_TABLE!);
const worker = new OutboxWorker(source, {
  tables: (name) => connect(connectionString, name),
  onApplied: ({ rowKey }) => process.stdout.write(`applied ${rowKey}\n`),
});
const count = await worker.drainAll();
process.stdout.write(`done ${count}\n`);
