// What the Blob service's error answers mean to a command-line user: one line each.
import { CliError } from './command.js';
import { BackupFormatError } from './account-backup.js';
import { ContentMismatchError } from './blob-transfer.js';

interface AnsweredError {
  readonly statusCode?: number;
  readonly code?: string;
  readonly message: string;
}

/** "ContainerNotFound (404): The specified container does not exist." for a service's answer. */
export function blobError(error: unknown, where: string): Error {
  if (error instanceof CliError) return error;
  if (error instanceof BackupFormatError || error instanceof ContentMismatchError) return new CliError(error.message);
  const answered = error as AnsweredError;
  if (error instanceof Error && typeof answered.statusCode === 'number') {
    const first = answered.message.split('\n')[0] ?? '';
    return new CliError(`${where}: ${answered.statusCode} ${answered.code ?? ''}: ${first}`.replace(/ :/, ':'));
  }
  if (error instanceof Error && 'code' in error && typeof error.code === 'string')
    return new CliError(`${where}: ${error.message}`); // a network failure or a file system error
  return error instanceof Error ? error : new Error(String(error));
}
