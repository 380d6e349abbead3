// Integer and required query parameters of the Blob and Queue services (maxresults, numofmessages,
// visibilitytimeout, …). Not an integer: 400 InvalidQueryParameterValue; an integer outside the range:
// 400 OutOfRangeQueryParameterValue (queue-service-error-codes; Azurite answers the same).
import { StorageError } from '../errors.js';

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
  if (value < range.min || value > range.max) {
    throw new StorageError(
      'OutOfRangeQueryParameterValue',
      `The value ${text} of ${name} is not between ${range.min} and ${range.max}.`,
    );
  }
  return value;
}

/** A decimal Int32-sized integer, optionally signed; anything else is InvalidQueryParameterValue. */
export function parseInteger(name: string, text: string): number {
  if (!/^[-+]?\d{1,10}$/.test(text) || Math.abs(Number(text)) > 2 ** 31 - 1) {
    throw new StorageError('InvalidQueryParameterValue', `The value '${text}' of ${name} is not an integer.`);
  }
  return Number(text);
}

/** A query parameter the operation cannot do without: 400 MissingRequiredQueryParameter. */
export function requiredParam(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null) {
    throw new StorageError('MissingRequiredQueryParameter', `The query parameter ${name} is required.`);
  }
  return value;
}
