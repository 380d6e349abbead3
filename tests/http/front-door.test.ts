// A second service registered on the front door beside none of the Table service's code: a
// stand-in queue service with two routes gets its own listener, path-style and host-style
// targets, XML errors with x-ms-error-code, and shares the accounts, Shared Key and the hooks
// (the operation of each answer, 'Unknown' for a request no route matches).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StorageError } from '../../src/errors.js';
import { loadAccounts } from '../../src/http/accounts.js';
import { tableSharedKey } from '../../src/http/auth.js';
import type { RequestHooks } from '../../src/http/hooks.js';
import { createLogger } from '../../src/http/log.js';
import { FrontDoor } from '../../src/http/server.js';
import { route, type ServiceDefinition } from '../../src/http/service-definition.js';
import { describeResponse, send } from '../helpers/http.js';

type QueueResource = { readonly kind: 'account' } | { readonly kind: 'queue'; readonly name: string };
interface QueueServices {
  readonly created: string[];
}

const listNeed = { resourceType: 's', service: '', account: ['l'] } as const;
const createNeed = { resourceType: 'c', service: '', account: ['c'] } as const;

const stubQueueService: ServiceDefinition<QueueResource, QueueServices> = {
  name: 'queue',
  endpointKey: 'QueueEndpoint',
  parseResource(path) {
    if (path === '') return { kind: 'account' };
    if (/^[a-z0-9-]{3,63}$/.test(path)) return { kind: 'queue', name: path };
    throw new StorageError('InvalidUri');
  },
  routes: [
    route({ resource: 'account', method: 'GET', comp: 'list', operation: 'ListQueues', sas: listNeed }, async () => ({
      status: 200,
      headers: { 'Content-Type': 'application/xml' },
      body: '<?xml version="1.0" encoding="utf-8"?><EnumerationResults/>',
    })),
    route(
      { resource: 'queue', method: 'PUT', comp: null, operation: 'CreateQueue', sas: createNeed },
      async (call, queue) => {
        call.services.created.push(queue.name);
        return { status: 201 };
      },
    ),
  ],
  unrouted: (_resource, _query, otherMethods) => new StorageError(otherMethods ? 'MethodNotAllowed' : 'InvalidUri'),
  errorFormat: () => ({ kind: 'xml' }),
  sharedKey: tableSharedKey,
  sas: {
    accountServiceLetter: 'q',
    resourceOf: (resource) => (resource.kind === 'queue' ? resource.name : undefined),
    findPolicy: async () => undefined,
  },
  corsRules: async () => [],
  faultScope: (resource) => (resource.kind === 'queue' ? resource.name : undefined),
};

describe('a second service on the front door', () => {
  const services: QueueServices = { created: [] };
  const answered: string[] = [];
  const scopes: (string | undefined)[] = [];
  let server: Server;
  let port: number;

  before(async () => {
    const hooks: RequestHooks = {
      admin: async () => ({ status: 404 }),
      operations: [
        (next) => (operation) => {
          scopes.push(operation.scope());
          return next(operation);
        },
      ],
      answered: (operation) => answered.push(operation),
    };
    const frontDoor = new FrontDoor({
      accounts: loadAccounts(undefined),
      log: createLogger('silent'),
      requestsInFlightMax: 8,
      hooks,
    });
    server = frontDoor.server(stubQueueService, services);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('its routes answer, path-style and host-style, named by the route', async () => {
    const list = await send(port, { method: 'GET', path: '/devstoreaccount1?comp=list' });
    assert.equal(list.status, 200, describeResponse(list));
    const create = await send(port, { method: 'PUT', path: '/devstoreaccount1/orders' });
    assert.equal(create.status, 201, describeResponse(create));
    const hostStyle = await send(port, {
      method: 'PUT',
      path: '/invoices',
      headers: { Host: `devstoreaccount1.queue.localhost:${port}` },
    });
    assert.equal(hostStyle.status, 201, describeResponse(hostStyle));
    assert.deepEqual(services.created, ['orders', 'invoices']);
    assert.deepEqual(answered.splice(0), ['ListQueues', 'CreateQueue', 'CreateQueue']);
    assert.deepEqual(scopes.splice(0), [undefined, 'orders', 'invoices']);
  });

  test('a request no route matches gets the service XML error and counts as Unknown', async () => {
    const res = await send(port, { method: 'DELETE', path: '/devstoreaccount1?comp=list' });
    assert.equal(res.status, 405, describeResponse(res));
    assert.equal(res.headers['x-ms-error-code'], 'MethodNotAllowed');
    assert.equal(res.headers['content-type'], 'application/xml');
    assert.match(res.text, /^<\?xml version="1\.0" encoding="utf-8"\?><Error><Code>MethodNotAllowed<\/Code><Message>/);
    const bad = await send(port, { method: 'PUT', path: '/devstoreaccount1/Not_A_Queue' });
    assert.equal(bad.status, 400, describeResponse(bad));
    assert.match(bad.text, /<Error><Code>InvalidUri<\/Code>/);
    assert.deepEqual(answered.splice(0), ['Unknown', 'Unknown']);
    assert.deepEqual(scopes.splice(0), [], 'unmatched requests never reach the hooks run');
  });

  test('the shared Shared Key check refuses a bad signature in the service XML', async () => {
    const res = await send(port, {
      method: 'GET',
      path: '/devstoreaccount1?comp=list',
      auth: { scheme: 'SharedKeyLite', key: Buffer.alloc(64).toString('base64') },
    });
    assert.equal(res.status, 403, describeResponse(res));
    assert.match(res.text, /<Error><Code>AuthenticationFailed<\/Code>.*<AuthenticationErrorDetail>/s);
  });
});
