// Real servers for the toolkit's tests and examples: Cerulean from this repository and Azurite
// from node_modules, each in its own process on 127.0.0.1 with a free port, in memory.
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type * as ServerProcess from '../../../scripts/server-process.mjs';

// The repository's one way to start a server process, loaded from the root at run time (this
// package compiles on its own; the module needs no build).
const serverProcessUrl = new URL('../../../../scripts/server-process.mjs', import.meta.url);
const { freeLoopbackPort, startCerulean, startNodeProcess } = (await import(
  serverProcessUrl.href
)) as typeof ServerProcess;

export type ServerKind = 'cerulean' | 'azurite';
export const serverKinds: readonly ServerKind[] = ['cerulean', 'azurite'];

const devKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

export interface TestServer {
  readonly kind: ServerKind;
  /** Cerulean's also names its queue endpoint (`QueueEndpoint=…`); Azurite here serves tables only. */
  readonly connectionString: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

async function startAzurite(): Promise<ServerProcess.NodeProcess<string>> {
  const port = await freeLoopbackPort();
  const main = createRequire(import.meta.url).resolve('azurite/dist/src/table/main.js');
  return startNodeProcess({
    name: 'azurite',
    args: [main, '--inMemoryPersistence', '--tableHost', '127.0.0.1', '--tablePort', String(port)].concat([
      '--disableTelemetry',
      '--silent',
      '--skipApiVersionCheck',
    ]),
    ready: (line) => {
      const started = /successfully started on 127\.0\.0\.1:(\d+)/.exec(line);
      if (started === null) return undefined;
      const endpoint = `http://127.0.0.1:${started[1]}/devstoreaccount1`;
      const account = `AccountName=devstoreaccount1;AccountKey=${devKey}`;
      return `DefaultEndpointsProtocol=http;${account};TableEndpoint=${endpoint};`;
    },
  });
}

/** Adds `QueueEndpoint=…` to a connection string that has none, when there is a queue endpoint. */
function withQueueEndpoint(connectionString: string, queueUrl: string | undefined): string {
  if (queueUrl === undefined || /(^|;)QueueEndpoint=/i.test(connectionString)) return connectionString;
  return `${connectionString.replace(/;?$/, ';')}QueueEndpoint=${queueUrl};`;
}

export async function startServer(kind: ServerKind): Promise<TestServer> {
  const started =
    kind === 'azurite'
      ? await startAzurite()
      : await startCerulean({ args: ['--in-memory', '--port', '0', '--log-level', 'warn'] }).then((cerulean) => ({
          ...cerulean,
          ready: withQueueEndpoint(cerulean.ready.connectionString, cerulean.ready.queueUrl),
        }));
  return {
    kind,
    connectionString: started.ready,
    process: started.process,
    stop: async () => {
      await started.stop().catch(() => undefined); // it needed SIGKILL, but it is stopped
    },
  };
}

/** A table name no other test uses: letters and digits, 3..63 characters. */
export function uniqueTableName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 63);
}
