// Real servers for the toolkit's tests and examples: Cerulean from this repository and Azurite
// from node_modules, each in its own process on 127.0.0.1 with a free port, in memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export type ServerKind = 'cerulean' | 'azurite';
export const serverKinds: readonly ServerKind[] = ['cerulean', 'azurite'];

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const startTimeoutMs = 60_000;

export interface TestServer {
  readonly kind: ServerKind;
  readonly connectionString: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function launch(kind: ServerKind, port: number): string[] {
  if (kind === 'cerulean') return [`${repoRoot}bin/cerulean.js`, '--in-memory', '--port', '0', '--log-level', 'warn'];
  const main = createRequire(import.meta.url).resolve('azurite/dist/src/table/main.js');
  return [
    main,
    '--inMemoryPersistence',
    '--tableHost',
    '127.0.0.1',
    '--tablePort',
    String(port),
    '--disableTelemetry',
    '--silent',
    '--skipApiVersionCheck',
  ];
}

export async function startServer(kind: ServerKind): Promise<TestServer> {
  const port = kind === 'azurite' ? await freePort() : 0;
  const child = spawn(process.execPath, launch(kind, port), { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output += line + '\n';
      const cerulean = /^Connection string: (.+)$/.exec(line);
      if (kind === 'cerulean' && cerulean) resolve(cerulean[1]!.trim());
      const azurite = /successfully started on 127\.0\.0\.1:(\d+)/.exec(line);
      if (kind === 'azurite' && azurite) {
        resolve(
          `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${devKey};TableEndpoint=http://127.0.0.1:${azurite[1]}/devstoreaccount1;`,
        );
      }
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`${kind} exited (${code ?? signal}) before listening:\n${output}`)),
    );
    setTimeout(
      () => reject(new Error(`${kind} not listening after ${startTimeoutMs} ms:\n${output}`)),
      startTimeoutMs,
    ).unref();
  });
  let connectionString: string;
  try {
    connectionString = await ready;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    kind,
    connectionString,
    process: child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await once(child, 'exit');
      clearTimeout(timer);
    },
  };
}

/** A table name no other test uses: letters and digits, 3..63 characters. */
export function uniqueTableName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 63);
}
