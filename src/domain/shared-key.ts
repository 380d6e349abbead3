// Signing a request with an account key, Table service format
// (https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key): the one home of
// the string-to-sign, used by the server to verify and by the tools to sign.
import { createHmac } from 'node:crypto';

export interface SharedKeyFields {
  readonly method: string;
  readonly contentMd5: string;
  readonly contentType: string;
  readonly date: string;
  readonly canonicalizedResource: string;
}

/** Base64 HMAC-SHA256 of the UTF-8 string-to-sign under a decoded account key. */
export function sign(stringToSign: string, key: Buffer): string {
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('base64');
}

/** Shared Key, Table format: no canonicalized x-ms-* headers. */
export function sharedKeyStringToSign(fields: SharedKeyFields): string {
  const { method, contentMd5, contentType, date, canonicalizedResource } = fields;
  return `${method}\n${contentMd5}\n${contentType}\n${date}\n${canonicalizedResource}`;
}

/** Shared Key Lite, Table format: the date and the resource. */
export function sharedKeyLiteStringToSign(date: string, canonicalizedResource: string): string {
  return `${date}\n${canonicalizedResource}`;
}

/** "/" + account + path (empty path = "/") + "?comp=…" when the query has comp. */
export function canonicalizedResource(accountName: string, path: string, comp: string | null): string {
  const compPart = comp === null ? '' : `?comp=${comp}`;
  return `/${accountName}${path === '' ? '/' : path}${compPart}`;
}

/**
 * The Authorization header of a Shared Key Lite request (what the tools send): `path` is the
 * request path as sent, without the query; `date` the x-ms-date sent with it.
 */
export function sharedKeyLiteAuthorization(
  account: string,
  key: Buffer,
  date: string,
  path: string,
  comp: string | null = null,
): string {
  const stringToSign = sharedKeyLiteStringToSign(date, canonicalizedResource(account, path, comp));
  return `SharedKeyLite ${account}:${sign(stringToSign, key)}`;
}
