// XML bodies that repeat request text stay well-formed on all three services: an error message or an
// authentication detail quoting a query value, a listing echoing its prefix. Characters XML 1.0
// cannot carry (https://www.w3.org/TR/xml/#charsets: most C0 controls, U+FFFE, U+FFFF) come out as
// U+FFFD. Each body is read by expat (Debian's /usr/bin/python3), a strict reader independent of
// the server's code; the JS SDK's reader is no check here, as it accepts such bodies.
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { blobVersion, uniqueContainerName } from '../../helpers/blob.js';
import { send, type RawResponse } from '../../helpers/http.js';
import { blobQueueSend, queuePort, queueVersion, type QueueRequest } from '../../helpers/queue.js';
import { devAccount, startServer, type RunningServer } from '../../helpers/server.js';

/** U+FFFF, U+0001, U+FFFE percent-encoded as UTF-8: valid in a query value, not in XML. */
const unwritable = '%EF%BF%BF%01%EF%BF%BE';
const replaced = '\uFFFD\uFFFD\uFFFD';
const notXmlCharacter = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
/** An Authorization that names the account but signs nothing: 403 AuthenticationFailed. */
const wrongSignature = `SharedKey ${devAccount}:${Buffer.alloc(32).toString('base64')}`;

/** Expat's reading of a body: the root's name and the text of each of its children. */
const expatScript = `
import json, sys, xml.dom.minidom
root = xml.dom.minidom.parseString(sys.stdin.buffer.read()).documentElement
text = lambda e: ''.join(n.data for n in e.childNodes if n.nodeType == n.TEXT_NODE)
children = {c.tagName: text(c) for c in root.childNodes if c.nodeType == c.ELEMENT_NODE}
print(json.dumps({'root': root.tagName, 'children': children}))
`;

interface ExpatReading {
  readonly root: string;
  readonly children: Record<string, string>;
}

/** Asserts a body strictly well-formed XML (valid UTF-8, no character XML refuses, expat reads it). */
function strictXml(response: RawResponse): ExpatReading {
  assert.ok(Buffer.from(response.text, 'utf8').equals(response.body), 'the body is valid UTF-8');
  assert.doesNotMatch(response.text, notXmlCharacter, `a character XML cannot carry: ${JSON.stringify(response.text)}`);
  const output = execFileSync('/usr/bin/python3', ['-c', expatScript], { input: response.body, encoding: 'utf8' });
  return JSON.parse(output) as ExpatReading;
}

/** An XML error answer whose body expat reads; returns the children of Error. */
function xmlError(response: RawResponse, status: number, code: string): Record<string, string> {
  assert.equal(response.status, status, response.text);
  assert.equal(response.headers['x-ms-error-code'], code);
  assert.match(String(response.headers['content-type']), /^application\/xml/);
  const reading = strictXml(response);
  assert.equal(reading.root, 'Error');
  assert.equal(reading.children['Code'], code);
  return reading.children;
}

/**
 * The account's listing (containers, queues) with a prefix XML cannot carry: signed wrongly, the 403's
 * detail quotes the string to sign, prefix and all; signed rightly, the listing echoes the prefix.
 */
async function accountListing(call: (request: QueueRequest) => Promise<RawResponse>): Promise<void> {
  const target = `?comp=list&prefix=${unwritable}`;
  const unsigned = await call({ method: 'GET', target, headers: { Authorization: wrongSignature }, auth: 'none' });
  const detail = xmlError(unsigned, 403, 'AuthenticationFailed')['AuthenticationErrorDetail'];
  assert.ok(detail?.includes(`prefix:${replaced}`), detail);
  const listing = await call({ method: 'GET', target });
  assert.equal(listing.status, 200, listing.text);
  assert.equal(strictXml(listing).children['Prefix'], replaced);
}

describe('XML bodies that repeat request text are well-formed', () => {
  let server: RunningServer;
  let blobPort: number;
  before(async () => {
    server = await startServer({ inMemory: true });
    blobPort = Number(new URL(server.blobUrl!).port);
  });
  after(async () => {
    await server?.stop();
  });

  const blob = (request: QueueRequest) => blobQueueSend(blobPort, blobVersion, request);
  const queue = (request: QueueRequest) => blobQueueSend(queuePort(server), queueVersion, request);

  test('Blob: a query value in the message, the string to sign, the echoed prefixes', async () => {
    const container = uniqueContainerName();
    assert.equal((await blob({ method: 'PUT', target: `${container}?restype=container` })).status, 201);
    const snapshot = await blob({ method: 'GET', target: `${container}/b?snapshot=${unwritable}` });
    // The value is named in an element of the error body, as the service names it.
    const value = xmlError(snapshot, 400, 'InvalidQueryParameterValue')['QueryParameterValue'];
    assert.equal(value, replaced);
    xmlError(
      await blob({ method: 'GET', target: `?comp=list&maxresults=${unwritable}` }),
      400,
      'InvalidQueryParameterValue',
    );
    await accountListing(blob);
    const listing = await blob({
      method: 'GET',
      target: `${container}?restype=container&comp=list&prefix=${unwritable}`,
    });
    assert.equal(listing.status, 200, listing.text);
    assert.equal(strictXml(listing).children['Prefix'], replaced);
  });

  test('Queue: a query value in the message, the string to sign, the echoed prefix', async () => {
    xmlError(await queue({ method: 'GET', target: `?comp=${unwritable}` }), 400, 'InvalidQueryParameterValue');
    const include = await queue({ method: 'GET', target: `?comp=list&include=a%0D${unwritable}` });
    const value = xmlError(include, 400, 'InvalidQueryParameterValue')['QueryParameterValue'];
    // A carriage return is XML: it stays, and readers see a line feed.
    assert.ok(include.text.includes(`<QueryParameterValue>a\r${replaced}</QueryParameterValue>`), include.text);
    assert.equal(value, `a\n${replaced}`);
    await accountListing(queue);
  });

  test('Table: XML errors of the XML operations well-formed; JSON errors carry the value exactly', async () => {
    const acl = await send(server.port, { method: 'GET', path: `/${devAccount}/t1?comp=acl&timeout=${unwritable}` });
    const message = xmlError(acl, 400, 'InvalidQueryParameterValue')['Message'];
    assert.ok(message?.includes(`'${replaced}'`), message);
    const properties = await send(server.port, {
      method: 'GET',
      path: `/${devAccount}/?restype=service&comp=properties&timeout=${unwritable}`,
    });
    xmlError(properties, 400, 'InvalidQueryParameterValue');
    // JSON can carry every character: the value comes back as it was sent.
    const tables = await send(server.port, { method: 'GET', path: `/${devAccount}/Tables?timeout=${unwritable}` });
    assert.equal(tables.status, 400, tables.text);
    assert.ok(Buffer.from(tables.text, 'utf8').equals(tables.body), 'the body is valid UTF-8');
    const error = tables.json()['odata.error'];
    assert.equal(error.code, 'InvalidQueryParameterValue');
    assert.ok(String(error.message.value).includes(`'${decodeURIComponent(unwritable)}'`), tables.text);
  });
});
