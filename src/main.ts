// Composition root: config → store → services → server. Nothing else lives here.
import type { AddressInfo } from 'node:net';
import { loadConfig, usage } from './config.js';
import { devAccountName, loadAccounts } from './http/accounts.js';
import { createLogger } from './http/log.js';
import { createServer } from './http/server.js';
import { EntityService } from './service/entities.js';
import { QueryService } from './service/query.js';
import { TableService } from './service/tables.js';
import { SqliteStore } from './storage/sqlite/sqlite-store.js';

const shutdownGraceMs = 10_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.argv.slice(2), process.env);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}\n`);
    process.exit(2);
  }
  if (config === 'help') {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const accounts = loadAccounts(config.azuriteAccounts);
  const log = createLogger(config.logLevel);
  const store = await SqliteStore.open({ location: config.location });
  const services = {
    store,
    tables: new TableService(store),
    entities: new EntityService(store),
    queries: new QueryService(store),
  };
  const server = createServer({ accounts, services, log });

  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const endpoint = `http://${host}:${port}/${devAccountName}`;
    const account = accounts.get(devAccountName)!;
    process.stdout.write(
      `Cerulean listening on ${endpoint}\n` +
        `Connection string: DefaultEndpointsProtocol=http;AccountName=${devAccountName};` +
        `AccountKey=${account.keys[0]!.toString('base64')};TableEndpoint=${endpoint};\n` +
        `Data: ${config.location === undefined ? 'in memory, nothing is kept' : `${config.location}, every acknowledged write fsync-durable`}\n`,
    );
  });

  // Finish in-flight requests, then close the store; a second signal or the grace period forces exit.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info(`${signal}: finishing in-flight requests`);
    const force = setTimeout(() => process.exit(1), shutdownGraceMs);
    force.unref();
    server.close(() => {
      store.close().then(
        () => process.exit(0),
        (error: unknown) => {
          log.error('closing the store failed', error);
          process.exit(1);
        },
      );
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

await main();
