// The `cerulean` command line: flags and their environment equivalents, the printed lines,
// persistence with a location, no persistence in memory, graceful SIGTERM.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { RestError, TableClient, TableServiceClient } from '@azure/data-tables';
import {
  devAccount,
  makeTempDir,
  removeDir,
  startServer,
  type RunningServer,
  type ServerOptions,
} from '../../helpers/server.js';
import { describeResponse, devPath, send } from '../../helpers/http.js';
import { clientOptions, uniqueTableName } from '../../helpers/sdk.js';

/** A port that was free on `host` a moment ago. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function connectOutcome(host: string, port: number): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

async function withServer<T>(options: ServerOptions, work: (server: RunningServer) => Promise<T>): Promise<T> {
  const server = await startServer(options);
  try {
    return await work(server);
  } finally {
    const code = await server.stop();
    assert.equal(code, 0, `SIGTERM must exit 0\n${server.output().stderr}`);
  }
}

function clientsFromPrintedString(
  server: RunningServer,
  table: string,
): { service: TableServiceClient; table: TableClient } {
  return {
    service: TableServiceClient.fromConnectionString(server.connectionString, clientOptions),
    table: TableClient.fromConnectionString(server.connectionString, table, clientOptions),
  };
}

async function writeSample(server: RunningServer, table: string): Promise<void> {
  const clients = clientsFromPrintedString(server, table);
  await clients.service.createTable(table);
  await clients.table.createEntity({ partitionKey: 'p', rowKey: 'r', kept: 'yes' });
}

async function sampleIsThere(server: RunningServer, table: string): Promise<boolean> {
  try {
    const got = await clientsFromPrintedString(server, table).table.getEntity<{ kept: string }>('p', 'r');
    assert.equal(got.kept, 'yes');
    return true;
  } catch (e) {
    if (e instanceof RestError && e.statusCode === 404) return false;
    throw e;
  }
}

describe('command line', () => {
  test('prints the listening line and a working connection string', async () => {
    await withServer({ inMemory: true }, async (server) => {
      assert.match(server.output().stdout, /^Cerulean listening on http:\/\/[^\s/]+:\d+\/devstoreaccount1$/m);
      assert.ok(server.port > 0);
      assert.match(server.connectionString, /AccountName=devstoreaccount1/);
      assert.ok(server.connectionString.includes(`TableEndpoint=${server.url}`), server.connectionString);
      const table = uniqueTableName('cs');
      await writeSample(server, table);
      assert.ok(await sampleIsThere(server, table));
    });
  });

  test('--host and --port choose the address (and only that address)', async () => {
    const host = '127.0.0.2';
    const port = await freePort(host);
    await withServer({ inMemory: true, args: ['--host', host, '--port', String(port)] }, async (server) => {
      assert.equal(server.url, `http://${host}:${port}/${devAccount}`);
      const res = await send(port, { method: 'GET', path: devPath('Tables'), host });
      assert.equal(res.status, 200, describeResponse(res));
      assert.equal(await connectOutcome('127.0.0.1', port), 'ECONNREFUSED', 'must not listen on other addresses');
    });
  });

  test('CERULEAN_HOST, CERULEAN_PORT and CERULEAN_IN_MEMORY do the same', async () => {
    const host = '127.0.0.3';
    const port = await freePort(host);
    const cwd = makeTempDir();
    try {
      const env = { CERULEAN_HOST: host, CERULEAN_PORT: String(port), CERULEAN_IN_MEMORY: '1' };
      await withServer({ env, cwd }, async (server) => {
        assert.equal(server.url, `http://${host}:${port}/${devAccount}`);
        await writeSample(server, uniqueTableName('env'));
      });
      assert.deepEqual(readdirSync(cwd), [], 'in-memory mode writes no files');
    } finally {
      removeDir(cwd);
    }
  });

  for (const [label, locate] of [
    ['--location', (dir: string): ServerOptions => ({ location: dir })],
    ['CERULEAN_LOCATION', (dir: string): ServerOptions => ({ env: { CERULEAN_LOCATION: dir } })],
  ] as const) {
    test(`data written under ${label} survives a restart`, async () => {
      const dir = makeTempDir();
      try {
        const table = uniqueTableName('persist');
        await withServer(locate(dir), (server) => writeSample(server, table));
        assert.ok(readdirSync(dir).length > 0, 'the location holds the data files');
        await withServer(locate(dir), async (server) => {
          assert.ok(await sampleIsThere(server, table), 'entity must survive a restart');
          const names: string[] = [];
          for await (const t of clientsFromPrintedString(server, table).service.listTables()) names.push(t.name!);
          assert.deepEqual(names, [table]);
        });
      } finally {
        removeDir(dir);
      }
    });
  }

  test('--in-memory keeps nothing across a restart and writes no files', async () => {
    const cwd = makeTempDir();
    try {
      const table = uniqueTableName('mem');
      await withServer({ inMemory: true, cwd }, async (server) => {
        await writeSample(server, table);
        assert.ok(await sampleIsThere(server, table));
      });
      await withServer({ inMemory: true, cwd }, async (server) => {
        assert.equal(await sampleIsThere(server, table), false);
      });
      assert.deepEqual(readdirSync(cwd), []);
    } finally {
      removeDir(cwd);
    }
  });

  test('two servers on different locations do not share data', async () => {
    const [a, b] = [makeTempDir(), makeTempDir()];
    try {
      const table = uniqueTableName('iso');
      await withServer({ location: a }, (server) => writeSample(server, table));
      await withServer({ location: b }, async (server) => assert.equal(await sampleIsThere(server, table), false));
    } finally {
      removeDir(a);
      removeDir(b);
    }
  });

  test('SIGTERM while idle exits 0 promptly', async () => {
    const server = await startServer({ inMemory: true });
    // Exit code 0, not 1: the server finished on its own, not when its shutdown grace ran out.
    assert.equal(await server.stop(), 0);
  });
});
