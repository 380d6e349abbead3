// What every Blob service reply shares: ETags and Last-Modified dates as the service forms them,
// XML replies, request bodies as text (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api).
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';

export { httpDate, newEtag } from '../../wire/version-etag.js';

export const xmlContentType = 'application/xml';

export function xmlReply(status: number, body: string, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': xmlContentType, ...headers }, body };
}

/** The request body as UTF-8 text; bytes that are not UTF-8 are InvalidXmlDocument. */
export function bodyText(body: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new StorageError('InvalidXmlDocument', 'The request body is not valid UTF-8.');
  }
}
