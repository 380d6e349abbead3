// What the Blob service's XML replies share: the reply, and request bodies as text (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api).
import { TableError } from '../errors.js';
import type { Reply } from '../http/respond.js';

export const xmlContentType = 'application/xml';

export function xmlReply(status: number, body: string, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': xmlContentType, ...headers }, body };
}

/** The request body as UTF-8 text; bytes that are not UTF-8 are InvalidXmlDocument. */
export function bodyText(body: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new TableError('InvalidXmlDocument', 'The request body is not valid UTF-8.');
  }
}
