// Continuation tokens in the service's shape (Azure REST: query-timeout-and-pagination): "1!" + length + "!" + payload,
// where
// payload is the base64 of the UTF-8 key with '=' padding written as '-'. The service's mapping of
// '+' and '/' is unverified; we write '.' and '_' so a token never needs escaping in a URL (a raw
// '+' would turn into a space in a query string), and read '+', '/' and '=' as well.
import { StorageError } from '../../errors.js';

export function encodeContinuation(key: string): string {
  const payload = Buffer.from(key, 'utf8')
    .toString('base64')
    .replace(/\+/g, '.')
    .replace(/\//g, '_')
    .replace(/=/g, '-');
  return `1!${payload.length}!${payload}`;
}

/** The key a token names; 400 InvalidInput for a token we did not make (unverified code). */
export function decodeContinuation(token: string): string {
  const match = /^1!(\d+)!([A-Za-z0-9+/._=-]*)$/.exec(token);
  if (match === null || Number(match[1]) !== match[2]!.length) throw invalidToken();
  const base64 = match[2]!.replace(/-/g, '=').replace(/\./g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw invalidToken();
  const bytes = Buffer.from(base64, 'base64');
  const key = bytes.toString('utf8');
  if (!Buffer.from(key, 'utf8').equals(bytes)) throw invalidToken();
  return key;
}

function invalidToken(): StorageError {
  return new StorageError('InvalidInput', 'The continuation token is not valid.');
}
