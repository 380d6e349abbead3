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
  /** Names the Blob endpoint (Cerulean's own; for Azurite, its Blob service in a second process). */
  readonly blobConnectionString: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

const account = `AccountName=devstoreaccount1;AccountKey=${devKey}`;

/** One of Azurite's services in memory: `service` is 'table' or 'blob'. */
async function startAzurite(service: 'table' | 'blob'): Promise<ServerProcess.NodeProcess<string>> {
  const port = await freeLoopbackPort();
  const main = createRequire(import.meta.url).resolve(`azurite/dist/src/${service}/main.js`);
  const endpointName = service === 'table' ? 'TableEndpoint' : 'BlobEndpoint';
  return startNodeProcess({
    name: `azurite ${service}`,
    args: [main, '--inMemoryPersistence', `--${service}Host`, '127.0.0.1', `--${service}Port`, String(port)].concat([
      '--disableTelemetry',
      '--silent',
      '--skipApiVersionCheck',
    ]),
    ready: (line) => {
      const started = /successfully (?:started on |listens on http:\/\/)127\.0\.0\.1:(\d+)/.exec(line);
      if (started === null) return undefined;
      const endpoint = `http://127.0.0.1:${started[1]}/devstoreaccount1`;
      return `DefaultEndpointsProtocol=http;${account};${endpointName}=${endpoint};`;
    },
  });
}

/** Adds `QueueEndpoint=…` to a connection string that has none, when there is a queue endpoint. */
function withQueueEndpoint(connectionString: string, queueUrl: string | undefined): string {
  if (queueUrl === undefined || /(^|;)QueueEndpoint=/i.test(connectionString)) return connectionString;
  return `${connectionString.replace(/;?$/, ';')}QueueEndpoint=${queueUrl};`;
}

export async function startServer(kind: ServerKind): Promise<TestServer> {
  if (kind === 'azurite') {
    const [tables, blobs] = await Promise.all([startAzurite('table'), startAzurite('blob')]);
    return {
      kind,
      connectionString: tables.ready,
      blobConnectionString: blobs.ready,
      process: tables.process,
      stop: async () => {
        // Either may have needed SIGKILL, but both are stopped.
        await Promise.all([tables.stop().catch(() => undefined), blobs.stop().catch(() => undefined)]);
      },
    };
  }
  const cerulean = await startCerulean({ args: ['--in-memory', '--port', '0', '--log-level', 'warn'] });
  const { blobUrl } = cerulean.ready as { blobUrl?: string };
  return {
    kind,
    connectionString: withQueueEndpoint(cerulean.ready.connectionString, cerulean.ready.queueUrl),
    blobConnectionString: `DefaultEndpointsProtocol=http;${account};BlobEndpoint=${blobUrl};`,
    process: cerulean.process,
    stop: async () => {
      await cerulean.stop().catch(() => undefined); // it needed SIGKILL, but it is stopped
    },
  };
}

/** A table name no other test uses: letters and digits, 3..63 characters. */
export function uniqueTableName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 63);
}
