// Queue service test helpers: the official JS SDK pointed at a test server's queue endpoint with a
// connection string, raw HTTP signed with the Blob/Queue Shared Key format (built here from
// https://learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key, independently of
// the server's code: only the HMAC is shared), the test clock, and XML reading.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QueueServiceClient, type StoragePipelineOptions } from '@azure/storage-queue';
import { parseXml, type XmlElement } from '../../src/wire/xml.js';
import { hmacBase64, send, type RawResponse } from './http.js';
import { devAccount, devKey, makeTempDir, type RunningServer } from './server.js';

export const queueVersion = '2021-02-12';

export function queueEndpoint(server: RunningServer): string {
  assert.ok(server.queueUrl, 'the server printed no queue endpoint');
  return server.queueUrl;
}

export function queuePort(server: RunningServer): number {
  return Number(new URL(queueEndpoint(server)).port);
}

/** What a user of `UseDevelopmentStorage=true` has, with the queue endpoint of this server. */
export function queueConnectionString(server: RunningServer): string {
  return (
    `DefaultEndpointsProtocol=http;AccountName=${devAccount};AccountKey=${devKey};` +
    `QueueEndpoint=${queueEndpoint(server)};`
  );
}

const pipelineOptions: StoragePipelineOptions = { retryOptions: { maxTries: 1 } };

export function queueServiceClient(server: RunningServer): QueueServiceClient {
  return QueueServiceClient.fromConnectionString(queueConnectionString(server), pipelineOptions);
}

export function uniqueQueueName(prefix = 'q'): string {
  return `${prefix}${randomUUID().replaceAll('-', '').slice(0, 16)}`;
}

/** The test clock: a file whose number (ms) the server adds to its queue clock (src/domain/clock.ts). */
export class TestClock {
  readonly path: string;
  private offsetMs = 0;

  constructor() {
    this.path = join(makeTempDir('cerulean-clock-'), 'offset');
    writeFileSync(this.path, '0');
  }

  get env(): Record<string, string> {
    return { CERULEAN_TEST_CLOCK_FILE: this.path };
  }

  advance(ms: number): void {
    this.offsetMs += ms;
    writeFileSync(this.path, String(this.offsetMs));
  }
}

export interface QueueRequest {
  method: string;
  /** The request target after the account, e.g. `q1/messages?numofmessages=2`. */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Default SharedKey; 'none' sends no Authorization. */
  auth?: 'SharedKey' | 'SharedKeyLite' | 'none';
  /** To the read-access secondary endpoint, `/{account}-secondary/…`. */
  secondary?: boolean;
}

/** One raw request to the queue endpoint, path-style, signed as the Blob and Queue services sign. */
export function queueSend(server: RunningServer, request: QueueRequest): Promise<RawResponse> {
  return blobQueueSend(queuePort(server), queueVersion, request);
}

/** One raw request to a Blob or Queue endpoint on `port`, path-style, signed with that services' Shared Key. */
export function blobQueueSend(port: number, version: string, request: QueueRequest): Promise<RawResponse> {
  const path = `/${devAccount}${request.secondary === true ? '-secondary' : ''}/${request.target}`;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers: Record<string, string> = {
    'x-ms-version': version,
    'x-ms-date': new Date().toUTCString(),
    ...(body !== undefined && { 'Content-Type': 'application/xml', 'Content-Length': String(body.length) }),
    ...request.headers,
  };
  const scheme = request.auth ?? 'SharedKey';
  if (scheme !== 'none') {
    headers['Authorization'] =
      `${scheme} ${devAccount}:${hmacBase64(devKey, queueStringToSign(scheme, request.method, path, headers))}`;
  }
  return send(port, { method: request.method, path, headers, ...(body && { body }), auth: 'none' });
}

/** The Blob/Queue string-to-sign, from the docs. */
export function queueStringToSign(
  scheme: 'SharedKey' | 'SharedKeyLite',
  method: string,
  target: string,
  headers: Record<string, string>,
): string {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const get = (name: string): string => lower.get(name) ?? '';
  const canonicalHeaders = [...lower.keys()]
    .filter((name) => name.startsWith('x-ms-'))
    .sort()
    .map((name) => `${name}:${get(name)}\n`)
    .join('');
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
  if (scheme === 'SharedKeyLite') {
    const comp = query.get('comp');
    const resource = `/${devAccount}${path}${comp === null ? '' : `?comp=${comp}`}`;
    return `${method}\n${get('content-md5')}\n${get('content-type')}\n${get('date')}\n${canonicalHeaders}${resource}`;
  }
  const byName = new Map<string, string[]>();
  for (const [name, value] of query) byName.set(name.toLowerCase(), [...(byName.get(name.toLowerCase()) ?? []), value]);
  const names = [...byName.keys()].sort();
  const params = names.map((name) => `\n${name}:${byName.get(name)!.sort().join(',')}`).join('');
  const length = get('content-length') === '0' ? '' : get('content-length');
  const fields = [
    method,
    get('content-encoding'),
    get('content-language'),
    length,
    get('content-md5'),
    get('content-type'),
  ];
  fields.push(
    get('date'),
    get('if-modified-since'),
    get('if-match'),
    get('if-none-match'),
    get('if-unmodified-since'),
    get('range'),
  );
  return `${fields.join('\n')}\n${canonicalHeaders}/${devAccount}${path}${params}`;
}

export function xmlOf(response: RawResponse): XmlElement {
  return parseXml(response.text);
}

/** The text of the child `name` of `element`. */
export function childText(element: XmlElement, name: string): string | undefined {
  return element.children.find((child) => child.name === name)?.text;
}

/** Asserts an XML error answer: status, x-ms-error-code and the Error body's Code. */
export function assertQueueError(response: RawResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.headers['x-ms-error-code'], code, response.text);
  assert.match(String(response.headers['content-type']), /^application\/xml/);
  const error = xmlOf(response);
  assert.equal(error.name, 'Error');
  assert.equal(childText(error, 'Code'), code);
}

/** An XML error answer's message (its first line) and the elements after <Message>, in order. */
export function errorFacts(response: RawResponse): [string, [string, string][]] {
  const error = xmlOf(response);
  const facts = error.children.filter((child) => !['Code', 'Message'].includes(child.name));
  return [childText(error, 'Message')!.split('\n')[0]!, facts.map((child) => [child.name, child.text])];
}

export function messageBody(text: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><QueueMessage><MessageText>${text}</MessageText></QueueMessage>`;
}
