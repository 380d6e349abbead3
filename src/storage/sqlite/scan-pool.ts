// The scan threads of an on-disk store. A filtered table scan is the one read whose cost grows
// with the table (about 0.4 µs per row inside SQLite); on these threads it uses the cores the
// HTTP thread does not, and point reads keep their latency while scans run.
import { availableParallelism } from 'node:os';
import type { RangeReader, RowStep } from './range-reader.js';
import { WorkerRpc } from './worker-rpc.js';

/** One thread per core, at most four: beyond that, scans wait for the disk, not for a core. */
const threadsMax = 4;

export class ScanPool {
  private constructor(private readonly threads: readonly WorkerRpc[]) {}

  static async start(file: string): Promise<ScanPool> {
    const script = new URL('./scan-worker.js', import.meta.url);
    const count = Math.min(availableParallelism(), threadsMax);
    const threads = await Promise.all(
      Array.from({ length: count }, (_, i) => WorkerRpc.start(script, { file }, `scan thread ${i + 1}`)),
    );
    return new ScanPool(threads);
  }

  /** RangeReader.scan on the thread with the fewest scans in flight. */
  scan(...args: Parameters<RangeReader['scan']>): Promise<RowStep> {
    const thread = this.threads.reduce((idlest, t) => (t.inFlight < idlest.inFlight ? t : idlest));
    return thread.call('scan', args);
  }

  /** Threads with no scan in flight. */
  idleThreads(): number {
    return this.threads.filter((thread) => thread.inFlight === 0).length;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}
