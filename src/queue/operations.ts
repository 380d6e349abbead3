// The Queue service's operations as HTTP exchanges: each reads its query, headers and body, calls
// QueueService, and answers the status, headers and XML body of
// https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api. Validation failures
// are the service's 4xx errors; the front door renders them as XML error bodies.
import { invalidQueryParameter, StorageError } from '../errors.js';
import type { Reply } from '../http/respond.js';
import type { ReplicationSource } from '../storage/replication.js';
import { parseSignedIdentifiers, writeSignedIdentifiers, type SignedIdentifier } from '../wire/acl-xml.js';
import {
  parseServiceProperties,
  writeServiceProperties,
  writeServiceStats,
  type ServiceProperties,
  type ServicePropertiesUpdate,
} from '../wire/service-properties-xml.js';
import {
  dequeueVisibilitySecondsDefault,
  dequeueVisibilitySecondsMin,
  listQueuesPageMax,
  messagesPerGetMax,
  messageTtlSecondsDefault,
  messageTtlSecondsMin,
  visibilityTimeoutSecondsMax,
} from './limits.js';
import { metadataFromHeaders, metadataHeaders } from './names.js';
import { int32Max, int64Max, integerParam, parseInteger, requiredParam } from './params.js';
import type { QueueService } from './service.js';
import { parseQueueMessage, wireDate, writeMessagesList, writeQueueListing } from './wire/xml.js';

/** Queue service properties per account (kept beside the table service's, under their own names). */
export interface QueuePropertiesKeeper {
  get(account: string): Promise<ServiceProperties>;
  set(account: string, update: ServicePropertiesUpdate): Promise<void>;
  /** The CORS rules of `get`, read alone (every cross-origin request asks). */
  cors(account: string): Promise<ServiceProperties['cors']>;
}

/** What every queue operation reads from its request. */
export interface QueueCall {
  readonly queues: QueueService;
  readonly properties: QueuePropertiesKeeper;
  /** The secondary endpoint's replication status; undefined: not a replica. */
  readonly replication?: ReplicationSource | undefined;
  readonly account: string;
  /** GET and HEAD answer the same headers; HEAD without a body. */
  readonly method: string;
  readonly query: URLSearchParams;
  /** As node keeps them: name, value, name, value… with the names' case as sent (metadata keeps it). */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  /** e.g. http://127.0.0.1:10001/devstoreaccount1/ (List Queues names it). */
  readonly serviceEndpoint: string;
}

const xmlContentType = 'application/xml';
/** Queue permission letters for stored access policies (set-queue-acl). */
export const queuePermissionLetters = 'raup';

function xml(status: number, body: string, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'Content-Type': xmlContentType, ...headers }, body };
}

/** The request body as UTF-8 text; bytes that are not UTF-8 are InvalidXmlDocument. */
function bodyText(call: QueueCall): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(call.body);
  } catch {
    throw new StorageError('InvalidXmlDocument', 'The request body is not valid UTF-8.');
  }
}

// -- service -----------------------------------------------------------------------------------

export async function listQueues(call: QueueCall): Promise<Reply> {
  const { query, account } = call;
  const prefix = query.get('prefix') ?? undefined;
  const marker = query.get('marker') ?? undefined;
  const maxResults = integerParam(query, 'maxresults', { min: 1, max: int32Max });
  const include = query.get('include');
  if (include !== null && include !== 'metadata' && include !== '') {
    throw invalidQueryParameter('include', include, "The value must be 'metadata'.");
  }
  const fromName = marker === undefined || marker === '' ? undefined : markerName(account, marker);
  const pageSize = Math.min(maxResults ?? listQueuesPageMax, listQueuesPageMax);
  const page = await call.queues.listQueues(account, prefix ?? '', fromName, pageSize);
  const body = writeQueueListing({
    serviceEndpoint: call.serviceEndpoint,
    prefix,
    marker,
    maxResults,
    queues: page.queues.map((queue) => ({
      name: queue.name,
      ...(include === 'metadata' && { metadata: queue.metadata }),
    })),
    nextMarker: page.nextName === undefined ? '' : `/${account}/${page.nextName}`,
  });
  return xml(200, body);
}

/** Markers are `/{account}/{queue}`, as the service writes them; a bare queue name is taken too. */
function markerName(account: string, marker: string): string {
  const prefix = `/${account}/`;
  return marker.startsWith(prefix) ? marker.slice(prefix.length) : marker;
}

export async function getServiceProperties(call: QueueCall): Promise<Reply> {
  return xml(200, writeServiceProperties(await call.properties.get(call.account)));
}

/** 202 Accepted (set-queue-service-properties); elements left out keep their values. */
export async function setServiceProperties(call: QueueCall): Promise<Reply> {
  await call.properties.set(call.account, parseServiceProperties(bodyText(call)));
  return { status: 202 };
}

/** The standby's replication status on the secondary; without a standby, the server is its own live replica. */
export async function getServiceStats(call: QueueCall): Promise<Reply> {
  const { status, lastSyncTime } = call.replication?.status() ?? {
    status: 'live',
    lastSyncTime: new Date(call.queues.clock.nowMs()),
  };
  return xml(200, writeServiceStats(status, lastSyncTime));
}

// -- queues ------------------------------------------------------------------------------------

/** 201 Created, or 204 when the queue exists with the same metadata (create-queue4). */
export async function createQueue(call: QueueCall, queue: string): Promise<Reply> {
  const outcome = await call.queues.createQueue(call.account, queue, metadataFromHeaders(call.rawHeaders));
  return { status: outcome === 'created' ? 201 : 204 };
}

export async function deleteQueue(call: QueueCall, queue: string): Promise<Reply> {
  await call.queues.deleteQueue(call.account, queue);
  return { status: 204 };
}

export async function getQueueMetadata(call: QueueCall, queue: string): Promise<Reply> {
  const { metadata, count } = await call.queues.getQueueMetadata(call.account, queue);
  return { status: 200, headers: { ...metadataHeaders(metadata), 'x-ms-approximate-messages-count': String(count) } };
}

export async function setQueueMetadata(call: QueueCall, queue: string): Promise<Reply> {
  await call.queues.setQueueMetadata(call.account, queue, metadataFromHeaders(call.rawHeaders));
  return { status: 204 };
}

export async function getQueueAcl(call: QueueCall, queue: string): Promise<Reply> {
  const stored = await call.queues.getQueueAcl(call.account, queue);
  const identifiers = stored === undefined ? [] : (JSON.parse(stored) as SignedIdentifier[]);
  return xml(200, writeSignedIdentifiers(identifiers));
}

/** At most 5 policies (400 InvalidXmlDocument, as Azurite); an empty body removes them all. */
export async function setQueueAcl(call: QueueCall, queue: string): Promise<Reply> {
  const identifiers = parseSignedIdentifiers(bodyText(call), queuePermissionLetters);
  await call.queues.setQueueAcl(
    call.account,
    queue,
    identifiers.length === 0 ? undefined : JSON.stringify(identifiers),
  );
  return { status: 204 };
}

// -- messages ----------------------------------------------------------------------------------

const putVisibility = { min: 0, max: visibilityTimeoutSecondsMax };

/** 201 Created with the message's id, pop receipt and times (put-message). */
export async function putMessage(call: QueueCall, queue: string): Promise<Reply> {
  const visibilityTimeoutSeconds = integerParam(call.query, 'visibilitytimeout', putVisibility, 0);
  const ttlSeconds = messageTtl(call.query);
  const text = parseQueueMessage(bodyText(call));
  const message = await call.queues.putMessage(call.account, queue, text, { visibilityTimeoutSeconds, ttlSeconds });
  return xml(201, writeMessagesList([message], 'put'));
}

/**
 * messagettl: -1 (never expires) or any positive number of seconds since version 2017-07-29, read as
 * a 64-bit integer (the service's width; put-message). 0 and values below -1 are 400
 * InvalidQueryParameterValue naming the parameter (unverified: the service's code for them is not
 * documented; an out-of-range answer would need one range, and -1 sits outside 1..2^63-1).
 */
function messageTtl(query: URLSearchParams): number {
  const text = query.get('messagettl');
  if (text === null) return messageTtlSecondsDefault;
  const value = parseInteger('messagettl', text, int64Max);
  if (value !== -1 && value < messageTtlSecondsMin) {
    throw invalidQueryParameter('messagettl', text, 'The value must be at least 1, or -1 (never expires).');
  }
  return value;
}

const countRange = { min: 1, max: messagesPerGetMax };

/** Get Messages, or Peek Messages with peekonly=true (get-messages, peek-messages). */
export async function getMessages(call: QueueCall, queue: string): Promise<Reply> {
  const count = integerParam(call.query, 'numofmessages', countRange, 1);
  if (isPeek(call.query))
    return xml(200, writeMessagesList(await call.queues.peekMessages(call.account, queue, count), 'peek'));
  const visibilityRange = { min: dequeueVisibilitySecondsMin, max: visibilityTimeoutSecondsMax };
  const visibility = integerParam(call.query, 'visibilitytimeout', visibilityRange, dequeueVisibilitySecondsDefault);
  return xml(200, writeMessagesList(await call.queues.getMessages(call.account, queue, count, visibility), 'get'));
}

/** peekonly=true (any case) peeks; any other value is an ordinary get (unverified, lenient). */
export function isPeek(query: URLSearchParams): boolean {
  return query.get('peekonly')?.toLowerCase() === 'true';
}

export async function clearMessages(call: QueueCall, queue: string): Promise<Reply> {
  await call.queues.clearMessages(call.account, queue);
  return { status: 204 };
}

/**
 * The popreceipt parameter: Cerulean's receipts are UUIDs, so any other text is malformed, which
 * the service answers with 400 InvalidQueryParameterValue, Reason "Invalid pop receipt format"
 * (the official SDKs' recorded tests: popreceipt=invalid on Delete Message).
 */
function popReceiptParam(query: URLSearchParams): string {
  const popReceipt = requiredParam(query, 'popreceipt');
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(popReceipt)) {
    throw invalidQueryParameter('popreceipt', popReceipt, 'Invalid pop receipt format');
  }
  return popReceipt;
}

export async function deleteMessage(call: QueueCall, queue: string, id: string): Promise<Reply> {
  await call.queues.deleteMessage(call.account, queue, id, popReceiptParam(call.query));
  return { status: 204 };
}

/** 204 with the new pop receipt and visibility (update-message); the body, if any, is the new text. */
export async function updateMessage(call: QueueCall, queue: string, id: string): Promise<Reply> {
  const popReceipt = popReceiptParam(call.query);
  requiredParam(call.query, 'visibilitytimeout');
  const visibility = integerParam(call.query, 'visibilitytimeout', putVisibility, 0);
  const text = call.body.length === 0 ? undefined : parseQueueMessage(bodyText(call));
  const message = await call.queues.updateMessage(call.account, queue, { id, popReceipt }, visibility, text);
  return {
    status: 204,
    headers: { 'x-ms-popreceipt': message.popReceipt, 'x-ms-time-next-visible': wireDate(message.visibleMs) },
  };
}
