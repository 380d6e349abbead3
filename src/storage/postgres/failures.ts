// What a failure of the database means to a client. Every failure becomes an Azure error and
// none hangs: an unreachable database or an exhausted pool is 503 ServerBusy (retry later: the
// request certainly did nothing), a statement past its time is 500 OperationTimedOut (cancelled,
// so it did nothing either), a value the database refuses is 400 InvalidInput, and a write whose
// outcome the connection took with it is 500 InternalError (it may or may not have applied: a
// 503 would have the client retry, and its retry then fail on its own write with 409 or 412).
import { causedBy, StorageError } from '../../errors.js';

/** Serialization failure and deadlock: the transaction was rolled back and may simply run again. */
const retryableCodes = new Set(['40001', '40P01']);

/**
 * SQLSTATEs of a database that is shutting down, starting, overloaded (class 53: out of disk,
 * memory or connections) or out of reach, and of a row lock held too long.
 */
const unavailableCodes = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53000',
  '53100',
  '53200',
  '53300',
  '53400',
  '55P03',
  '58000',
  '58030',
]);

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
  const lost = /Connection terminated|connection timeout|Query read timeout|not queryable/i;
  return lost.test(message) || /Client has encountered a connection error/i.test(message);
}

/**
 * A write that was sent (a lone statement, or a transaction's COMMIT) and whose connection then
 * failed: the database may or may not have applied it.
 */
export class WriteOutcomeUnknown extends Error {
  constructor(readonly failure: unknown) {
    super('The database connection was lost while writing; the outcome is unknown.');
  }
}

/**
 * What the failure of a sent write means: unknown when the connection failed (the database may
 * have committed before it went), the failure itself when the database answered it (the write
 * was rolled back) or when the driver refused to send it (a client already broken).
 */
export function sentWriteFailure(error: unknown): unknown {
  const message = error instanceof Error ? error.message : '';
  if (!isConnectionFailure(error) || /not queryable/i.test(message)) return error;
  return new WriteOutcomeUnknown(error);
}

/**
 * The Azure error for a database failure, or the failure itself when it is a bug of ours (the
 * front door answers those 500 InternalError and logs them).
 */
export function azureError(error: unknown): unknown {
  if (error instanceof StorageError) return error;
  if (error instanceof WriteOutcomeUnknown) {
    return causedBy(new StorageError('InternalError', error.message), databaseCause(error.failure));
  }
  const code = codeOf(error) ?? '';
  const message = error instanceof Error ? error.message : '';
  if (code === '57014' || /Query read timeout/i.test(message)) {
    return causedBy(new StorageError('OperationTimedOut'), databaseCause(error));
  }
  // Class 22, a data exception: a value the database cannot hold or compare. Every value this
  // engine sends is encoded so that none is refused; one that still is came with the request.
  if (code.startsWith('22')) return causedBy(new StorageError('InvalidInput'), databaseCause(error));
  if (unavailableCodes.has(code) || retryableCodes.has(code) || isUnreachable(error)) {
    return causedBy(new StorageError('ServerBusy'), databaseCause(error));
  }
  return error;
}

/** The database is out of reach: down, starting, shutting down, or not answering a connection. */
export function isUnreachable(error: unknown): boolean {
  const code = codeOf(error) ?? '';
  const message = error instanceof Error ? error.message : '';
  return isConnectionFailure(error) || code === '57P03' || /timeout exceeded when trying to connect/i.test(message);
}

/** A database failure in one line, for the log: `database: <message> (<code>)`. */
function databaseCause(error: unknown): string {
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  return `database: ${message.split('\n')[0]}${code === undefined ? '' : ` (${code})`}`;
}

/**
 * Says once that the database went out of reach (with the failure) and once that it is back (a
 * new connection opened), however many requests fail in between.
 */
export class Reachability {
  private lost = false;

  constructor(private readonly report: (reachable: boolean, detail: string) => void) {}

  /** A statement or connection failed with `error`. */
  failed(error: unknown): void {
    if (this.lost || !isUnreachable(error)) return;
    this.lost = true;
    this.report(false, databaseCause(error));
  }

  /** A connection to the database opened. */
  reached(): void {
    if (!this.lost) return;
    this.lost = false;
    this.report(true, 'a connection opened');
  }
}
