// Metadata as the Blob and Queue services carry it: x-ms-meta-* headers, names with their case as
// sent (https://learn.microsoft.com/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata,
// naming-queues-and-metadata).
import { StorageError } from '../errors.js';
import { metadataBytesMax } from '../limits.js';

/** A C# identifier, ASCII only (the services' rule for metadata names). */
const metadataName = /^[A-Za-z_][A-Za-z0-9_]*$/;
const metadataPrefix = 'x-ms-meta-';

/**
 * The x-ms-meta-* headers of a request, names with their case as sent (`rawHeaders` keeps it;
 * node lower-cases `headers`). A name that is no C# identifier, or given twice in any case, is
 * 400 InvalidMetadata; names and values over 8 KiB together are 400 MetadataTooLarge.
 */
export function metadataFromHeaders(rawHeaders: readonly string[]): Map<string, string> {
  const metadata = new Map<string, string>();
  const seen = new Set<string>();
  let bytes = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const header = rawHeaders[i]!;
    if (!header.toLowerCase().startsWith(metadataPrefix)) continue;
    const name = header.slice(metadataPrefix.length);
    const value = rawHeaders[i + 1]!.trim();
    if (!metadataName.test(name) || seen.has(name.toLowerCase())) {
      throw new StorageError('InvalidMetadata', `The metadata name '${name}' is not valid or is given twice.`);
    }
    seen.add(name.toLowerCase());
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value);
    metadata.set(name, value);
  }
  if (bytes > metadataBytesMax) throw new StorageError('MetadataTooLarge');
  return metadata;
}

/** Metadata as x-ms-meta-* response headers. */
export function metadataHeaders(metadata: ReadonlyMap<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of metadata) headers[`${metadataPrefix}${name}`] = value;
  return headers;
}
