// The server process: config → composition (store, services) → server, plus what belongs to a
// process: the banner, signals and shutdown.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { compose, describeStore } from './compose.js';
import { loadConfig, usage, type Config } from './config.js';
import { devAccountName, loadAccounts } from './http/accounts.js';
import { createBearerVerifier } from './http/bearer.js';
import { createExplorer, explorerPath } from './http/explorer.js';
import { createLogger } from './http/log.js';
import { createServer } from './http/server.js';
import { Observation } from './observe/observation.js';

const shutdownGraceMs = 10_000;

/** Runs the server with these command-line flags (`cerulean [serve] [options]`) until SIGTERM/SIGINT. */
export async function serve(argv: readonly string[]): Promise<void> {
  let config;
  try {
    config = loadConfig(argv, process.env);
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
  let security;
  try {
    security = loadSecurity(config);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  let observation;
  try {
    observation = new Observation(config.observe, log);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  let composition;
  try {
    composition = await compose(config, observation);
  } catch (error) {
    process.stderr.write(`cannot open the store: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const { store, services } = composition;
  const explorer = config.explorer ? createExplorer([...accounts.keys()], (message) => log.warn(message)) : undefined;
  const hooks = observation.hooks(accounts);
  const server = createServer({
    accounts,
    services,
    log,
    requestsInFlightMax: config.requestsInFlightMax,
    explorer,
    hooks,
    ...security,
  });
  const scheme = security.tls === undefined ? 'http' : 'https';

  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const endpoint = `${scheme}://${host}:${port}/${devAccountName}`;
    const account = accounts.get(devAccountName)!;
    process.stdout.write(
      `Cerulean listening on ${endpoint}\n` +
        `Connection string: DefaultEndpointsProtocol=${scheme};AccountName=${devAccountName};` +
        `AccountKey=${account.keys[0]!.toString('base64')};TableEndpoint=${endpoint};\n` +
        (explorer === undefined ? '' : `Explorer: ${scheme}://${host}:${port}${explorerPath}\n`) +
        `Data: ${describeStore(config)}\n`,
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

/** The TLS material and bearer token verifier the flags name; throws on unreadable or bad files. */
function loadSecurity(config: Config) {
  const read = (file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const tls = config.tls && { cert: read(config.tls.certFile), key: read(config.tls.keyFile) };
  if (tls !== undefined) {
    try {
      createSecureContext(tls); // a bad PEM or a key that does not match the certificate stops here
    } catch (error) {
      throw new Error(`--cert/--key: ${(error as Error).message}`);
    }
  }
  return { tls, bearer: config.oauth && createBearerVerifier(config.oauth) };
}
