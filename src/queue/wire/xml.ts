// The Queue service's XML bodies: QueueMessage requests, QueueMessagesList and EnumerationResults
// responses (https://learn.microsoft.com/rest/api/storageservices/put-message, get-messages,
// peek-messages, list-queues1). Pure: text in, text out. Request bodies go through the strict
// reader of src/wire/xml.ts (no DOCTYPE, bounded depth): malformed XML is 400 InvalidXmlDocument.
import { StorageError } from '../../errors.js';
import { childNamed, escapeXmlText, leafText, parseXml, writeXmlNode, type XmlNode } from '../../wire/xml.js';
import type { StoredMessage } from '../../storage/queue-store.js';
import { neverExpiresWireMs } from '../limits.js';

const declaration = '<?xml version="1.0" encoding="utf-8"?>';

/** The MessageText of a Put or Update Message body. A body without one is InvalidXmlDocument. */
export function parseQueueMessage(text: string): string {
  const root = parseXml(text);
  if (root.name !== 'QueueMessage') {
    throw new StorageError('InvalidXmlDocument', `The root element must be QueueMessage, not ${root.name}.`);
  }
  const messageText = childNamed(root, 'MessageText');
  if (messageText === undefined) throw new StorageError('InvalidXmlDocument', 'The QueueMessage has no MessageText.');
  return leafText(messageText);
}

/** RFC 1123 in GMT, as every queue date is written; a message that never expires shows 9999-12-31. */
export function wireDate(ms: number): string {
  return new Date(Number.isFinite(ms) ? ms : neverExpiresWireMs).toUTCString();
}

/** Which fields a QueueMessagesList carries: put omits text and count, peek the receipt and visibility. */
export type MessageView = 'put' | 'get' | 'peek';

export function writeMessagesList(messages: readonly StoredMessage[], view: MessageView): string {
  return declaration + writeXmlNode({ name: 'QueueMessagesList', content: messages.map((m) => messageNode(m, view)) });
}

function messageNode(message: StoredMessage, view: MessageView): XmlNode {
  const content: XmlNode[] = [
    { name: 'MessageId', content: message.id },
    { name: 'InsertionTime', content: wireDate(message.insertedMs) },
    { name: 'ExpirationTime', content: wireDate(message.expiresMs) },
  ];
  if (view !== 'peek') {
    content.push({ name: 'PopReceipt', content: message.popReceipt });
    content.push({ name: 'TimeNextVisible', content: wireDate(message.visibleMs) });
  }
  if (view !== 'put') {
    content.push({ name: 'DequeueCount', content: String(message.dequeueCount) });
    content.push({ name: 'MessageText', content: message.text });
  }
  return { name: 'QueueMessage', content };
}

export interface QueueListing {
  /** e.g. http://127.0.0.1:10001/devstoreaccount1/ */
  readonly serviceEndpoint: string;
  /** Echoed only when the request gave them (list-queues1). */
  readonly prefix?: string | undefined;
  readonly marker?: string | undefined;
  readonly maxResults?: number | undefined;
  readonly queues: readonly { readonly name: string; readonly metadata?: ReadonlyMap<string, string> }[];
  /** Empty when this page is the last. */
  readonly nextMarker: string;
}

export function writeQueueListing(listing: QueueListing): string {
  const content: XmlNode[] = [];
  if (listing.prefix !== undefined) content.push({ name: 'Prefix', content: listing.prefix });
  if (listing.marker !== undefined) content.push({ name: 'Marker', content: listing.marker });
  if (listing.maxResults !== undefined) content.push({ name: 'MaxResults', content: String(listing.maxResults) });
  const queues = listing.queues.map((queue): XmlNode => {
    const fields: XmlNode[] = [{ name: 'Name', content: queue.name }];
    if (queue.metadata !== undefined) {
      const entries = [...queue.metadata].map(([name, value]): XmlNode => ({ name, content: value }));
      fields.push({ name: 'Metadata', content: entries });
    }
    return { name: 'Queue', content: fields };
  });
  content.push({ name: 'Queues', content: queues });
  content.push({ name: 'NextMarker', content: listing.nextMarker });
  const inner = content.map(writeXmlNode).join('');
  const endpoint = escapeXmlText(listing.serviceEndpoint);
  return `${declaration}<EnumerationResults ServiceEndpoint="${endpoint}">${inner}</EnumerationResults>`;
}
