import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError, type ErrorCode } from '../../src/errors.js';
import { parseXml } from '../../src/wire/xml.js';
import { parseQueueMessage, writeMessagesList, writeQueueListing, wireDate } from '../../src/queue/wire/xml.js';
import type { StoredMessage } from '../../src/storage/queue-store.js';

function refused(text: string, code: ErrorCode): void {
  assert.throws(
    () => parseQueueMessage(text),
    (error: unknown) => error instanceof StorageError && error.code === code,
    text,
  );
}

const message: StoredMessage = {
  id: 'id-1',
  text: 'a < b & "c"',
  insertedMs: Date.UTC(2024, 0, 2, 3, 4, 5),
  expiresMs: Number.POSITIVE_INFINITY,
  visibleMs: Date.UTC(2024, 0, 2, 3, 4, 35),
  dequeueCount: 2,
  popReceipt: 'receipt',
};

describe('QueueMessage request bodies (put-message, update-message)', () => {
  test('the text, entities decoded, empty allowed', () => {
    const wrap = (inner: string) => `<?xml version="1.0" encoding="utf-8"?><QueueMessage>${inner}</QueueMessage>`;
    assert.equal(parseQueueMessage(wrap('<MessageText>a &lt; b &#x263A;</MessageText>')), 'a < b \u263a');
    assert.equal(parseQueueMessage(wrap('<MessageText></MessageText>')), '');
    assert.equal(parseQueueMessage(wrap('<MessageText><![CDATA[<x>]]></MessageText>')), '<x>');
  });
  test('malformed or hostile XML, another root, or no MessageText is InvalidXmlDocument', () => {
    refused('', 'InvalidXmlDocument');
    refused('<QueueMessage><MessageText>x</QueueMessage>', 'InvalidXmlDocument');
    refused(
      '<!DOCTYPE x [<!ENTITY e "y">]><QueueMessage><MessageText>&e;</MessageText></QueueMessage>',
      'InvalidXmlDocument',
    );
    refused('<Message><MessageText>x</MessageText></Message>', 'InvalidXmlDocument');
    refused('<QueueMessage></QueueMessage>', 'InvalidXmlDocument');
    refused('<QueueMessage><MessageText>\u0001</MessageText></QueueMessage>', 'InvalidXmlDocument');
    refused('<QueueMessage><MessageText><b>x</b></MessageText></QueueMessage>', 'InvalidXmlDocument');
  });
});

describe('QueueMessagesList responses', () => {
  const fields = (text: string) => parseXml(text).children[0]!.children.map((child) => child.name);
  test('get carries every field, in the documented order', () => {
    const text = writeMessagesList([message], 'get');
    assert.deepEqual(fields(text), [
      'MessageId',
      'InsertionTime',
      'ExpirationTime',
      'PopReceipt',
      'TimeNextVisible',
      'DequeueCount',
      'MessageText',
    ]);
    const element = parseXml(text).children[0]!;
    assert.equal(element.children[6]!.text, message.text);
    assert.equal(element.children[1]!.text, 'Tue, 02 Jan 2024 03:04:05 GMT');
    assert.equal(element.children[2]!.text, 'Fri, 31 Dec 9999 23:59:59 GMT');
  });
  test('peek omits the pop receipt and visibility; put the count and text', () => {
    assert.deepEqual(fields(writeMessagesList([message], 'peek')), [
      'MessageId',
      'InsertionTime',
      'ExpirationTime',
      'DequeueCount',
      'MessageText',
    ]);
    assert.deepEqual(fields(writeMessagesList([message], 'put')), [
      'MessageId',
      'InsertionTime',
      'ExpirationTime',
      'PopReceipt',
      'TimeNextVisible',
    ]);
    assert.equal(parseXml(writeMessagesList([], 'get')).children.length, 0);
  });
  test('dates are RFC 1123 GMT', () => {
    assert.equal(wireDate(0), 'Thu, 01 Jan 1970 00:00:00 GMT');
  });
});

describe('EnumerationResults (list-queues1)', () => {
  test('echoes only what the request gave, metadata when asked, an empty NextMarker at the end', () => {
    const text = writeQueueListing({
      serviceEndpoint: 'http://127.0.0.1:10001/devstoreaccount1/',
      prefix: 'q',
      queues: [{ name: 'q1', metadata: new Map([['Color', 'blue']]) }, { name: 'q2' }],
      nextMarker: '',
    });
    const root = parseXml(text);
    assert.equal(root.name, 'EnumerationResults');
    assert.equal(root.attributes.get('ServiceEndpoint'), 'http://127.0.0.1:10001/devstoreaccount1/');
    assert.deepEqual(
      root.children.map((child) => child.name),
      ['Prefix', 'Queues', 'NextMarker'],
    );
    const [first, second] = root.children[1]!.children;
    assert.equal(first!.children[1]!.children[0]!.name, 'Color');
    assert.equal(first!.children[1]!.children[0]!.text, 'blue');
    assert.deepEqual(
      second!.children.map((child) => child.name),
      ['Name'],
    );
    assert.equal(root.children[2]!.text, '');
  });
});
