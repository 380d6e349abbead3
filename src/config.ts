// The server's options: one table (serverFlags) drives parsing, the environment variables and the
// usage text. Flags win over the environment.
import { Command, CommanderError, Option } from 'commander';
import { checkDatabaseUrl } from './compose.js';
import { logLevels, type LogLevel } from './http/log.js';
import { requestsInFlightMax } from './limits.js';
import type { OAuthConfig } from './http/bearer.js';
import { blobReclaimGraceSecondsDefault, blobRehydrateDelayMsDefault } from './limits.js';
import { autoIndexRowsDefault } from './storage/property-index.js';
import { scanSplits, type ScanSplit } from './storage/scan-split.js';
import { observeConfig, type ObserveConfig } from './observe/config.js';
import { azuriteUsage, translateAzuriteArgs } from './azurite-flags.js';

export interface Config {
  /** --host: each service's address unless its own flag names another. */
  readonly host: string;
  /** Each service's listen address (--table-host, --queue-host, --blob-host; default --host). */
  readonly tableHost: string;
  readonly queueHost: string;
  readonly blobHost: string;
  /** Azurite flags given that change nothing here, each with why (azurite-flags.ts): one log line. */
  readonly azuriteInert: readonly string[];
  /** The Table service's port (0: any free one). */
  readonly port: number;
  /** The Queue service's port, used once the queue service is registered (0: any free one). */
  readonly queuePort: number;
  /** The Blob service's port (0: any free one). */
  readonly blobPort: number;
  /** Data directory; undefined with --in-memory. */
  readonly location: string | undefined;
  /** PostgreSQL connection URL (postgres:// or postgresql://): the PostgreSQL engine instead of SQLite. */
  readonly database: string | undefined;
  /** A hot standby of `database`: it serves the read-access secondary endpoint (`{account}-secondary`). */
  readonly secondaryDatabase: string | undefined;
  readonly logLevel: LogLevel;
  /** Requests handled at once; more get 503 ServerBusy (throttling). */
  readonly requestsInFlightMax: number;
  /** Azurite's `name:key1[:key2];…` format. */
  readonly azuriteAccounts: string | undefined;
  /**
   * Serve HTTPS: PEM files of the certificate chain and its private key, or (no key, a password) a PFX
   * file and its password, as Azurite's --cert/--key/--pwd.
   */
  readonly tls: { readonly certFile: string; readonly keyFile?: string; readonly password?: string } | undefined;
  /** Entra ID bearer tokens, enabled by a JWKS and/or PEM key file. */
  readonly oauth: OAuthConfig | undefined;
  /** Metrics, insights, throttling and fault injection. */
  readonly observe: ObserveConfig;
  /** Serve the web explorer at /_explorer/: by default only on a loopback address (README "Explorer"). */
  readonly explorer: boolean;
  /** When a filtered scan's steps run on two scan threads at once (SQLite on disk). */
  readonly scanSplit: ScanSplit;
  /** Rows a table's scans examine for one property before it is indexed; 0 never (storage/property-index.ts). */
  readonly autoIndexRows: number;
  /** How long to keep retrying to open a PostgreSQL database that is not up yet; 0: fail at once. */
  readonly waitForDatabaseSeconds: number;
  /** How long unreferenced blob content stays before the reclaim removes it (blobReclaimGraceSecondsDefault). */
  readonly blobReclaimGraceSeconds: number;
  /** How long a blob's rehydration from the archive tier takes here (blobRehydrateDelayMsDefault). */
  readonly blobRehydrateDelayMs: number;
  /** Keep every blob's previous versions, in every account (docs/blob.md "Versions"). */
  readonly blobVersioning: boolean;
  /** Days a deleted container is kept, restorable, in every account; 0 none (docs/blob.md "Container soft delete"). */
  readonly containerSoftDeleteDays: number;
}

/** One server option: its flag, its environment variable, its default and its line of help. */
export interface ServerFlag {
  /** The long flag without dashes; a switch named `no-x` turns x off. */
  readonly name: string;
  /** The value's placeholder, e.g. `<number>`; undefined: a switch. */
  readonly value?: string;
  /** A switch's variable is on for 1/true/yes and off for 0/false/no (inverted for `no-x`). */
  readonly env?: string;
  /** The default as the usage text shows it. */
  readonly defaultText?: string;
  readonly help: string;
}

export const serverFlags: readonly ServerFlag[] = [
  { name: 'host', value: '<address>', env: 'CERULEAN_HOST', defaultText: '127.0.0.1', help: 'listen address' },
  ...(['table', 'queue', 'blob'] as const).map((service) => ({
    name: `${service}-host`,
    value: '<address>',
    env: `CERULEAN_${service.toUpperCase()}_HOST`,
    defaultText: '--host',
    help: `the ${title(service)} service's listen address`,
  })),
  {
    name: 'port',
    value: '<number>',
    env: 'CERULEAN_PORT',
    defaultText: '10002',
    help: 'Table service port, 0 = any free',
  },
  {
    name: 'queue-port',
    value: '<number>',
    env: 'CERULEAN_QUEUE_PORT',
    defaultText: '10001',
    help: 'Queue service port, 0 = any free',
  },
  {
    name: 'blob-port',
    value: '<number>',
    env: 'CERULEAN_BLOB_PORT',
    defaultText: '10000',
    help: 'Blob service port, 0 = any free',
  },
  { name: 'location', value: '<dir>', env: 'CERULEAN_LOCATION', defaultText: './data', help: 'data directory' },
  { name: 'in-memory', env: 'CERULEAN_IN_MEMORY', help: 'keep nothing on disk' },
  {
    name: 'database',
    value: '<url>',
    env: 'CERULEAN_DATABASE_URL',
    help:
      'keep the data in PostgreSQL instead (postgres://user:pass@host:5432/db); processes may share one; ' +
      'several hosts h1:5432,h2:5432 with ?target_session_attrs=read-write follow a failover',
  },
  {
    name: 'secondary-database',
    value: '<url>',
    env: 'CERULEAN_SECONDARY_DATABASE_URL',
    help: 'a hot standby of --database: it serves the read-access {account}-secondary endpoint',
  },
  {
    name: 'wait-for-database',
    value: '<seconds>',
    env: 'CERULEAN_WAIT_FOR_DATABASE',
    defaultText: '0',
    help: 'keep trying to reach the --database this long at start (a database starting beside the server)',
  },
  { name: 'log-level', value: '<level>', env: 'CERULEAN_LOG_LEVEL', defaultText: 'info', help: logLevels.join('|') },
  {
    name: 'max-requests',
    value: '<n>',
    env: 'CERULEAN_MAX_REQUESTS',
    defaultText: String(requestsInFlightMax),
    help: 'requests handled at once; more get 503 ServerBusy',
  },
  {
    name: 'cert',
    value: '<file>',
    env: 'CERULEAN_CERT',
    help: 'serve HTTPS: a PEM certificate chain (with --key) or a PFX file (with --cert-password)',
  },
  { name: 'key', value: '<file>', env: 'CERULEAN_KEY', help: 'PEM private key of --cert' },
  { name: 'cert-password', value: '<password>', env: 'CERULEAN_CERT_PASSWORD', help: 'password of a PFX --cert' },
  {
    name: 'oauth',
    value: '<level>',
    env: 'CERULEAN_OAUTH',
    help: "basic: accept bearer tokens checking issuer, audience and lifetime, not the signature (Azurite's level)",
  },
  {
    name: 'oauth-jwks',
    value: '<file>',
    env: 'CERULEAN_OAUTH_JWKS',
    help: 'accept Entra ID bearer tokens signed by a key of this JWKS',
  },
  {
    name: 'oauth-pem',
    value: '<file>',
    env: 'CERULEAN_OAUTH_PEM',
    help: '... or by a PEM public key or certificate of this file',
  },
  {
    name: 'oauth-issuer',
    value: '<iss>',
    env: 'CERULEAN_OAUTH_ISSUER',
    defaultText: 'any',
    help: 'accepted token issuers, comma-separated',
  },
  {
    name: 'oauth-audience',
    value: '<aud>',
    env: 'CERULEAN_OAUTH_AUDIENCE',
    defaultText: 'https://storage.azure.com and the account-scoped service URL',
    help: 'accepted audiences, comma-separated',
  },
  { name: 'no-metrics', env: 'CERULEAN_METRICS', help: 'keep no metrics or insights' },
  {
    name: 'metrics-partitions',
    env: 'CERULEAN_METRICS_PARTITIONS',
    help: 'metrics for the busiest partitions of each table',
  },
  { name: 'metrics-public', env: 'CERULEAN_METRICS_PUBLIC', help: '/_metrics and /_insights open to every address' },
  {
    name: 'throttle',
    value: '<rates>',
    env: 'CERULEAN_THROTTLE',
    help:
      "'azure' (2000 entities/s per partition, 500 requests/s per blob, 20000 per account) or " +
      "'partition=N,account=M,blob=K': 503 past them",
  },
  {
    name: 'faults',
    value: '<file>',
    env: 'CERULEAN_FAULTS',
    help: 'fault injection rules, JSON (change them at /_faults)',
  },
  {
    name: 'explorer',
    env: 'CERULEAN_EXPLORER',
    defaultText: 'on for a loopback --host only',
    help: 'serve the web explorer at /_explorer/',
  },
  {
    name: 'scan-split',
    value: '<when>',
    env: 'CERULEAN_SCAN_SPLIT',
    defaultText: 'auto',
    help: `${scanSplits.join('|')}: run a lone filtered scan's steps on two scan threads (auto: while cores idle)`,
  },
  {
    name: 'auto-index',
    value: '<rows>',
    env: 'CERULEAN_AUTO_INDEX',
    defaultText: String(autoIndexRowsDefault),
    help: "index a table's property for equality filters once its scans have examined this many rows; 0 never",
  },
  {
    name: 'blob-reclaim-grace',
    value: '<seconds>',
    env: 'CERULEAN_BLOB_RECLAIM_GRACE',
    defaultText: String(blobReclaimGraceSecondsDefault),
    help: 'how long deleted blob content stays on disk before its space is freed',
  },
  {
    name: 'blob-rehydrate-delay',
    value: '<ms>',
    env: 'CERULEAN_BLOB_REHYDRATE_DELAY',
    defaultText: String(blobRehydrateDelayMsDefault),
    help: 'how long a rehydration from the archive tier takes (Azure: hours; 0: done at once; docs/blob.md)',
  },
  {
    name: 'blob-versioning',
    env: 'CERULEAN_BLOB_VERSIONING',
    defaultText: 'off',
    help: "keep blobs' previous versions, in every account (Azure: an account setting; docs/blob.md)",
  },
  {
    name: 'container-soft-delete-days',
    value: '<days>',
    env: 'CERULEAN_CONTAINER_SOFT_DELETE_DAYS',
    defaultText: '0, off',
    help: 'keep deleted containers, restorable, 1 to 365 days, in every account (Azure: an account setting)',
  },
];

/** The usage text, made from serverFlags. */
export function serverUsage(): string {
  const lines = serverFlags.map((flag) => {
    const left = `  --${flag.name}${flag.value === undefined ? '' : ` ${flag.value}`}`;
    const where = [envText(flag), flag.defaultText === undefined ? undefined : `default ${flag.defaultText}`];
    const extra = where.filter((part) => part !== undefined).join(', ');
    return `${left.padEnd(31)} ${flag.help}${extra === '' ? '' : ` (${extra})`}`;
  });
  return [
    'Usage: cerulean [serve] [options]',
    '',
    ...lines,
    `${'  --help'.padEnd(31)} print this text`,
    '',
    "Azurite's options, with Azurite's meaning (docs/switching-from-azurite.md):",
    ...azuriteUsage(),
    '',
    'Extra accounts: AZURITE_ACCOUNTS="name:key1[:key2];name2:key1" (Azurite\'s format).',
  ].join('\n');
}

function title(service: string): string {
  return `${service[0]!.toUpperCase()}${service.slice(1)}`;
}

/** A switch's variable as it turns the switch on. */
function envText(flag: ServerFlag): string | undefined {
  if (flag.env === undefined || flag.value !== undefined) return flag.env;
  return `${flag.env}=${flag.name.startsWith('no-') ? 0 : 1}`;
}

/** A usage error: the server prints it as one line and a hint, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface FlagValues {
  /** Azurite flags given that change nothing here. */
  readonly inert: readonly string[];
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  /** The flags given on the command line (not from the environment). */
  readonly given: ReadonlySet<string>;
}

/** Each flag's value from the command line, else from its environment variable, else undefined. */
function readFlags(argv: readonly string[], env: NodeJS.ProcessEnv): FlagValues | 'help' {
  const program = new Command('serve')
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined })
    .helpOption(false)
    .allowExcessArguments(false)
    .addOption(new Option('--help'));
  const options = serverFlags.map((flag) => {
    const option = new Option(`--${flag.name}${flag.value === undefined ? '' : ` ${flag.value}`}`);
    program.addOption(option);
    return { flag, option };
  });
  const azurite = translateAzuriteArgs(argv);
  try {
    program.parse([...azurite.argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    throw new UsageError(error.message.replace(/^error: /, ''));
  }
  if (program.opts()['help'] === true) return 'help';
  const values: Record<string, string | boolean | undefined> = {};
  const given = new Set<string>();
  for (const { flag, option } of options) {
    const key = option.attributeName();
    const cli = program.getOptionValueSource(key) === 'cli' ? (program.opts()[key] as string | boolean) : undefined;
    if (cli !== undefined) given.add(flag.name);
    if (cli !== undefined) values[flag.name] = option.negate ? !cli : cli;
    else values[flag.name] = flag.env === undefined ? undefined : fromEnv(flag, env[flag.env]);
  }
  return { values, given, inert: azurite.inert };
}

function fromEnv(flag: ServerFlag, text: string | undefined): string | boolean | undefined {
  if (text === undefined || text === '') return undefined;
  if (flag.value !== undefined) return text;
  const on = /^(1|true|yes)$/i.test(text) ? true : /^(0|false|no)$/i.test(text) ? false : undefined;
  return on === undefined || !flag.name.startsWith('no-') ? on : !on;
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config | 'help' {
  const flags = readFlags(argv, env);
  if (flags === 'help') return 'help';
  const text = (name: string): string | undefined => flags.values[name] as string | undefined;
  const on = (name: string): boolean | undefined => flags.values[name] as boolean | undefined;
  const logLevel = text('log-level') ?? 'info';
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new UsageError(`--log-level must be one of ${logLevels.join(', ')}, not '${logLevel}'`);
  }
  const scanSplit = text('scan-split') ?? 'auto';
  if (!(scanSplits as readonly string[]).includes(scanSplit)) {
    throw new UsageError(`--scan-split must be one of ${scanSplits.join(', ')}, not '${scanSplit}'`);
  }
  const host = text('host') ?? '127.0.0.1';
  const hosts = { tableHost: text('table-host') ?? host, queueHost: text('queue-host') ?? host };
  const blobHost = text('blob-host') ?? host;
  const location = text('location');
  return {
    host,
    ...hosts,
    blobHost,
    azuriteInert: flags.inert,
    port: portNumber('--port', text('port') ?? '10002'),
    queuePort: portNumber('--queue-port', text('queue-port') ?? '10001'),
    blobPort: portNumber('--blob-port', text('blob-port') ?? '10000'),
    location: on('in-memory') === true ? undefined : (location ?? './data'),
    // --location and --in-memory on the command line exclude a database, from the environment too.
    database: databaseUrl(text('database'), flags.given.has('location') || flags.given.has('in-memory')),
    secondaryDatabase: secondaryDatabaseUrl(text('secondary-database'), text('database')),
    waitForDatabaseSeconds: whole('--wait-for-database', text('wait-for-database') ?? '0', 0),
    logLevel: logLevel as LogLevel,
    requestsInFlightMax: whole('--max-requests', text('max-requests') ?? String(requestsInFlightMax), 1),
    azuriteAccounts: env['AZURITE_ACCOUNTS'],
    tls: tlsConfig(text('cert'), text('key'), text('cert-password')),
    oauth: oauthConfig({
      jwksFile: text('oauth-jwks'),
      pemFile: text('oauth-pem'),
      issuers: list(text('oauth-issuer')),
      audiences: list(text('oauth-audience')),
      unsigned: oauthLevel(text('oauth')),
    }),
    observe: usageErrors(() =>
      observeConfig({
        'no-metrics': on('no-metrics'),
        'metrics-partitions': on('metrics-partitions'),
        'metrics-public': on('metrics-public'),
        throttle: text('throttle'),
        faults: text('faults'),
      }),
    ),
    // The explorer is served beside each service: on by default only when every address is loopback.
    explorer: on('explorer') ?? [hosts.tableHost, hosts.queueHost, blobHost].every(isLoopback),
    scanSplit: scanSplit as ScanSplit,
    autoIndexRows: whole('--auto-index', text('auto-index') ?? String(autoIndexRowsDefault), 0),
    blobReclaimGraceSeconds: whole(
      '--blob-reclaim-grace',
      text('blob-reclaim-grace') ?? String(blobReclaimGraceSecondsDefault),
      0,
    ),
    blobRehydrateDelayMs: whole(
      '--blob-rehydrate-delay',
      text('blob-rehydrate-delay') ?? String(blobRehydrateDelayMsDefault),
      0,
    ),
    blobVersioning: on('blob-versioning') ?? false,
    containerSoftDeleteDays: retentionDays('--container-soft-delete-days', text('container-soft-delete-days') ?? '0'),
  };
}

/** An Error thrown while reading a flag's value is a usage error. */
function usageErrors<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function whole(flag: string, text: string, min: number): number {
  if (!/^\d{1,15}$/.test(text) || Number(text) < min) {
    throw new UsageError(`${flag} must be a whole number from ${min}, not '${text}'`);
  }
  return Number(text);
}

/** Container soft delete's retention: 1 to 365 days as the service's (soft-delete-container-overview), or 0. */
function retentionDays(flag: string, text: string): number {
  const days = whole(flag, text, 0);
  if (days > 365) throw new UsageError(`${flag} must be 0 (off) or 1 to 365 days, not '${text}'`);
  return days;
}

function portNumber(flag: string, text: string): number {
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port > 65535) throw new UsageError(`${flag} must be 0 to 65535, not '${text}'`);
  return port;
}

/** A PostgreSQL URL, checked; --location and --in-memory name the SQLite engine and exclude it. */
function databaseUrl(text: string | undefined, sqliteFlags: boolean): string | undefined {
  if (text === undefined || text === '') return undefined;
  if (sqliteFlags) throw new UsageError('--database selects PostgreSQL: it excludes --location and --in-memory');
  try {
    checkDatabaseUrl(text);
  } catch (error) {
    throw new UsageError(`--database: ${(error as Error).message}`);
  }
  return text;
}

function secondaryDatabaseUrl(text: string | undefined, database: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  if (database === undefined || database === '') {
    throw new UsageError('--secondary-database is a standby of --database: name both');
  }
  return databaseUrl(text, false);
}

/** 127.0.0.0/8, ::1 and localhost: only this machine can reach the listener. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** A PEM pair (--cert, --key) or a PFX file and its password (--cert, --cert-password), as Azurite decides. */
function tlsConfig(
  certFile: string | undefined,
  keyFile: string | undefined,
  password: string | undefined,
): Config['tls'] {
  if (certFile === undefined && keyFile === undefined && password === undefined) return undefined;
  if (certFile === undefined) throw new UsageError('--cert and --key go together (--cert-password: a PFX --cert)');
  if (keyFile !== undefined) return { certFile, keyFile, ...(password === undefined ? {} : { password }) };
  if (password === undefined)
    throw new UsageError('--cert and --key go together (or --cert-password for a PFX --cert)');
  return { certFile, password };
}

/** --oauth: Azurite knows one level, basic (tokens taken unsigned). */
function oauthLevel(level: string | undefined): boolean {
  if (level === undefined) return false;
  if (level.toLowerCase() !== 'basic') throw new UsageError(`--oauth must be basic, not '${level}'`);
  return true;
}

function oauthConfig(oauth: OAuthConfig): OAuthConfig | undefined {
  if (oauth.jwksFile !== undefined || oauth.pemFile !== undefined || oauth.unsigned === true) return oauth;
  if (oauth.issuers !== undefined || oauth.audiences !== undefined) {
    throw new UsageError('--oauth-issuer and --oauth-audience need --oauth-jwks or --oauth-pem');
  }
  return undefined;
}

/** A comma-separated list; undefined when absent or empty. */
function list(text: string | undefined): string[] | undefined {
  const entries = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return entries.length === 0 ? undefined : entries;
}
