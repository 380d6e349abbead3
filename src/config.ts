// Command-line flags and their environment equivalents. Flags win over the environment.
import { parseArgs } from 'node:util';
import { logLevels, type LogLevel } from './http/log.js';
import { requestsInFlightMax } from './limits.js';
import { autoIndexRowsDefault } from './storage/property-index.js';
import { observeConfig, observeFlags, observeUsage, type ObserveConfig } from './observe/config.js';

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Data directory; undefined with --in-memory. */
  readonly location: string | undefined;
  /** PostgreSQL connection URL (postgres:// or postgresql://): the PostgreSQL engine instead of SQLite. */
  readonly database: string | undefined;
  readonly logLevel: LogLevel;
  /** Requests handled at once; more get 503 ServerBusy (throttling). */
  readonly requestsInFlightMax: number;
  /** Azurite's `name:key1[:key2];…` format. */
  readonly azuriteAccounts: string | undefined;
  /** PEM files of the certificate chain and its private key: serve HTTPS. Both or neither. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  /** Entra ID bearer tokens, enabled by a JWKS and/or PEM key file. */
  readonly oauth: OAuthConfig | undefined;
  /** Metrics, insights, throttling and fault injection. */
  readonly observe: ObserveConfig;
  /** Serve the web explorer at /_explorer/: by default only on a loopback address (docs/explorer.md). */
  readonly explorer: boolean;
  /** When a filtered scan's steps run on two scan threads at once (SQLite on disk). */
  readonly scanSplit: ScanSplit;
  /**
   * Rows a table's scans examine for one property before the engine indexes it; 0 never (storage/property-index.ts).
   */
  readonly autoIndexRows: number;
}

export const scanSplits = ['auto', 'always', 'never'] as const;
export type ScanSplit = (typeof scanSplits)[number];

export interface OAuthConfig {
  readonly jwksFile: string | undefined;
  readonly pemFile: string | undefined;
  /** Accepted `iss` values; undefined = any. */
  readonly issuers: readonly string[] | undefined;
  /** Accepted `aud` values; undefined = the storage audience. */
  readonly audiences: readonly string[] | undefined;
}

export const usage = `Usage: cerulean [options]

  --host <address>     listen address            (CERULEAN_HOST, default 127.0.0.1)
  --port <number>      listen port, 0 = any free (CERULEAN_PORT, default 10002)
  --location <dir>     data directory            (CERULEAN_LOCATION, default ./data)
  --in-memory          keep nothing on disk      (CERULEAN_IN_MEMORY=1)
  --database <url>     keep the data in PostgreSQL instead: postgres://user:pass@host:5432/db
                       (CERULEAN_DATABASE_URL); any number of processes may share one database
  --log-level <level>  debug|info|warn|error|silent (CERULEAN_LOG_LEVEL, default info)
  --max-requests <n>   requests handled at once; more get 503 ServerBusy
                       (CERULEAN_MAX_REQUESTS, default ${requestsInFlightMax})
  --cert <file>        PEM certificate chain: serve HTTPS   (CERULEAN_CERT, with --key)
  --key <file>         PEM private key of --cert            (CERULEAN_KEY)
  --oauth-jwks <file>  accept Entra ID bearer tokens signed by a key of this JWKS (CERULEAN_OAUTH_JWKS)
  --oauth-pem <file>   ... or by a PEM public key or certificate of this file     (CERULEAN_OAUTH_PEM)
  --oauth-issuer <iss>    accepted token issuers, comma-separated (CERULEAN_OAUTH_ISSUER, default any)
  --oauth-audience <aud>  accepted audiences, comma-separated     (CERULEAN_OAUTH_AUDIENCE,
                          default https://storage.azure.com)
${observeUsage}
  --explorer           serve the web explorer at /_explorer/ on a non-loopback --host too
                       (CERULEAN_EXPLORER=1; =0 turns it off; default on for loopback only)
  --scan-split <when>  auto|always|never: run a lone filtered scan's steps on two scan threads
                       (CERULEAN_SCAN_SPLIT, default auto: while the cores are otherwise idle)
  --auto-index <rows>  index a table's property for equality filters once its scans have examined
                       this many rows for it; 0 never (CERULEAN_AUTO_INDEX, default ${autoIndexRowsDefault})
  --help               print this text

Extra accounts: AZURITE_ACCOUNTS="name:key1[:key2];name2:key1" (Azurite's format).`;

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config | 'help' {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      location: { type: 'string' },
      'in-memory': { type: 'boolean' },
      database: { type: 'string' },
      'log-level': { type: 'string' },
      'max-requests': { type: 'string' },
      cert: { type: 'string' },
      key: { type: 'string' },
      'oauth-jwks': { type: 'string' },
      'oauth-pem': { type: 'string' },
      'oauth-issuer': { type: 'string' },
      'oauth-audience': { type: 'string' },
      ...observeFlags,
      explorer: { type: 'boolean' },
      'scan-split': { type: 'string' },
      'auto-index': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const portText = values.port ?? env['CERULEAN_PORT'] ?? '10002';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new Error(`--port must be 0 to 65535, not '${portText}'`);
  const logLevel = values['log-level'] ?? env['CERULEAN_LOG_LEVEL'] ?? 'info';
  if (!(logLevels as readonly string[]).includes(logLevel)) {
    throw new Error(`--log-level must be one of ${logLevels.join(', ')}, not '${logLevel}'`);
  }
  const inMemory = values['in-memory'] ?? /^(1|true|yes)$/i.test(env['CERULEAN_IN_MEMORY'] ?? '');
  const maxRequestsText = values['max-requests'] ?? env['CERULEAN_MAX_REQUESTS'] ?? String(requestsInFlightMax);
  if (!/^[1-9]\d{0,6}$/.test(maxRequestsText)) {
    throw new Error(`--max-requests must be a whole number from 1, not '${maxRequestsText}'`);
  }
  const host = values.host ?? env['CERULEAN_HOST'] ?? '127.0.0.1';
  const explorerText = env['CERULEAN_EXPLORER'];
  const scanSplit = values['scan-split'] ?? env['CERULEAN_SCAN_SPLIT'] ?? 'auto';
  if (!(scanSplits as readonly string[]).includes(scanSplit))
    throw new Error(`--scan-split must be one of ${scanSplits.join(', ')}, not '${scanSplit}'`);
  const autoIndexText = values['auto-index'] ?? env['CERULEAN_AUTO_INDEX'] ?? String(autoIndexRowsDefault);
  if (!/^\d{1,15}$/.test(autoIndexText))
    throw new Error(`--auto-index must be a whole number of rows (0: never), not '${autoIndexText}'`);
  const database = databaseUrl(
    values.database ?? env['CERULEAN_DATABASE_URL'],
    values.location !== undefined || values['in-memory'] === true,
  );
  return {
    host,
    port,
    location: inMemory ? undefined : (values.location ?? env['CERULEAN_LOCATION'] ?? './data'),
    database,
    logLevel: logLevel as LogLevel,
    requestsInFlightMax: Number(maxRequestsText),
    azuriteAccounts: env['AZURITE_ACCOUNTS'],
    tls: tlsConfig(values.cert ?? env['CERULEAN_CERT'], values.key ?? env['CERULEAN_KEY']),
    oauth: oauthConfig({
      jwksFile: values['oauth-jwks'] ?? env['CERULEAN_OAUTH_JWKS'],
      pemFile: values['oauth-pem'] ?? env['CERULEAN_OAUTH_PEM'],
      issuers: list(values['oauth-issuer'] ?? env['CERULEAN_OAUTH_ISSUER']),
      audiences: list(values['oauth-audience'] ?? env['CERULEAN_OAUTH_AUDIENCE']),
    }),
    observe: observeConfig(values, env),
    explorer:
      values.explorer ??
      (explorerText === undefined || explorerText === '' ? isLoopback(host) : /^(1|true|yes)$/i.test(explorerText)),
    scanSplit: scanSplit as ScanSplit,
    autoIndexRows: Number(autoIndexText),
  };
}

/** A PostgreSQL URL, checked; --location and --in-memory name the SQLite engine and exclude it. */
function databaseUrl(text: string | undefined, sqliteFlags: boolean): string | undefined {
  if (text === undefined || text === '') return undefined;
  if (sqliteFlags) throw new Error('--database selects PostgreSQL: it excludes --location and --in-memory');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error('--database must be a URL such as postgres://user:password@host:5432/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error(`--database must start with postgres:// or postgresql://, not '${url.protocol}//'`);
  }
  return text;
}

/** 127.0.0.0/8, ::1 and localhost: only this machine can reach the listener. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function tlsConfig(certFile: string | undefined, keyFile: string | undefined): Config['tls'] {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) throw new Error('--cert and --key go together');
  return { certFile, keyFile };
}

function oauthConfig(oauth: OAuthConfig): OAuthConfig | undefined {
  if (oauth.jwksFile !== undefined || oauth.pemFile !== undefined) return oauth;
  if (oauth.issuers !== undefined || oauth.audiences !== undefined) {
    throw new Error('--oauth-issuer and --oauth-audience need --oauth-jwks or --oauth-pem');
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
