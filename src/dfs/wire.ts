// The Data Lake API's own header and body forms: x-ms-properties, POSIX permissions, list
// continuations and JSON replies
// (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/create).
import { invalidHeaderValue, invalidQueryParameter, StorageError } from '../errors.js';
import type { Reply } from '../http/respond.js';

/** A C# identifier, ASCII only: properties are the blob's metadata, whose names follow that rule. */
const propertyName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * x-ms-properties: `n1=v1,n2=v2`, each value base64-encoded text; a name that cannot be metadata
 * is 400 InvalidPropertyName, a value that is not base64 400 InvalidHeaderValue.
 */
export function parseProperties(text: string | undefined): [string, string][] {
  if (text === undefined || text.trim() === '') return [];
  return text.split(',').map((pair) => {
    const equals = pair.indexOf('=');
    const name = (equals === -1 ? pair : pair.slice(0, equals)).trim();
    const value = equals === -1 ? '' : pair.slice(equals + 1).trim();
    if (!propertyName.test(name)) throw new StorageError('InvalidPropertyName');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0) {
      throw invalidHeaderValue('x-ms-properties', text);
    }
    return [name, Buffer.from(value, 'base64').toString('utf8')];
  });
}

export function formatProperties(properties: readonly (readonly [string, string])[]): string {
  return properties.map(([name, value]) => `${name}=${Buffer.from(value, 'utf8').toString('base64')}`).join(',');
}

const letters = 'rwxrwxrwx';

/**
 * x-ms-permissions: symbolic (`rwxr-x---`, a 10th `t`/`T` for the sticky bit) or 4-digit octal
 * (`0750`); the mode as 4 octal digits. Anything else is 400 InvalidHeaderValue.
 */
export function parseMode(name: string, text: string): string {
  if (/^[0-1][0-7]{3}$/.test(text)) return text;
  const match = /^([r-][w-][x-][r-][w-][x-][r-][w-])([-xtT])\+?$/.exec(text);
  if (match === null) throw invalidHeaderValue(name, text);
  const symbols = `${match[1]}${match[2]}`;
  let bits = 0;
  for (let i = 0; i < 9; i++) {
    const symbol = symbols[i]!;
    if (symbol === letters[i] || (i === 8 && symbol === 't')) bits |= 1 << (8 - i);
  }
  const sticky = symbols[8] === 't' || symbols[8] === 'T' ? '1' : '0';
  return `${sticky}${bits.toString(8).padStart(3, '0')}`;
}

/** The mode as x-ms-permissions shows it: `rwxr-x---`, sticky bit as `t` (with x) or `T`. */
export function formatMode(mode: string): string {
  const bits = parseInt(mode.slice(1), 8);
  let text = '';
  for (let i = 0; i < 9; i++) text += bits & (1 << (8 - i)) ? letters[i] : '-';
  if (mode[0] === '1') text = text.slice(0, 8) + (text[8] === 'x' ? 't' : 'T');
  return text;
}

/** `mode & ~umask`, both 4 octal digits (the sticky bit is kept). */
export function maskMode(mode: string, umask: string): string {
  const masked = parseInt(mode.slice(1), 8) & ~parseInt(umask.slice(1), 8);
  return `${mode[0]}${masked.toString(8).padStart(3, '0')}`;
}

/** A continuation is opaque: base64url of the name the next page starts at. */
export function encodeContinuation(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

export function decodeContinuation(text: string): string {
  const name = Buffer.from(text, 'base64url').toString('utf8');
  if (encodeContinuation(name) !== text)
    throw invalidQueryParameter('continuation', text, 'Not a continuation of this service.');
  return name;
}

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers: { 'Content-Type': 'application/json;charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

/** A Boolean query parameter (`recursive`, `close`, …): true, false or absent; anything else 400. */
export function booleanParam(query: URLSearchParams, name: string): boolean | undefined {
  const text = query.get(name);
  if (text === null) return undefined;
  if (text.toLowerCase() === 'true') return true;
  if (text.toLowerCase() === 'false') return false;
  throw invalidQueryParameter(name, text, 'The value is not true or false.');
}
