// What a failure of the database means to a client. Every failure becomes an Azure error and
// none hangs: an unreachable database or an exhausted pool is 503 ServerBusy (retry later), a
// statement past its time is 500 OperationTimedOut, and a commit whose outcome the connection
// took with it is 500 InternalError (it may or may not have applied).
import { TableError } from '../../errors.js';

/** Serialization failure and deadlock: the transaction was rolled back and may simply run again. */
const retryableCodes = new Set(['40001', '40P01']);

/** SQLSTATEs of a database that is shutting down, starting, overloaded or out of reach. */
const unavailableCodes = new Set(['57P01', '57P02', '57P03', '53300', '53400', '55P03', '58000', '58030']);

/** Node socket errors of a database out of reach. */
const unreachableErrnos = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isRetryable(error: unknown): boolean {
  return retryableCodes.has(codeOf(error) ?? '');
}

/** A foreign key violation: the table a write names was deleted under it. */
export function isMissingTable(error: unknown): boolean {
  return codeOf(error) === '23503';
}

/**
 * True when the database refused the statement itself (a constraint, a deadlock, a row lock held
 * too long), not when it was out of reach, overloaded or the statement ran out of time: running
 * the statement's parts apart may then succeed.
 */
export function isStatementFailure(error: unknown): boolean {
  const code = codeOf(error);
  if (code === undefined || isConnectionFailure(error) || code === '57014') return false;
  return code === '55P03' || !unavailableCodes.has(code);
}

/** True when the connection itself is unusable (the pool must discard it). */
export function isConnectionFailure(error: unknown): boolean {
  const code = codeOf(error) ?? '';
  if (unreachableErrnos.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02') return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection timeout|Query read timeout|not queryable|Client has encountered a connection error/i.test(
    message,
  );
}

/**
 * The Azure error for a database failure, or the failure itself when it is a bug of ours (the
 * front door answers those 500 InternalError and logs them). `committing`: the failure came
 * while COMMIT was on its way, so the outcome is unknown.
 */
export function azureError(error: unknown, committing = false): unknown {
  if (error instanceof TableError) return error;
  const code = codeOf(error) ?? '';
  const message = error instanceof Error ? error.message : '';
  if (committing && isConnectionFailure(error)) {
    return new TableError(
      'InternalError',
      'The database connection was lost while committing; the outcome is unknown.',
    );
  }
  if (code === '57014' || /Query read timeout/i.test(message)) return new TableError('OperationTimedOut');
  if (
    unavailableCodes.has(code) ||
    retryableCodes.has(code) ||
    isConnectionFailure(error) ||
    /timeout exceeded when trying to connect/i.test(message)
  ) {
    return new TableError('ServerBusy');
  }
  return error;
}
