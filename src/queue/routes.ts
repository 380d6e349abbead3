// The Queue service's resources and the (method, resource, comp) → operation table
// (https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api). Each entry names
// the operation as Storage Analytics does (metrics, throttling and faults see these names) and what
// a SAS must grant for it.
import { TableError } from '../errors.js';
import type { Reply } from '../http/respond.js';
import * as op from './operations.js';
import type { QueueCall } from './operations.js';

export type QueueResource =
  /** `/{account}/`: List Queues, service properties and stats. */
  | { readonly kind: 'service' }
  /** `/{account}/{queue}` */
  | { readonly kind: 'queue'; readonly queue: string }
  /** `/{account}/{queue}/messages` */
  | { readonly kind: 'messages'; readonly queue: string }
  /** `/{account}/{queue}/messages/{id}` */
  | { readonly kind: 'message'; readonly queue: string; readonly id: string };

export type QueueOperationName =
  | 'ListQueues'
  | 'GetQueueServiceProperties'
  | 'SetQueueServiceProperties'
  | 'GetQueueServiceStats'
  | 'CreateQueue'
  | 'DeleteQueue'
  | 'GetQueueMetadata'
  | 'SetQueueMetadata'
  | 'GetQueueAcl'
  | 'SetQueueAcl'
  | 'PutMessage'
  | 'GetMessages'
  | 'PeekMessages'
  | 'DeleteMessage'
  | 'UpdateMessage'
  | 'ClearMessages';

/** What a SAS must grant: a service SAS all of `service` ('' = no service SAS may), an account SAS one of `account`. */
export interface QueueSasNeed {
  readonly resourceType: 's' | 'c' | 'o';
  readonly service: string;
  readonly account: readonly string[];
}

export interface QueueRoute {
  readonly operation: QueueOperationName;
  readonly sas: QueueSasNeed;
  /** The queue the operation addresses (a service SAS is for one queue); undefined for the service. */
  readonly queue: string | undefined;
  run(call: QueueCall): Promise<Reply>;
}

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
  if (messages !== 'messages' || segments.length > 3) throw new TableError('InvalidUri');
  if (id === undefined) return { kind: 'messages', queue };
  return { kind: 'message', queue, id };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new TableError('InvalidUri', 'The request URI is not validly percent-encoded.');
  }
}

type Run = (call: QueueCall, resource: QueueResource) => Promise<Reply>;

interface Entry {
  readonly operation: QueueOperationName;
  readonly sas: QueueSasNeed;
  readonly run: Run;
}

const serviceRead: QueueSasNeed = { resourceType: 's', service: '', account: ['r'] };
const queueRead: QueueSasNeed = { resourceType: 'c', service: 'r', account: ['r'] };
// An account SAS cannot read or change a queue's ACL (Azurite: "not allowed"); nor can a service SAS.
const keyOnly: QueueSasNeed = { resourceType: 'c', service: '', account: [] };

const queueOf = (resource: QueueResource): string => (resource.kind === 'service' ? '' : resource.queue);
const idOf = (resource: QueueResource): string => (resource.kind === 'message' ? resource.id : '');

/** Keyed by `resource kind, method, comp`; peekonly=true reads as comp `peek`. */
const entries: Readonly<Record<string, Entry>> = {
  'service GET list': {
    operation: 'ListQueues',
    sas: { resourceType: 's', service: '', account: ['l'] },
    run: (call) => op.listQueues(call),
  },
  'service GET properties': {
    operation: 'GetQueueServiceProperties',
    sas: serviceRead,
    run: (call) => op.getServiceProperties(call),
  },
  'service PUT properties': {
    operation: 'SetQueueServiceProperties',
    sas: { resourceType: 's', service: '', account: ['w'] },
    run: (call) => op.setServiceProperties(call),
  },
  'service GET stats': { operation: 'GetQueueServiceStats', sas: serviceRead, run: (call) => op.getServiceStats(call) },
  'queue PUT ': {
    operation: 'CreateQueue',
    sas: { resourceType: 'c', service: '', account: ['c', 'w'] },
    run: (call, resource) => op.createQueue(call, queueOf(resource)),
  },
  'queue DELETE ': {
    operation: 'DeleteQueue',
    sas: { resourceType: 'c', service: '', account: ['d'] },
    run: (call, resource) => op.deleteQueue(call, queueOf(resource)),
  },
  'queue GET metadata': {
    operation: 'GetQueueMetadata',
    sas: queueRead,
    run: (call, resource) => op.getQueueMetadata(call, queueOf(resource)),
  },
  'queue PUT metadata': {
    operation: 'SetQueueMetadata',
    sas: { resourceType: 'c', service: '', account: ['w'] },
    run: (call, resource) => op.setQueueMetadata(call, queueOf(resource)),
  },
  'queue GET acl': { operation: 'GetQueueAcl', sas: keyOnly, run: (call, r) => op.getQueueAcl(call, queueOf(r)) },
  'queue PUT acl': { operation: 'SetQueueAcl', sas: keyOnly, run: (call, r) => op.setQueueAcl(call, queueOf(r)) },
  'messages POST ': {
    operation: 'PutMessage',
    sas: { resourceType: 'o', service: 'a', account: ['a'] },
    run: (call, resource) => op.putMessage(call, queueOf(resource)),
  },
  'messages GET ': {
    operation: 'GetMessages',
    sas: { resourceType: 'o', service: 'p', account: ['p'] },
    run: (call, resource) => op.getMessages(call, queueOf(resource)),
  },
  'messages GET peek': {
    operation: 'PeekMessages',
    sas: { resourceType: 'o', service: 'r', account: ['r'] },
    run: (call, resource) => op.getMessages(call, queueOf(resource)),
  },
  // A service SAS cannot clear a queue (Azurite grants it no letter for it).
  'messages DELETE ': {
    operation: 'ClearMessages',
    sas: { resourceType: 'o', service: '', account: ['d'] },
    run: (call, resource) => op.clearMessages(call, queueOf(resource)),
  },
  'message DELETE ': {
    operation: 'DeleteMessage',
    sas: { resourceType: 'o', service: 'p', account: ['p'] },
    run: (call, resource) => op.deleteMessage(call, queueOf(resource), idOf(resource)),
  },
  'message PUT ': {
    operation: 'UpdateMessage',
    sas: { resourceType: 'o', service: 'u', account: ['u'] },
    run: (call, resource) => op.updateMessage(call, queueOf(resource), idOf(resource)),
  },
};

/** The comps each resource knows; another is the service's error for an unknown comp. */
const compsOf: Readonly<Record<QueueResource['kind'], readonly string[]>> = {
  service: ['list', 'properties', 'stats'],
  queue: ['', 'metadata', 'acl'],
  messages: [''],
  message: [''],
};

/** The entry for a request, or the service's error when none matches. */
export function queueRoute(method: string, resource: QueueResource, query: URLSearchParams): QueueRoute {
  const given = query.get('comp') ?? '';
  // Service properties and stats are named by restype=service as well as comp.
  const restypeMissing = resource.kind === 'service' && given !== 'list' && query.get('restype') !== 'service';
  if (!compsOf[resource.kind].includes(given) || restypeMissing) throw unknownComp(given);
  const comp = resource.kind === 'messages' && method === 'GET' && op.isPeek(query) ? 'peek' : given;
  // HEAD reads a queue's metadata or ACL; nowhere else (a HEAD must never dequeue).
  const verb = method === 'HEAD' && resource.kind === 'queue' ? 'GET' : method;
  const entry = entries[`${resource.kind} ${verb} ${comp}`];
  if (entry === undefined) throw new TableError('UnsupportedHttpVerb');
  return {
    operation: entry.operation,
    sas: entry.sas,
    queue: resource.kind === 'service' ? undefined : resource.queue,
    run: (call) => entry.run(call, resource),
  };
}

/** An unknown comp (or restype): 400 InvalidQueryParameterValue (unverified; Azurite answers a bare 400). */
function unknownComp(comp: string): TableError {
  return new TableError('InvalidQueryParameterValue', `The value '${comp}' of comp is not valid for this resource.`);
}
