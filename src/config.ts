// Command-line flags and their environment equivalents. Flags win over the environment.
import { parseArgs } from 'node:util';
import { logLevels, type LogLevel } from './http/log.js';

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Data directory; undefined with --in-memory. */
  readonly location: string | undefined;
  readonly logLevel: LogLevel;
  /** Azurite's `name:key1[:key2];…` format. */
  readonly azuriteAccounts: string | undefined;
}

export const usage = `Usage: cerulean [options]

  --host <address>     listen address            (CERULEAN_HOST, default 127.0.0.1)
  --port <number>      listen port, 0 = any free (CERULEAN_PORT, default 10002)
  --location <dir>     data directory            (CERULEAN_LOCATION, default ./data)
  --in-memory          keep nothing on disk      (CERULEAN_IN_MEMORY=1)
  --log-level <level>  debug|info|warn|error|silent (CERULEAN_LOG_LEVEL, default info)
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
      'log-level': { type: 'string' },
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
  return {
    host: values.host ?? env['CERULEAN_HOST'] ?? '127.0.0.1',
    port,
    location: inMemory ? undefined : values.location ?? env['CERULEAN_LOCATION'] ?? './data',
    logLevel: logLevel as LogLevel,
    azuriteAccounts: env['AZURITE_ACCOUNTS'],
  };
}
