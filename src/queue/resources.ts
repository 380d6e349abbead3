// The Queue service's resources: what the path after the account names
// (https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api). The route table
// that maps (method, resource, comp) to operations is in definition.ts.
import { StorageError } from '../errors.js';

export type QueueResource =
  /** `/{account}/`: List Queues, service properties and stats. */
  | { readonly kind: 'service' }
  /** `/{account}/{queue}` */
  | { readonly kind: 'queue'; readonly queue: string }
  /** `/{account}/{queue}/messages` */
  | { readonly kind: 'messages'; readonly queue: string }
  /** `/{account}/{queue}/messages/{id}` */
  | { readonly kind: 'message'; readonly queue: string; readonly id: string };

/**
 * The resource named by the path after the account (still percent-encoded). A trailing slash is
 * ignored; deeper paths are 400 InvalidUri. Names are checked by the operations (InvalidResourceName).
 */
export function parseQueueResource(path: string): QueueResource {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  if (trimmed === '') return { kind: 'service' };
  const segments = trimmed.split('/').map(decodeSegment);
  const [queue = '', messages, id] = segments;
  if (segments.length === 1) return { kind: 'queue', queue };
  if (messages !== 'messages' || segments.length > 3) throw new StorageError('InvalidUri');
  if (id === undefined) return { kind: 'messages', queue };
  return { kind: 'message', queue, id };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new StorageError('InvalidUri', 'The request URI is not validly percent-encoded.');
  }
}
