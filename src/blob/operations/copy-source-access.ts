// May this request read the source blob it names (x-ms-copy-source)? Copy Blob asks it now; the
// From-URL operations (Put Blob From URL, Put Block From URL, Append Block From URL) are to ask the
// same. The source is readable through a SAS in its URL, else through the request's own credential
// (its read permission on that blob: Shared Key may read any blob of the account), else through the
// public access level of its container; otherwise 403 CannotVerifyCopySource, with the text of the
// refusal the service would have given a read of the source
// (https://learn.microsoft.com/rest/api/storageservices/copy-blob, "Authorization").
import { StorageError } from '../../errors.js';
import type { SasNeed } from '../../http/sas.js';
import type { BlobKey } from '../../storage/blob-store.js';
import type { BlobCall } from './access.js';
import { publicAccessLevel } from './anonymous.js';

/** Reading a blob: Read, for an object (create-service-sas, create-account-sas). */
const readSource: SasNeed = { resourceType: 'o', service: 'r', account: ['r'] };

/**
 * CannotVerifyCopySource is 404 for a source that does not exist (errors.ts) and 403 for one the
 * request may not read, with that refusal's message (as the service's replies show it).
 */
class CopySourceRefused extends StorageError {
  override readonly status = 403;

  constructor(message: string) {
    super('CannotVerifyCopySource', message);
  }
}

/** Throws 403 CannotVerifyCopySource unless the request may read `source` (the URL as sent, naming `key`). */
export async function requireSourceReadable(call: BlobCall, source: string, key: BlobKey): Promise<void> {
  const resourceName = `${key.container}/${key.name}`;
  try {
    const sourceSas = await call.sasAccessOf(rawQueryOf(source), resourceName);
    // A SAS in the source URL speaks for the source alone: the request's own credential is not asked.
    if (sourceSas !== undefined) {
      sourceSas.require(readSource, resourceName);
      return;
    }
    call.access.require(readSource, resourceName);
  } catch (error) {
    if (!(error instanceof StorageError) || error.status !== 403) throw error;
    if ((await publicAccessLevel(call.services, call.account, key.container)) !== undefined) return;
    throw new CopySourceRefused(error.message);
  }
}

/** The query of a URL as sent, still percent-encoded (the SAS signs the decoded values). */
function rawQueryOf(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return '';
  const hash = url.indexOf('#', question);
  return url.slice(question + 1, hash === -1 ? undefined : hash);
}
