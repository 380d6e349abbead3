// A small leveled logger on stderr; stdout carries only the startup lines tools read.
import { inspect } from 'node:util';

export const logLevels = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

export function createLogger(level: LogLevel): Logger {
  const rank = logLevels.indexOf(level);
  const write = (at: LogLevel, message: string): void => {
    if (logLevels.indexOf(at) >= rank) process.stderr.write(`${new Date().toISOString()} ${at} ${message}\n`);
  };
  return {
    info: (message) => write('info', message),
    warn: (message) => write('warn', message),
    error: (message, error) => write('error', error === undefined ? message : `${message}: ${inspect(error)}`),
  };
}
