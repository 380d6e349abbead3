// The Blob service's resources: what the path after the account names
// (https://learn.microsoft.com/rest/api/storageservices/blob-service-rest-api). The route table
// that maps (method, resource, restype, comp) to operations is in definition.ts.
import { StorageError } from '../errors.js';

export type BlobResource =
  /** `/{account}/`: List Containers, service properties and stats. */
  | { readonly kind: 'service' }
  /** `/{account}/{container}` */
  | { readonly kind: 'container'; readonly container: string }
  /** `/{account}/{container}/{blob}`; the blob name may contain `/` (virtual folders). */
  | { readonly kind: 'blob'; readonly container: string; readonly blob: string };

/**
 * The resource named by the path after the account (still percent-encoded). The first segment is
 * the container, everything after its slash the blob name, kept exactly (slashes, empty segments)
 * but for backslashes, which become slashes;
 * a container path's trailing slash is ignored. Names are checked by the operations.
 *
 * Chosen: a one-segment path is always a container, so blobs in the implicit `$root` container
 * (`/{account}/{blob}`) are not addressable that way; `/{account}/$root/{blob}` is.
 */
export function parseBlobResource(path: string): BlobResource {
  if (path === '' || path === '/') return { kind: 'service' };
  const slash = path.indexOf('/');
  if (slash === -1) return { kind: 'container', container: decodeSegment(path) };
  const container = decodeSegment(path.slice(0, slash));
  const blob = path.slice(slash + 1);
  if (blob === '') return { kind: 'container', container };
  // The service turns a backslash in a blob name into a slash, so `a\b` and `a/b` are one blob
  // (as reported from the service and the official SDKs' special-name tests; the naming page
  // only advises against backslashes, unverified there).
  return { kind: 'blob', container, blob: decodeSegment(blob).replaceAll('\\', '/') };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new StorageError('InvalidUri', 'The request URI is not validly percent-encoded.');
  }
}
