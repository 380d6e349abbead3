// Every SAS permission letter × every kind of SAS (a queue's service SAS, account SAS with each srt)
// × every route of the Queue service, through raw HTTP against one real server, as for blobs
// (blob-sas-matrix.test.ts). Expectations from the documented tables: the Queue rows of "Specify
// permissions" in https://learn.microsoft.com/rest/api/storageservices/create-service-sas (Read:
// metadata, properties and Peek; Add; Update; Process: Get and Delete messages) and the signedPermission
// field of https://learn.microsoft.com/rest/api/storageservices/create-account-sas. A route without a
// row fails the test.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { queueService } from '../../../src/queue/definition.js';
import { accountSas, queueSas, sasRequest, type SasRequest } from '../../helpers/blob-sas.js';
import { describeResponse, type RawResponse } from '../../helpers/http.js';
import { childText, queuePort, uniqueQueueName, xmlOf } from '../../helpers/queue.js';
import {
  accountKind,
  matrixTests,
  serviceExpectation,
  type MatrixRow,
  type MatrixServer,
  type SasKind,
} from '../../helpers/sas-matrix.js';
import { startServer } from '../../helpers/server.js';

type FixtureKind = 'none' | 'queue' | 'newQueue' | 'message';

interface Fixture {
  readonly queue: string;
  /** A message received once (kind 'message'): its id and pop receipt. */
  readonly messageId: string;
  readonly popReceipt: string;
}

type Row = MatrixRow<Fixture, FixtureKind>;

const on = (target: string, method: string, headers?: Record<string, string>, body?: string): SasRequest => ({
  method,
  target,
  ...(headers && { headers }),
  ...(body !== undefined && { body }),
});
const message = '<QueueMessage><MessageText>hello</MessageText></QueueMessage>';
const serviceProperties =
  '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors /></StorageServiceProperties>';
const xml = { 'Content-Type': 'application/xml' };

/** Service-level operations: no service SAS (it signs a queue); an account SAS with srt=s. */
function serviceRow(route: string, target: string, method: string, letters: string, body?: string): Row {
  const request = () => on(target, method, body === undefined ? undefined : xml, body);
  return { route, fixture: 'none', request, account: { srt: 's', letters } };
}

const rows: Row[] = [
  serviceRow('GET service ListQueues', '?comp=list', 'GET', 'l'),
  serviceRow('GET service GetQueueServiceProperties', '?restype=service&comp=properties', 'GET', 'r'),
  serviceRow('PUT service SetQueueServiceProperties', '?restype=service&comp=properties', 'PUT', 'w', serviceProperties),
  serviceRow('GET service GetQueueServiceStats', '?restype=service&comp=stats', 'GET', 'r'),
  // Queue level (srt=c). A queue's service SAS reads its metadata (Read) and manages nothing else.
  // Create with c or w, as Cerulean reads the account SAS table (create-account-sas gives c for objects only).
  { route: 'PUT queue CreateQueue', fixture: 'newQueue', request: (f) => on(f.queue, 'PUT'), account: { srt: 'c', letters: 'cw' } },
  { route: 'DELETE queue DeleteQueue', fixture: 'queue', request: (f) => on(f.queue, 'DELETE'), account: { srt: 'c', letters: 'd' } },
  ...(['GET', 'HEAD'] as const).flatMap((method): Row[] => [
    {
      route: `${method} queue GetQueueMetadata`,
      fixture: 'queue',
      request: (f) => on(`${f.queue}?comp=metadata`, method),
      service: 'r',
      account: { srt: 'c', letters: 'r' },
    },
    // No SAS reads or sets a queue's ACL (Cerulean's choice: the tables list no letter for it).
    {
      route: `${method} queue GetQueueAcl`,
      fixture: 'queue',
      request: (f) => on(`${f.queue}?comp=acl`, method),
      account: { srt: 'c', letters: '' },
    },
  ]),
  {
    route: 'PUT queue SetQueueMetadata',
    fixture: 'queue',
    request: (f) => on(`${f.queue}?comp=metadata`, 'PUT', { 'x-ms-meta-a': '1' }),
    account: { srt: 'c', letters: 'w' },
  },
  {
    route: 'PUT queue SetQueueAcl',
    fixture: 'queue',
    request: (f) => on(`${f.queue}?comp=acl`, 'PUT'),
    account: { srt: 'c', letters: '' },
  },
  // Messages (srt=o).
  messageRow('POST messages PutMessage', 'queue', (f) => on(`${f.queue}/messages`, 'POST', xml, message), 'a'),
  messageRow('GET messages PeekMessages', 'message', (f) => on(`${f.queue}/messages?peekonly=true`, 'GET'), 'r'),
  messageRow('GET messages GetMessages', 'message', (f) => on(`${f.queue}/messages`, 'GET'), 'p'),
  // A service SAS has no letter that clears a queue; an account SAS clears with Delete.
  {
    route: 'DELETE messages ClearMessages',
    fixture: 'message',
    request: (f) => on(`${f.queue}/messages`, 'DELETE'),
    account: { srt: 'o', letters: 'd' },
  },
  messageRow('DELETE message DeleteMessage', 'message', (f) => on(messagePath(f), 'DELETE'), 'p'),
  messageRow(
    'PUT message UpdateMessage',
    'message',
    (f) => on(`${messagePath(f)}&visibilitytimeout=0`, 'PUT', xml, message),
    'u',
  ),
];

function messagePath(f: Fixture): string {
  return `${f.queue}/messages/${f.messageId}?popreceipt=${encodeURIComponent(f.popReceipt)}`;
}

/** A message operation whose service SAS and account SAS letters are the same. */
function messageRow(route: string, fixture: FixtureKind, request: Row['request'], letters: string): Row {
  return { route, fixture, request, service: letters, account: { srt: 'o', letters } };
}

const queueServiceKind: SasKind<Fixture> = {
  name: 'queue service SAS',
  letters: 'raupwdlc',
  sas: (letter, f) => queueSas(f.queue, letter),
  expect: (row, letter) => serviceExpectation(row, letter, row.route.split(' ')[1] === 'service'),
};

const queueAccountSas = (srt: string, sp: string) => accountSas({ ss: 'q', srt, sp });
const kinds: readonly SasKind<Fixture>[] = [
  queueServiceKind,
  ...(['s', 'c', 'o'] as const).map((srt) => accountKind<Fixture>(srt, 'rwdlacup', queueAccountSas)),
];

describe('the Queue SAS matrix: every letter × SAS kind × route, against the documented tables', () => {
  matrixTests({ service: 'Queue', routes: queueService.routes, rows, kinds, start: startQueueServer });
});

async function startQueueServer(): Promise<MatrixServer<Fixture, FixtureKind>> {
  const server = await startServer();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const send = (request: SasRequest, sas: string | undefined) =>
    sasRequest(queuePort(server), { ...request, agent }, sas);
  const ok = async (response: Promise<RawResponse>, what: string): Promise<RawResponse> => {
    const res = await response;
    assert.ok(res.status >= 200 && res.status < 300, `${what}: ${describeResponse(res)}`);
    return res;
  };
  /** A fresh fixture of this kind, in a queue of its own. */
  const make = async (kind: FixtureKind): Promise<Fixture> => {
    const queue = uniqueQueueName('m');
    if (kind === 'none' || kind === 'newQueue') return { queue, messageId: '', popReceipt: '' };
    await ok(send(on(queue, 'PUT'), undefined), 'create queue');
    if (kind === 'queue') return { queue, messageId: '', popReceipt: '' };
    await ok(send(on(`${queue}/messages`, 'POST', xml, message), undefined), 'put message');
    await ok(send(on(`${queue}/messages`, 'POST', xml, message), undefined), 'put message');
    const got = xmlOf(await ok(send(on(`${queue}/messages?visibilitytimeout=30`, 'GET'), undefined), 'get'));
    const received = got.children.find((child) => child.name === 'QueueMessage')!;
    return { queue, messageId: childText(received, 'MessageId')!, popReceipt: childText(received, 'PopReceipt')! };
  };
  const stop = async () => {
    agent.destroy();
    await server.stop();
  };
  return { make, send, stop };
}
