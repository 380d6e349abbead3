// What the service's error answers mean to a command-line user: one line each.
import { RestError } from '@azure/data-tables';
import { CliError } from './command.js';

interface ServiceError {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly message: string;
}

/**
 * The status, error code and first message line of a failed call. The SDK puts the error body's
 * text in the message for some operations and the parsed message for others; both are read here.
 */
export function serviceErrorOf(error: RestError): ServiceError {
  let code = error.code;
  let message = error.message;
  try {
    const body = JSON.parse(message) as { 'odata.error'?: { code?: string; message?: { value?: string } } };
    code = body['odata.error']?.code ?? code;
    message = body['odata.error']?.message?.value ?? message;
  } catch {
    // not a JSON body: the message is already text
  }
  // A transaction's error message starts with the failed operation's index ("3:…").
  return { status: error.statusCode, code, message: (message.split('\n')[0] ?? '').replace(/^\d+:/, '') };
}

/** "409 EntityAlreadyExists: The specified entity already exists." */
export function reasonOf(error: unknown): string {
  if (error instanceof RestError) {
    const { status, code, message } = serviceErrorOf(error);
    const prefix = [status, code].filter((part) => part !== undefined).join(' ');
    return prefix === '' ? message : `${prefix}: ${message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The error code the service answered with, if `error` is an answer. */
export function errorCodeOf(error: unknown): string | undefined {
  return error instanceof RestError ? serviceErrorOf(error).code : undefined;
}

/** A failure reading or writing `table`, as a CliError with a clear message. */
export function tableError(error: unknown, table: string): Error {
  if (error instanceof CliError) return error;
  if (errorCodeOf(error) === 'TableNotFound') return new CliError(`table ${table} does not exist`);
  if (error instanceof RestError) return new CliError(`${table}: ${reasonOf(error)}`);
  return error as Error;
}
