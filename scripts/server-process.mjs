// Starts a server as a child Node.js process and waits until it says it is ready: the one way the
// tests, the benchmarks and the toolkit's tests start Cerulean (and Azurite, and the bare ceiling).
//
// Plain JavaScript with its types in server-process.d.mts, because three compilations use it: the
// root project (tests/, bench/, compiled to dist/) and packages/toolkit (its own rootDir, which a
// TypeScript file of the root cannot join). Each loads it at run time from the repository root,
// where it needs no build step.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

/** Path of `bin/cerulean.js`. */
export const ceruleanBin = fileURLToPath(new URL('../bin/cerulean.js', import.meta.url));
/** The repository root (with a trailing slash). */
export const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * A start can take many seconds on a loaded machine (load 16 on 2 cores: each process gets an
 * eighth of a core), and a server that never starts fails the same way, only later.
 */
export const startTimeoutMsDefault = 120_000;
/** Beyond Cerulean's own shutdown grace (10 s), so a slow but orderly exit is not cut short. */
export const stopTimeoutMsDefault = 60_000;

const listeningPrefix = 'Cerulean listening on ';
const queueEndpointPrefix = 'Queue endpoint: ';
const blobEndpointPrefix = 'Blob endpoint: ';
const connectionStringPrefix = 'Connection string: ';

/**
 * Reads Cerulean's banner: `Cerulean listening on <table endpoint>`, then `Connection string: …`.
 * Lines it does not know (Explorer, Data, other endpoints, log lines) are skipped.
 */
export function ceruleanBanner() {
  let url;
  let queueUrl;
  let blobUrl;
  return (line) => {
    if (line.startsWith(listeningPrefix)) url = line.slice(listeningPrefix.length).trim();
    else if (line.startsWith(queueEndpointPrefix)) queueUrl = line.slice(queueEndpointPrefix.length).trim();
    else if (line.startsWith(blobEndpointPrefix)) blobUrl = line.slice(blobEndpointPrefix.length).trim();
    else if (line.startsWith(connectionStringPrefix) && url !== undefined) {
      const parsed = new URL(url);
      const connectionString = line.slice(connectionStringPrefix.length).trim();
      return { url, queueUrl, blobUrl, host: parsed.hostname, port: Number(parsed.port), connectionString };
    }
    return undefined;
  };
}

/** `node bin/cerulean.js …args` until its banner is out. */
export function startCerulean(options) {
  const { args = [], ...rest } = options;
  // Processes started side by side must not meet on the default queue and blob ports.
  const queuePort = args.includes('--queue-port') ? [] : ['--queue-port', '0'];
  const blobPort = args.includes('--blob-port') ? [] : ['--blob-port', '0'];
  return startNodeProcess({
    name: 'cerulean',
    ...rest,
    args: [ceruleanBin, ...args, ...queuePort, ...blobPort],
    ready: ceruleanBanner(),
  });
}

/** `node …args`; resolves once `ready` returns something for a line of stdout or stderr. */
export async function startNodeProcess(options) {
  const { name = options.args[0], startTimeoutMs = startTimeoutMsDefault } = options;
  const { stopTimeoutMs = stopTimeoutMsDefault } = options;
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd ?? repoRoot,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let ready;
  try {
    ready = await readyLine(child, output, exited, { ...options, name, startTimeoutMs });
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
  const stopWith = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return waitForExit(child, exited, stopTimeoutMs, `${name} did not exit within ${stopTimeoutMs} ms after ${signal}`);
  };
  return {
    ready,
    process: child,
    exited,
    output: () => ({ ...output }),
    stop: () => stopWith('SIGTERM'),
    kill9: async () => void (await stopWith('SIGKILL')),
  };
}

function readyLine(child, output, exited, options) {
  const { name, startTimeoutMs, outputBytesMax = Infinity } = options;
  const describe = () => `args: ${options.args.join(' ')}\nstdout:\n${output.stdout}\nstderr:\n${output.stderr}`;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (settle, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle(value);
    };
    for (const stream of ['stdout', 'stderr']) {
      let pending = '';
      child[stream].setEncoding('utf8').on('data', (chunk) => {
        output[stream] = keepTail(output[stream] + chunk, outputBytesMax);
        const lines = (pending + chunk).split('\n');
        pending = lines.pop();
        for (const line of lines) {
          const found = done ? undefined : options.ready(line.replace(/\r$/, ''));
          if (found !== undefined) finish(resolve, found);
        }
      });
    }
    child.once('error', (error) => finish(reject, error));
    void exited.then(({ code, signal }) =>
      finish(reject, new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready\n${describe()}`)),
    );
    const timer = setTimeout(
      () => finish(reject, new Error(`${name} not ready after ${startTimeoutMs} ms\n${describe()}`)),
      startTimeoutMs,
    );
  });
}

function keepTail(text, charsMax) {
  return text.length <= charsMax ? text : text.slice(text.length - charsMax);
}

/** The exit code; after `timeoutMs` SIGKILL, wait for the exit, and reject with `message`. */
async function waitForExit(child, exited, timeoutMs, message) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs, 'late')));
  const first = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (first !== 'late') return first.code;
  child.kill('SIGKILL');
  await exited;
  throw new Error(message);
}

/** A port free on 127.0.0.1 right now, for servers that cannot be told `--port 0`. */
export async function freeLoopbackPort() {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  await once(probe, 'close');
  return port;
}
