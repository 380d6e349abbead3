// The server process: config → composition (store, services) → server, plus what belongs to a
// process: the banner, signals and shutdown.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import {
  compose,
  describeStore,
  serviceDefinitions,
  type ComposedService,
  type Composition,
  type ReachabilityObserver,
} from './compose.js';
import { azuriteListeningLines, banner } from './banner.js';
import { lockLocation } from './location-lock.js';
import { loadConfig, serverUsage, UsageError, type Config } from './config.js';
import { devAccountName, loadAccounts } from './http/accounts.js';
import { createBearerVerifier } from './http/bearer.js';
import { createExplorer, explorerPath } from './http/explorer.js';
import { listenOrExit } from './http/listen.js';
import { createLogger, logTaskFailure, type Logger } from './http/log.js';
import { FrontDoor, type TlsMaterial } from './http/server.js';
import { operationNamesOf } from './http/service-definition.js';
import { Observation } from './observe/observation.js';
import { clockFromEnvironment } from './domain/clock.js';

/** One service's listener. */
interface Listener {
  readonly service: ComposedService['definition'];
  readonly server: Server;
  /** Closes it once requests in flight are answered, keep-alive connections included (shutdown.ts). */
  readonly graceful: GracefulServer;
  /** As configured; 0 = any free port. */
  readonly port: number;
  /** The address it listens on. */
  readonly host: string;
  /** The flag that chose the port, for the line a failed listen prints. */
  readonly flag: string;
}
import { gracefulClose, type GracefulServer } from './shutdown.js';

const shutdownGraceMs = 10_000;

/** Runs the server with these command-line flags (`cerulean [serve] [options]`) until SIGTERM/SIGINT. */
export async function serve(argv: readonly string[]): Promise<void> {
  let config;
  try {
    config = loadConfig(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`cerulean: ${error.message}\nRun 'cerulean serve --help' for the options.\n`);
    process.exit(2);
  }
  if (config === 'help') {
    process.stdout.write(`${serverUsage()}\n`);
    return;
  }
  let accounts;
  try {
    accounts = loadAccounts(config.azuriteAccounts);
  } catch (error) {
    process.stderr.write(`cerulean: ${(error as Error).message}\n`);
    process.exit(2);
  }
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
    observation = new Observation(
      config.observe,
      log,
      operationNamesOf(serviceDefinitions.map((service) => service.definition)),
    );
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const composition = await openComposition(config, observation, log);
  const { close: closeStores } = composition;
  const explorer = config.explorer ? createExplorer([...accounts.keys()], (message) => log.warn(message)) : undefined;
  const hooks = observation.hooks(accounts);
  const frontDoor = new FrontDoor({
    accounts,
    log,
    requestsInFlightMax: config.requestsInFlightMax,
    explorer,
    hooks,
    ...security,
  });
  const listeners = serviceListeners(frontDoor, composition, config);
  // Before the banner: whoever reads it may signal at once.
  stopOnSignals(listeners, { close: closeStores }, log);
  if (config.azuriteInert.length > 0)
    log.warn(`Azurite options with no effect here: ${config.azuriteInert.join('; ')}`);
  const ports = await listenAll(listeners);
  const scheme = security.tls === undefined ? 'http' : 'https';
  process.stdout.write(startBanner(config, scheme, ports, listeners, accounts, explorer !== undefined));
  process.stdout.write(azuriteListeningLines(scheme, listeners));
}

/** The data directory locked, the engine opened and the services composed over it; or exit 1. */
async function openComposition(config: Config, observation: Observation, log: Logger): Promise<Composition> {
  try {
    if (config.database === undefined && config.location !== undefined) lockLocation(config.location);
    const wait = { seconds: config.waitForDatabaseSeconds, report: (line: string) => log.warn(line) };
    const purge = { onError: (error: unknown) => logTaskFailure(log, 'purging expired queue messages failed', error) };
    const queueClock = clockFromEnvironment(process.env);
    const onReclaimError = (error: unknown) =>
      logTaskFailure(log, 'reclaiming unreferenced blob content failed', error);
    const { blobRehydrateDelayMs, blobVersioning, containerSoftDeleteDays } = config;
    const onReachability = reachabilityLog(log);
    const blob = { blobRehydrateDelayMs, blobVersioning, containerSoftDeleteDays };
    const options = { wait, onReachability, purge, onReclaimError, queueClock, ...blob };
    return await compose(config, observation, options);
  } catch (error) {
    process.stderr.write(`cannot open the store: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

/** Each service's listener on its port, in the composition's order (the banner's first line names the first). */
function serviceListeners(frontDoor: FrontDoor, { services }: Composition, config: Config): Listener[] {
  const places: Record<ComposedService['definition']['name'], { port: number; host: string; flag: string }> = {
    table: { port: config.port, host: config.tableHost, flag: '--port' },
    queue: { port: config.queuePort, host: config.queueHost, flag: '--queue-port' },
    blob: { port: config.blobPort, host: config.blobHost, flag: '--blob-port' },
  };
  return services.map((service) => {
    const { port, host, flag } = places[service.definition.name];
    return listener(service.definition, service.server(frontDoor), { port, host }, flag);
  });
}

function startBanner(
  config: Config,
  scheme: 'http' | 'https',
  ports: readonly number[],
  listeners: readonly Listener[],
  accounts: ReturnType<typeof loadAccounts>,
  explorer: boolean,
): string {
  const bracketed = (host: string): string => (host.includes(':') ? `[${host}]` : host);
  const endpoints = listeners.map(({ service, host }, i) => ({
    service,
    url: `${scheme}://${bracketed(host)}:${ports[i]}/${devAccountName}`,
  }));
  const explorerUrl = explorer ? `${scheme}://${bracketed(listeners[0]!.host)}:${ports[0]}${explorerPath}` : undefined;
  const accountPart =
    `DefaultEndpointsProtocol=${scheme};AccountName=${devAccountName};` +
    `AccountKey=${accounts.get(devAccountName)!.keys[0]!.toString('base64')};`;
  const features = { observe: config.observe, explorer };
  return banner({ endpoints, accountPart, explorerUrl, data: describeStore(config), features, scheme });
}

/** Finish in-flight requests, then close the stores; a second signal or the grace period forces exit. */
/** Right after the server is made, before it listens: graceful close tracks its responses from the first. */
function listener(
  service: Listener['service'],
  server: Server,
  { port, host }: { port: number; host: string },
  flag: string,
): Listener {
  return { service, server, graceful: gracefulClose(server), port, host, flag };
}

function stopOnSignals(listeners: readonly Listener[], stores: { close(): Promise<void> }, log: Logger): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info(`${signal}: finishing in-flight requests`);
    const force = setTimeout(() => process.exit(1), shutdownGraceMs);
    force.unref();
    const closed = listeners.map(({ graceful }) => graceful.close());
    void Promise.all(closed).then(() => {
      stores.close().then(
        () => process.exit(0),
        (error: unknown) => {
          log.error('closing the store failed', error);
          process.exit(1);
        },
      );
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Listens every service on its port; resolves to the ports bound (a port that cannot be had: one line, exit 1). */
async function listenAll(listeners: readonly Listener[]): Promise<number[]> {
  const listening = listeners.map(
    ({ server, port, host, flag }) =>
      new Promise<number>((resolve) =>
        listenOrExit(server, port, host, flag, () => resolve((server.address() as AddressInfo).port)),
      ),
  );
  return Promise.all(listening);
}

/** One line when the database goes and one when it is back (each refused request adds its own warn line). */
function reachabilityLog(log: Logger): ReachabilityObserver {
  return (reachable, detail) => log.warn(reachable ? `database back: ${detail}` : `database unreachable: ${detail}`);
}

/** The PEM pair, or the PFX file and its password, that --cert, --key and --cert-password name. */
function tlsMaterial(files: NonNullable<Config['tls']>, read: (file: string) => Buffer): TlsMaterial {
  const passphrase = files.password === undefined ? {} : { passphrase: files.password };
  if (files.keyFile !== undefined) return { cert: read(files.certFile), key: read(files.keyFile), ...passphrase };
  return { pfx: read(files.certFile), passphrase: files.password! };
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
  const tls = config.tls && tlsMaterial(config.tls, read);
  if (tls !== undefined) {
    try {
      createSecureContext(tls); // a bad PEM or a key that does not match the certificate stops here
    } catch (error) {
      throw new Error(`--cert/--key/--cert-password: ${(error as Error).message}`);
    }
  }
  return { tls, bearer: config.oauth && createBearerVerifier(config.oauth) };
}
