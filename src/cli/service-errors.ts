// What the service's error answers mean to a command-line user: one line each.
import { RestError } from '@azure/data-tables';
import { CliError } from './command.js';

/** "409 EntityAlreadyExists: The specified entity already exists." (the first line of the message). */
export function reasonOf(error: unknown): string {
  if (error instanceof RestError) {
    // A transaction's error message starts with the failed operation's index ("3:…").
    const message = (error.message.split('\n')[0] ?? '').replace(/^\d+:/, '');
    const status = [error.statusCode, error.code].filter((part) => part !== undefined).join(' ');
    return status === '' ? message : `${status}: ${message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A failure reading or writing `table`, as a CliError with a clear message. */
export function tableError(error: unknown, table: string): Error {
  if (error instanceof CliError) return error;
  if (error instanceof RestError && (error.code === 'TableNotFound' || error.code === 'ResourceNotFound')) {
    return new CliError(`table ${table} does not exist`);
  }
  if (error instanceof RestError) return new CliError(`${table}: ${reasonOf(error)}`);
  return error as Error;
}
