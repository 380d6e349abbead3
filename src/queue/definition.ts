// The Queue service as the front door sees it (http/service-definition.ts): its resources, its
// route table (which request is which operation, under the Storage Analytics names, what a SAS
// must grant for it, and who answers it), XML error bodies, the Blob/Queue Shared Key format, its
// SAS side and its CORS rules (https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api).
import { invalidQueryParameter, StorageError } from '../errors.js';
import { blobQueueSharedKey } from '../http/auth.js';
import type { SasNeed, StoredPolicy } from '../http/sas.js';
import { routeMaker, type Route, type ServiceCall, type ServiceModule } from '../http/service-definition.js';
import type { ReplicationSource } from '../storage/replication.js';
import type { SignedIdentifier } from '../wire/acl-xml.js';
import {
  clearMessages,
  createQueue,
  deleteMessage,
  deleteQueue,
  getMessages,
  getQueueAcl,
  getQueueMetadata,
  getServiceProperties,
  getServiceStats,
  isPeek,
  listQueues,
  putMessage,
  setQueueAcl,
  setQueueMetadata,
  setServiceProperties,
  updateMessage,
} from './operations.js';
import type { QueueCall, QueuePropertiesKeeper } from './operations.js';
import { QueueService } from './service.js';
import { ServicePropertiesService } from '../storage/service-properties.js';
import { parseQueueResource, type QueueResource } from './resources.js';

/** What the queue routes' handlers work on. */
export interface QueueServices {
  readonly queues: QueueService;
  readonly properties: QueuePropertiesKeeper;
  /** The secondary endpoint's replication status (Get Queue Service Stats); undefined: not a replica. */
  readonly replication?: ReplicationSource | undefined;
}

const on = routeMaker<QueueResource, QueueServices, QueueCall>(queueCall);

function queueCall(call: ServiceCall<QueueServices>): QueueCall {
  return {
    queues: call.services.queues,
    properties: call.services.properties,
    replication: call.services.replication,
    account: call.account,
    method: call.method,
    query: call.query,
    rawHeaders: call.rawHeaders,
    body: call.body,
    serviceEndpoint: `${call.baseUrl}/`,
  };
}

// What a SAS must grant (account-sas, create-service-sas): a service SAS all of `service`
// ('' = none may), an account SAS one of `account` with the resource type.
const need = (resourceType: 's' | 'c' | 'o', service: string, account: string[]): SasNeed => ({
  resourceType,
  service,
  account,
});
const serviceRead = need('s', '', ['r']);
const queueRead = need('c', 'r', ['r']);
// Neither an account SAS (Azurite: "not allowed") nor a service SAS may read or set a queue's ACL.
const keyOnly = need('c', '', []);
const peek = (request: { readonly query: URLSearchParams }): boolean => isPeek(request.query);
const notPeek = (request: { readonly query: URLSearchParams }): boolean => !isPeek(request.query);

/** Names from Azure Storage Analytics logging (storage-analytics-logged-operations-and-status-messages). */
export const queueRoutes: readonly Route<QueueResource, QueueServices>[] = [
  on({ resource: 'service', method: 'GET', comp: 'list', operation: 'ListQueues', sas: need('s', '', ['l']) }, (c) =>
    listQueues(c),
  ),
  on(
    {
      resource: 'service',
      method: 'GET',
      restype: 'service',
      comp: 'properties',
      operation: 'GetQueueServiceProperties',
      sas: serviceRead,
    },
    (c) => getServiceProperties(c),
  ),
  on(
    {
      resource: 'service',
      method: 'PUT',
      restype: 'service',
      comp: 'properties',
      operation: 'SetQueueServiceProperties',
      sas: need('s', '', ['w']),
    },
    (c) => setServiceProperties(c),
  ),
  on(
    {
      resource: 'service',
      method: 'GET',
      restype: 'service',
      comp: 'stats',
      operation: 'GetQueueServiceStats',
      sas: serviceRead,
    },
    (c) => getServiceStats(c),
  ),
  on(
    { resource: 'queue', method: 'PUT', comp: null, operation: 'CreateQueue', sas: need('c', '', ['c', 'w']) },
    (c, r) => createQueue(c, r.queue),
  ),
  on({ resource: 'queue', method: 'DELETE', comp: null, operation: 'DeleteQueue', sas: need('c', '', ['d']) }, (c, r) =>
    deleteQueue(c, r.queue),
  ),
  on({ resource: 'queue', method: 'GET', comp: 'metadata', operation: 'GetQueueMetadata', sas: queueRead }, (c, r) =>
    getQueueMetadata(c, r.queue),
  ),
  on({ resource: 'queue', method: 'HEAD', comp: 'metadata', operation: 'GetQueueMetadata', sas: queueRead }, (c, r) =>
    getQueueMetadata(c, r.queue),
  ),
  on(
    { resource: 'queue', method: 'PUT', comp: 'metadata', operation: 'SetQueueMetadata', sas: need('c', '', ['w']) },
    (c, r) => setQueueMetadata(c, r.queue),
  ),
  on({ resource: 'queue', method: 'GET', comp: 'acl', operation: 'GetQueueAcl', sas: keyOnly }, (c, r) =>
    getQueueAcl(c, r.queue),
  ),
  on({ resource: 'queue', method: 'HEAD', comp: 'acl', operation: 'GetQueueAcl', sas: keyOnly }, (c, r) =>
    getQueueAcl(c, r.queue),
  ),
  on({ resource: 'queue', method: 'PUT', comp: 'acl', operation: 'SetQueueAcl', sas: keyOnly }, (c, r) =>
    setQueueAcl(c, r.queue),
  ),
  on(
    { resource: 'messages', method: 'POST', comp: null, operation: 'PutMessage', sas: need('o', 'a', ['a']) },
    (c, r) => putMessage(c, r.queue),
  ),
  on(
    {
      resource: 'messages',
      method: 'GET',
      comp: null,
      when: peek,
      operation: 'PeekMessages',
      sas: need('o', 'r', ['r']),
    },
    (c, r) => getMessages(c, r.queue),
  ),
  on(
    {
      resource: 'messages',
      method: 'GET',
      comp: null,
      when: notPeek,
      operation: 'GetMessages',
      writes: true, // it claims the messages it returns
      sas: need('o', 'p', ['p']),
    },
    (c, r) => getMessages(c, r.queue),
  ),
  // A service SAS has no letter that clears a queue (create-service-sas).
  on(
    { resource: 'messages', method: 'DELETE', comp: null, operation: 'ClearMessages', sas: need('o', '', ['d']) },
    (c, r) => clearMessages(c, r.queue),
  ),
  on(
    { resource: 'message', method: 'DELETE', comp: null, operation: 'DeleteMessage', sas: need('o', 'p', ['p']) },
    (c, r) => deleteMessage(c, r.queue, r.id),
  ),
  on(
    { resource: 'message', method: 'PUT', comp: null, operation: 'UpdateMessage', sas: need('o', 'u', ['u']) },
    (c, r) => updateMessage(c, r.queue, r.id),
  ),
];

/** The queue a request addresses: what a service SAS must be for, and what fault rules match. */
function queueOf(resource: QueueResource): string | undefined {
  return resource.kind === 'service' ? undefined : resource.queue;
}

export const queueService: ServiceModule<QueueResource, QueueServices> = {
  name: 'queue',
  endpointKey: 'QueueEndpoint',
  // Its service properties are kept in the table store's settings, under the queue service's name.
  open: ({ stores, clock, replication }) => ({
    queues: new QueueService(stores.queues, clock),
    properties: new ServicePropertiesService(stores.tables, 'queue'),
    replication,
  }),
  parseResource: (path) => parseQueueResource(path),
  routes: queueRoutes,
  /**
   * A method the resource does not have: 405 UnsupportedHttpVerb; anything else (an unknown comp
   * or restype): 400 InvalidQueryParameterValue (unverified; Azurite answers a bare 400).
   */
  unrouted(_resource, query, otherMethods) {
    if (otherMethods) return new StorageError('UnsupportedHttpVerb');
    const comp = query.get('comp') ?? '';
    return invalidQueryParameter('comp', comp, 'The value is not valid for this resource.');
  },
  errorFormat: () => ({ kind: 'xml' }),
  sharedKey: blobQueueSharedKey,
  sas: {
    accountServiceLetter: 'q',
    resourceOf: queueOf,
    async findPolicy(services, account, queue, id): Promise<StoredPolicy | undefined> {
      const stored = await services.queues.getQueueAcl(account, queue).catch(() => undefined);
      if (stored === undefined) return undefined;
      return (JSON.parse(stored) as SignedIdentifier[]).find((identifier) => identifier.id === id);
    },
  },
  corsRules: (services, account) => services.properties.cors(account),
  faultScope: (resource) => queueOf(resource),
};
