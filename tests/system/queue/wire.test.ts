// The Queue service on the wire: exact statuses, headers and XML bodies for raw HTTP requests
// signed with the Blob/Queue Shared Key format (and Shared Key Lite), and the service's errors for
// bad input: malformed XML, oversized messages, unknown comps, numbers out of range, wrong pop
// receipts, deleted queues.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertQueueError,
  childText,
  errorFacts,
  messageBody,
  queueSend,
  uniqueQueueName,
  xmlOf,
  type QueueRequest,
} from '../../helpers/queue.js';
import { startServer, type RunningServer } from '../../helpers/server.js';

const rfc1123 =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/;

let server: RunningServer;
before(async () => {
  server = await startServer({ inMemory: true });
});
after(async () => {
  await server?.stop();
});

const call = (request: QueueRequest) => queueSend(server, request);

async function freshQueue(): Promise<string> {
  const name = uniqueQueueName('wire');
  assert.equal((await call({ method: 'PUT', target: name })).status, 201);
  return name;
}

async function putMessage(queue: string, text: string, query = ''): Promise<Map<string, string>> {
  const response = await call({ method: 'POST', target: `${queue}/messages${query}`, body: messageBody(text) });
  assert.equal(response.status, 201, response.text);
  const message = xmlOf(response).children[0]!;
  return new Map(message.children.map((child) => [child.name, child.text]));
}

test('queues: create answers 201 with no body and the common headers', async () => {
  const response = await call({ method: 'PUT', target: uniqueQueueName() });
  assert.equal(response.status, 201);
  assert.equal(response.body.length, 0);
  assert.equal(response.headers['x-ms-version'], '2021-02-12');
  assert.ok(response.headers['x-ms-request-id']);
  assert.match(String(response.headers['date']), rfc1123);
});

test('queues: names: wrong length OutOfRangeInput, other bad names InvalidResourceName', async () => {
  assertQueueError(await call({ method: 'PUT', target: 'ab' }), 400, 'OutOfRangeInput');
  assertQueueError(await call({ method: 'PUT', target: 'a'.repeat(64) }), 400, 'OutOfRangeInput');
  for (const name of ['UPPER', 'a--b', '-ab', 'ab-', 'a_b']) {
    assertQueueError(await call({ method: 'PUT', target: name }), 400, 'InvalidResourceName');
  }
});

test('queues: metadata: names no C# identifier are InvalidMetadata; HEAD answers metadata and count', async () => {
  const queue = await freshQueue();
  const bad = await call({ method: 'PUT', target: `${queue}?comp=metadata`, headers: { 'x-ms-meta-1x': 'v' } });
  assertQueueError(bad, 400, 'InvalidMetadata');
  const set = await call({ method: 'PUT', target: `${queue}?comp=metadata`, headers: { 'x-ms-meta-Color': 'blue' } });
  assert.equal(set.status, 204);
  await putMessage(queue, 'a');
  const head = await call({ method: 'HEAD', target: `${queue}?comp=metadata` });
  assert.equal(head.status, 200);
  assert.equal(head.headers['x-ms-meta-color'], 'blue');
  assert.equal(head.headers['x-ms-approximate-messages-count'], '1');
  assert.equal(head.body.length, 0);
});

test('queues: list: EnumerationResults echoes what was asked and pages with NextMarker', async () => {
  const prefix = uniqueQueueName('lst');
  for (const i of [1, 2, 3]) await call({ method: 'PUT', target: `${prefix}-${i}` });
  const first = await call({ method: 'GET', target: `?comp=list&prefix=${prefix}&maxresults=2&include=metadata` });
  assert.equal(first.status, 200);
  assert.match(String(first.headers['content-type']), /^application\/xml/);
  const root = xmlOf(first);
  assert.equal(root.name, 'EnumerationResults');
  assert.equal(
    root.attributes.get('ServiceEndpoint'),
    `http://127.0.0.1:${new URL(server.queueUrl!).port}/devstoreaccount1/`,
  );
  assert.deepEqual(
    root.children.map((child) => child.name),
    ['Prefix', 'MaxResults', 'Queues', 'NextMarker'],
  );
  const queues = root.children[2]!.children;
  assert.deepEqual(
    queues.map((q) => childText(q, 'Name')),
    [`${prefix}-1`, `${prefix}-2`],
  );
  assert.equal(queues[0]!.children[1]!.name, 'Metadata');
  const marker = childText(root, 'NextMarker')!;
  assert.ok(marker !== '');
  const second = xmlOf(
    await call({ method: 'GET', target: `?comp=list&prefix=${prefix}&marker=${encodeURIComponent(marker)}` }),
  );
  assert.equal(childText(second, 'Marker'), marker);
  assert.deepEqual(
    second.children.find((c) => c.name === 'Queues')!.children.map((q) => childText(q, 'Name')),
    [`${prefix}-3`],
  );
  assert.equal(childText(second, 'NextMarker'), '');
  assertQueueError(
    await call({ method: 'GET', target: '?comp=list&maxresults=0' }),
    400,
    'OutOfRangeQueryParameterValue',
  );
});

test('queues: an unknown comp is 400 InvalidQueryParameterValue; a verb a resource lacks 405', async () => {
  const queue = await freshQueue();
  assertQueueError(await call({ method: 'GET', target: `${queue}?comp=nonsense` }), 400, 'InvalidQueryParameterValue');
  assertQueueError(await call({ method: 'GET', target: '?comp=nonsense' }), 400, 'InvalidQueryParameterValue');
  assertQueueError(await call({ method: 'POST', target: queue }), 405, 'UnsupportedHttpVerb');
});

test('messages: put answers 201 with the id, pop receipt and RFC 1123 times', async () => {
  const queue = await freshQueue();
  const message = await putMessage(queue, 'hi', '?visibilitytimeout=5&messagettl=60');
  assert.deepEqual(
    [...message.keys()],
    ['MessageId', 'InsertionTime', 'ExpirationTime', 'PopReceipt', 'TimeNextVisible'],
  );
  for (const name of ['InsertionTime', 'ExpirationTime', 'TimeNextVisible']) assert.match(message.get(name)!, rfc1123);
  const inserted = Date.parse(message.get('InsertionTime')!);
  assert.equal(Date.parse(message.get('ExpirationTime')!) - inserted, 60_000);
  assert.equal(Date.parse(message.get('TimeNextVisible')!) - inserted, 5_000);
});

test('messages: get and peek: get carries the receipt and count, peek neither receipt nor visibility', async () => {
  const queue = await freshQueue();
  await putMessage(queue, 'x &amp; y');
  const peek = xmlOf(await call({ method: 'GET', target: `${queue}/messages?peekonly=true` }));
  assert.deepEqual(
    peek.children[0]!.children.map((c) => c.name),
    ['MessageId', 'InsertionTime', 'ExpirationTime', 'DequeueCount', 'MessageText'],
  );
  const got = await call({ method: 'GET', target: `${queue}/messages?numofmessages=32&visibilitytimeout=10` });
  assert.equal(got.status, 200);
  const message = xmlOf(got).children[0]!;
  assert.deepEqual(
    message.children.map((c) => c.name),
    ['MessageId', 'InsertionTime', 'ExpirationTime', 'PopReceipt', 'TimeNextVisible', 'DequeueCount', 'MessageText'],
  );
  assert.equal(childText(message, 'MessageText'), 'x & y');
  assert.equal(childText(message, 'DequeueCount'), '1');
  const empty = xmlOf(await call({ method: 'GET', target: `${queue}/messages` }));
  assert.equal(empty.name, 'QueueMessagesList');
  assert.equal(empty.children.length, 0);
});

test('messages: update answers 204 with the new receipt and visibility; delete checks the receipt', async () => {
  const queue = await freshQueue();
  const { id, receipt } = await claimOne(queue, 'before');
  const update = await call({
    method: 'PUT',
    target: `${queue}/messages/${id}?popreceipt=${encodeURIComponent(receipt)}&visibilitytimeout=0`,
    body: messageBody('after'),
  });
  assert.equal(update.status, 204, update.text);
  const newReceipt = String(update.headers['x-ms-popreceipt']);
  assert.ok(newReceipt !== '' && newReceipt !== receipt);
  assert.match(String(update.headers['x-ms-time-next-visible']), rfc1123);
  const stale = await call({
    method: 'DELETE',
    target: `${queue}/messages/${id}?popreceipt=${encodeURIComponent(receipt)}`,
  });
  assertQueueError(stale, 400, 'PopReceiptMismatch');
  assertQueueError(
    await call({ method: 'DELETE', target: `${queue}/messages/${id}` }),
    400,
    'MissingRequiredQueryParameter',
  );
  const done = await call({
    method: 'DELETE',
    target: `${queue}/messages/${id}?popreceipt=${encodeURIComponent(newReceipt)}`,
  });
  assert.equal(done.status, 204);
  const gone = await call({
    method: 'DELETE',
    target: `${queue}/messages/${id}?popreceipt=${encodeURIComponent(newReceipt)}`,
  });
  assertQueueError(gone, 404, 'MessageNotFound');
});

async function claimOne(queue: string, text: string): Promise<{ id: string; receipt: string }> {
  await putMessage(queue, text);
  const message = xmlOf(await call({ method: 'GET', target: `${queue}/messages?visibilitytimeout=30` })).children[0]!;
  return { id: childText(message, 'MessageId')!, receipt: childText(message, 'PopReceipt')! };
}

test('messages: bad bodies: malformed XML, no MessageText, DOCTYPE, control characters, not UTF-8', async () => {
  const queue = await freshQueue();
  const bodies = [
    '',
    '<QueueMessage><MessageText>x</QueueMessage>',
    '<QueueMessage><Text>x</Text></QueueMessage>',
    '<!DOCTYPE q [<!ENTITY e "boom">]><QueueMessage><MessageText>&e;</MessageText></QueueMessage>',
    '<QueueMessage><MessageText>\u0007</MessageText></QueueMessage>',
    Buffer.from([0x3c, 0xff, 0xfe, 0x3e]),
  ];
  for (const body of bodies) {
    assertQueueError(await call({ method: 'POST', target: `${queue}/messages`, body }), 400, 'InvalidXmlDocument');
  }
});

test('messages: 64 KiB of UTF-8 text passes, a byte more is 413 RequestBodyTooLarge; so is a 5 MiB body', async () => {
  const queue = await freshQueue();
  await putMessage(queue, 'a'.repeat(64 * 1024));
  const over = await call({
    method: 'POST',
    target: `${queue}/messages`,
    body: messageBody('é'.repeat(32 * 1024) + 'a'),
  });
  assertQueueError(over, 413, 'RequestBodyTooLarge');
  // The service names the limit, in bytes, after the message (Azurite does too).
  assert.deepEqual(
    xmlOf(over).children.map((child) => child.name),
    ['Code', 'Message', 'MaxLimit'],
  );
  assert.equal(childText(xmlOf(over), 'MaxLimit'), '65536');
  const huge = await call({
    method: 'POST',
    target: `${queue}/messages`,
    body: messageBody('a'.repeat(5 * 1024 * 1024)),
  });
  assert.equal(huge.status, 413);
});

test('messages: an update whose new text is over 64 KiB is 413 RequestBodyTooLarge with its MaxLimit', async () => {
  const queue = await freshQueue();
  await putMessage(queue, 'small');
  const got = xmlOf(await call({ method: 'GET', target: `${queue}/messages` })).children[0]!;
  const [id, receipt] = [childText(got, 'MessageId')!, childText(got, 'PopReceipt')!];
  const update = await call({
    method: 'PUT',
    target: `${queue}/messages/${id}?popreceipt=${encodeURIComponent(receipt)}&visibilitytimeout=0`,
    body: messageBody('a'.repeat(64 * 1024 + 1)),
  });
  assertQueueError(update, 413, 'RequestBodyTooLarge');
  assert.equal(childText(xmlOf(update), 'MaxLimit'), '65536');
  // The refused update changed nothing: the pop receipt still holds, and the text is the old one.
  const visible = await call({
    method: 'PUT',
    target: `${queue}/messages/${id}?popreceipt=${encodeURIComponent(receipt)}&visibilitytimeout=0`,
  });
  assert.equal(visible.status, 204, visible.text);
  const peeked = xmlOf(await call({ method: 'GET', target: `${queue}/messages?peekonly=true` })).children[0]!;
  assert.equal(childText(peeked, 'MessageText'), 'small');
});

test('messages: numbers out of range and not numbers', async () => {
  const queue = await freshQueue();
  const cases: [string, string, string][] = [
    ['GET', 'numofmessages=33', 'OutOfRangeQueryParameterValue'],
    ['GET', 'numofmessages=0', 'OutOfRangeQueryParameterValue'],
    ['GET', 'numofmessages=two', 'InvalidQueryParameterValue'],
    ['GET', 'visibilitytimeout=0', 'OutOfRangeQueryParameterValue'],
    ['GET', 'visibilitytimeout=604801', 'OutOfRangeQueryParameterValue'],
    ['POST', 'visibilitytimeout=604801', 'OutOfRangeQueryParameterValue'],
    ['POST', 'visibilitytimeout=-1', 'OutOfRangeQueryParameterValue'],
    ['POST', 'messagettl=0', 'InvalidQueryParameterValue'],
    ['POST', 'messagettl=-2', 'InvalidQueryParameterValue'],
    ['POST', 'visibilitytimeout=10&messagettl=10', 'InvalidQueryParameterValue'],
  ];
  for (const [method, query, code] of cases) {
    const body = method === 'POST' ? messageBody('x') : undefined;
    const response = await call({ method, target: `${queue}/messages?${query}`, ...(body && { body }) });
    assertQueueError(response, 400, code);
  }
  await putMessage(queue, 'forever', '?messagettl=-1&visibilitytimeout=604800');
});

test('messages: an out-of-range or invalid parameter is named in elements of the error body', async () => {
  const queue = await freshQueue();
  const outOfRange = 'One of the query parameters specified in the request URI is outside the permissible range.';
  const invalid = 'Value for one of the query parameters specified in the request URI is invalid.';
  const range = (name: string, value: string, min: string, max: string): [string, string][] => [
    ['QueryParameterName', name],
    ['QueryParameterValue', value],
    ['MinimumAllowed', min],
    ['MaximumAllowed', max],
  ];
  const get = await call({ method: 'GET', target: `${queue}/messages?numofmessages=100` });
  assertQueueError(get, 400, 'OutOfRangeQueryParameterValue');
  assert.deepEqual(errorFacts(get), [outOfRange, range('numofmessages', '100', '1', '32')]);
  const put = await call({
    method: 'POST',
    target: `${queue}/messages?visibilitytimeout=691200`,
    body: messageBody('x'),
  });
  assert.deepEqual(errorFacts(put), [outOfRange, range('visibilitytimeout', '691200', '0', '604800')]);
  const shorter = await call({
    method: 'POST',
    target: `${queue}/messages?visibilitytimeout=30&messagettl=30`,
    body: messageBody('x'),
  });
  assertQueueError(shorter, 400, 'InvalidQueryParameterValue');
  assert.deepEqual(errorFacts(shorter), [
    invalid,
    [
      ['QueryParameterName', 'visibilitytimeout'],
      ['QueryParameterValue', '30'],
      ['Reason', 'messagettl must be greater than visibilitytimeout'],
    ],
  ]);
  const word = await call({ method: 'GET', target: `${queue}/messages?numofmessages=two` });
  assertQueueError(word, 400, 'InvalidQueryParameterValue');
  assert.deepEqual(errorFacts(word)[1].slice(0, 2), [
    ['QueryParameterName', 'numofmessages'],
    ['QueryParameterValue', 'two'],
  ]);
  const receipt = await call({ method: 'DELETE', target: `${queue}/messages/${'0'.repeat(32)}?popreceipt=invalid` });
  assertQueueError(receipt, 400, 'InvalidQueryParameterValue');
  assert.deepEqual(errorFacts(receipt)[1], [
    ['QueryParameterName', 'popreceipt'],
    ['QueryParameterValue', 'invalid'],
    ['Reason', 'Invalid pop receipt format'],
  ]);
  // messagettl is 64-bit: 2^63 - 1 is taken, 2^63 is not an integer the service reads.
  await putMessage(queue, 'long', '?messagettl=9223372036854775807');
  const past = await call({
    method: 'POST',
    target: `${queue}/messages?messagettl=9223372036854775808`,
    body: messageBody('x'),
  });
  assertQueueError(past, 400, 'InvalidQueryParameterValue');
});

test('messages: a deleted queue: 404 QueueNotFound for every message operation', async () => {
  const queue = await freshQueue();
  assert.equal((await call({ method: 'DELETE', target: queue })).status, 204);
  assertQueueError(
    await call({ method: 'POST', target: `${queue}/messages`, body: messageBody('x') }),
    404,
    'QueueNotFound',
  );
  assertQueueError(await call({ method: 'GET', target: `${queue}/messages` }), 404, 'QueueNotFound');
  assertQueueError(await call({ method: 'DELETE', target: `${queue}/messages` }), 404, 'QueueNotFound');
  assertQueueError(await call({ method: 'GET', target: `${queue}?comp=metadata` }), 404, 'QueueNotFound');
});

test('Shared Key: Shared Key Lite signs too', async () => {
  const response = await call({ method: 'PUT', target: uniqueQueueName(), auth: 'SharedKeyLite' });
  assert.equal(response.status, 201, response.text);
});

test('Shared Key: a wrong signature or none is 403 AuthenticationFailed in XML', async () => {
  const queue = uniqueQueueName();
  const forged = await call({
    method: 'PUT',
    target: queue,
    headers: { Authorization: `SharedKey devstoreaccount1:${'A'.repeat(43)}=` },
    auth: 'none',
  });
  assertQueueError(forged, 403, 'AuthenticationFailed');
  assertQueueError(await call({ method: 'PUT', target: queue, auth: 'none' }), 403, 'AuthenticationFailed');
});
