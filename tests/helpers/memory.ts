// The memory a test process holds live, after a full garbage collection: what a bound on a
// streaming path can be asserted against (a process's RSS keeps freed pages, and garbage not yet
// collected says nothing about what the code holds).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** The JavaScript heap and the buffers outside it in use, after a full collection (bytes). */
export function liveBytes(): number {
  collect();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}
