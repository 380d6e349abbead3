// A small leveled logger on stderr; stdout carries only the startup lines tools read.
import { inspect } from 'node:util';
import { diskFullFailure, StorageError } from '../errors.js';

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

/**
 * Logs the failure a request was answered with, at the level its cause deserves, in one line
 * unless it is a bug. `request` is `METHOD target` (loggedTarget). A client's error (4xx) is not
 * logged; 501 NotImplemented (the client asked for what Cerulean lacks) is one info line; an
 * expected 503 (throttling, a database out of reach, too many requests) one warn line with its
 * cause; another 5xx the service names (OperationTimedOut, InternalError) one error line with its
 * cause; anything else is a bug of ours: error, with its stack.
 */
export function logFailure(log: Logger, request: string, error: unknown): void {
  if (!(error instanceof StorageError)) {
    log.error(`failure answering ${request}`, error);
    return;
  }
  if (error.status < 500) return;
  const line = `${error.status} ${error.code} answering ${request}: ${causeText(error)}`;
  if (error.code === 'NotImplemented') log.info(line);
  else if (error.status === 503) log.warn(line);
  else log.error(line);
}

function causeText(error: StorageError): string {
  const { cause } = error;
  if (cause === undefined) return error.message;
  return cause instanceof Error ? cause.message.split('\n')[0]! : String(cause);
}

/** A request target for the log, with a SAS signature (`sig=`) masked. */
export function loggedTarget(url: string | undefined): string {
  return (url ?? '/').replace(/([?&]sig=)[^&]*/gi, '$1***');
}

/**
 * Logs the failure of a background task (the purge, the reclaim; the next run tries again): a full
 * disk, an expected condition, in one warn line; anything else as an error with its stack.
 */
export function logTaskFailure(log: Logger, task: string, error: unknown): void {
  const diskFull = diskFullFailure(error);
  if (diskFull !== undefined) log.warn(`${task}: ${causeText(diskFull)}`);
  else log.error(task, error);
}
