// The explorer's client of the Queue service (https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api):
// list, create and delete queues, the approximate message count, peek, put, get, delete and clear messages.
import { appendXml, childText, type Credentials } from './api.js';
import { serviceCall } from './service-call.js';

/** Most messages one Peek Messages returns (numofmessages is 1 to 32). */
export const peekCountMax = 32;

export interface QueuePage {
  readonly names: string[];
  /** NextMarker: where the next page starts; undefined on the last page. */
  readonly nextMarker: string | undefined;
}

export interface PeekedMessage {
  readonly id: string;
  readonly text: string;
  readonly insertionTime: string;
  readonly expirationTime: string;
  readonly dequeueCount: number;
}

export interface NewMessage {
  readonly text: string;
  /** Seconds until the message becomes visible; 0 at once. */
  readonly visibilityTimeoutSeconds: number;
  /** Seconds it lives; -1 never expires. */
  readonly timeToLiveSeconds: number;
}

const queuePath = (queue: string): string => `/${encodeURIComponent(queue)}`;

function parseXml(text: string): XMLDocument {
  return new DOMParser().parseFromString(text, 'application/xml');
}

/** One page of List Queues (https://learn.microsoft.com/rest/api/storageservices/list-queues1). */
export async function listQueues(
  credentials: Credentials,
  prefix: string,
  marker: string | undefined,
  pageSizeMax: number,
): Promise<QueuePage> {
  const response = await serviceCall('queue', credentials, {
    method: 'GET',
    path: '',
    query: { comp: 'list', prefix, marker, maxresults: String(pageSizeMax) },
  });
  const xml = parseXml(await response.text());
  const names = [...xml.getElementsByTagName('Queue')].map((queue) => childText(queue, 'Name'));
  const nextMarker = childText(xml.documentElement, 'NextMarker');
  return { names, nextMarker: nextMarker === '' ? undefined : nextMarker };
}

export async function createQueue(credentials: Credentials, queue: string): Promise<void> {
  await serviceCall('queue', credentials, { method: 'PUT', path: queuePath(queue) });
}

export async function deleteQueue(credentials: Credentials, queue: string): Promise<void> {
  await serviceCall('queue', credentials, { method: 'DELETE', path: queuePath(queue) });
}

/** x-ms-approximate-messages-count of Get Queue Metadata. */
export async function approximateMessageCount(credentials: Credentials, queue: string): Promise<number> {
  const response = await serviceCall('queue', credentials, {
    method: 'GET',
    path: queuePath(queue),
    query: { comp: 'metadata' },
  });
  return Number(response.headers.get('x-ms-approximate-messages-count') ?? 'NaN');
}

/** Peek Messages: up to `count` visible messages from the front, without changing them. */
export async function peekMessages(credentials: Credentials, queue: string, count: number): Promise<PeekedMessage[]> {
  const response = await serviceCall('queue', credentials, {
    method: 'GET',
    path: `${queuePath(queue)}/messages`,
    query: { peekonly: 'true', numofmessages: String(count) },
  });
  const xml = parseXml(await response.text());
  return [...xml.getElementsByTagName('QueueMessage')].map(peekedOf);
}

function peekedOf(message: Element): PeekedMessage {
  return {
    id: childText(message, 'MessageId'),
    text: childText(message, 'MessageText'),
    insertionTime: childText(message, 'InsertionTime'),
    expirationTime: childText(message, 'ExpirationTime'),
    dequeueCount: Number(childText(message, 'DequeueCount')),
  };
}

/** Put Message (https://learn.microsoft.com/rest/api/storageservices/put-message); the text is sent as given. */
export async function putMessage(credentials: Credentials, queue: string, message: NewMessage): Promise<void> {
  const xml = document.implementation.createDocument(null, 'QueueMessage', null);
  appendXml(xml.documentElement, 'MessageText', message.text);
  await serviceCall('queue', credentials, {
    method: 'POST',
    path: `${queuePath(queue)}/messages`,
    query: {
      visibilitytimeout: String(message.visibilityTimeoutSeconds),
      messagettl: String(message.timeToLiveSeconds),
    },
    headers: { 'Content-Type': 'application/xml' },
    body: `<?xml version="1.0" encoding="utf-8"?>${new XMLSerializer().serializeToString(xml.documentElement)}`,
  });
}

/** Clear Messages: deletes every message of the queue. */
export async function clearMessages(credentials: Credentials, queue: string): Promise<void> {
  await serviceCall('queue', credentials, { method: 'DELETE', path: `${queuePath(queue)}/messages` });
}

/** A message Get Messages handed out: hidden until timeNextVisible, deletable with its pop receipt. */
export interface ReceivedMessage extends PeekedMessage {
  readonly popReceipt: string;
  readonly timeNextVisible: string;
}

/**
 * Get Messages (https://learn.microsoft.com/rest/api/storageservices/get-messages): up to `count`
 * messages from the front, each hidden for `visibilityTimeoutSeconds` and its dequeue count raised.
 */
export async function getMessages(
  credentials: Credentials,
  queue: string,
  count: number,
  visibilityTimeoutSeconds: number,
): Promise<ReceivedMessage[]> {
  const response = await serviceCall('queue', credentials, {
    method: 'GET',
    path: `${queuePath(queue)}/messages`,
    query: { numofmessages: String(count), visibilitytimeout: String(visibilityTimeoutSeconds) },
  });
  const xml = parseXml(await response.text());
  return [...xml.getElementsByTagName('QueueMessage')].map((message) => ({
    ...peekedOf(message),
    popReceipt: childText(message, 'PopReceipt'),
    timeNextVisible: childText(message, 'TimeNextVisible'),
  }));
}

/** Delete Message (https://learn.microsoft.com/rest/api/storageservices/delete-message2): by id and pop receipt. */
export async function deleteMessage(
  credentials: Credentials,
  queue: string,
  id: string,
  popReceipt: string,
): Promise<void> {
  await serviceCall('queue', credentials, {
    method: 'DELETE',
    path: `${queuePath(queue)}/messages/${encodeURIComponent(id)}`,
    query: { popreceipt: popReceipt },
  });
}
