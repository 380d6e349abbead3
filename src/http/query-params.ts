// Integer and required query parameters of the Blob and Queue services (maxresults, numofmessages,
// visibilitytimeout, …). Not an integer: 400 InvalidQueryParameterValue; an integer outside the range:
// 400 OutOfRangeQueryParameterValue naming the parameter, its value and the range in elements of the
// error body (queue-service-error-codes; the service's recorded answers show the elements).
import { invalidQueryParameter, outOfRangeQueryParameter, StorageError } from '../errors.js';

export interface IntegerRange {
  readonly min: number;
  readonly max: number;
}

/** The parameter's value, or `fallback` when it is absent. */
export function integerParam(query: URLSearchParams, name: string, range: IntegerRange, fallback: number): number;
export function integerParam(query: URLSearchParams, name: string, range: IntegerRange): number | undefined;
export function integerParam(
  query: URLSearchParams,
  name: string,
  range: IntegerRange,
  fallback?: number,
): number | undefined {
  const text = query.get(name);
  if (text === null) return fallback;
  const value = parseInteger(name, text);
  if (value < range.min || value > range.max) throw outOfRangeQueryParameter(name, text, range.min, range.max);
  return value;
}

/** How large a query integer may be: the service's parameters are 32-bit, messagettl 64-bit. */
export const int32Max = 2 ** 31 - 1;
export const int64Max = 2n ** 63n - 1n;

/**
 * A decimal integer, optionally signed, whose magnitude is at most `max` (Int32 unless said);
 * anything else is InvalidQueryParameterValue. A value past 2^53 comes back rounded to the nearest
 * double: only messagettl takes one, and there it means "later than the year 9999" either way.
 */
export function parseInteger(name: string, text: string, max: bigint = BigInt(int32Max)): number {
  const digits = /^[-+]?(\d{1,19})$/.exec(text)?.[1];
  if (digits === undefined || BigInt(digits) > max) {
    const size = max === BigInt(int32Max) ? '32-bit' : '64-bit';
    throw invalidQueryParameter(name, text, `The value is not a ${size} integer.`);
  }
  return Number(text);
}

/** A query parameter the operation cannot do without: 400 MissingRequiredQueryParameter. */
export function requiredParam(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null) {
    throw new StorageError('MissingRequiredQueryParameter', undefined, undefined, [['QueryParameterName', name]]);
  }
  return value;
}
