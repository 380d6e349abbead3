// A scan thread: conditional scans (TableStore.scan with conditions) on its own read-only
// connection, so that a table scan neither blocks the HTTP thread nor waits for it.
import { workerData } from 'node:worker_threads';
import { RangeReader } from './range-reader.js';
import { openDatabase } from './schema.js';
import { serveCalls } from './worker-rpc.js';

const db = openDatabase((workerData as { file: string }).file, 'scanner');
const reader = new RangeReader(db);

serveCalls({ scan: reader.scan.bind(reader) }, () => db.close());
