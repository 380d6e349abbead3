// The fault test (after SQLite's "walk every failure point"): a workload of real
// HTTP requests runs against the real server in this process, over a real engine wrapped in a
// FaultyStore, once for every store call N of the workload and every way a call can fail. Each
// time call N fails:
//   - the request that made it gets a 5xx with an Azure error body (JSON odata.error or the XML
//     Error of XML operations) within a deadline, never a hang or a dropped connection;
//   - the engine's state, read back without the wrapper, is the state before that request or the
//     state after it: no batch, and no other request, is ever half applied;
//   - the server goes on answering.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { loadAccounts } from '../../../src/http/accounts.js';
import { createLogger } from '../../../src/http/log.js';
import { FrontDoor } from '../../../src/http/server.js';
import { tableService } from '../../../src/table/definition.js';
import { createTableServices } from '../../../src/table/service/services.js';
import type { TableStore } from '../../../src/storage/table-store.js';
import { changesetBody, entityResource, op, postBatch, queryBody } from '../../helpers/batch.js';
import { describeResponse, send, type RawRequest, type RawResponse } from '../../helpers/http.js';
import { devKey } from '../../helpers/server.js';
import { faultKinds, FaultyStore, type FaultKind } from './faulty-store.js';
import { propertiesText, show, walk, type StoreFactory, type StoreUnderTest } from './support.js';

export interface FaultCheckOptions {
  /** Ways the Nth call fails; each N is run once per kind (default: all three). */
  readonly kinds?: 'all' | 'one per call';
}

/** Where a run sends its requests: each run works in an account of its own, on one store. */
interface Target {
  readonly port: number;
  readonly account: string;
}

/** One request of a workload; without faults it succeeds. */
interface Step {
  readonly name: string;
  send(target: Target): Promise<RawResponse>;
}

/** A request to `resource` of the run's account, signed with its key. */
function request(
  target: Target,
  method: string,
  resource: string,
  extra: Omit<RawRequest, 'method' | 'path'> = {},
): Promise<RawResponse> {
  return send(target.port, {
    method,
    path: `/${target.account}/${resource}`,
    auth: { scheme: 'SharedKeyLite', account: target.account, key: devKey },
    ...extra,
  });
}

function batch(target: Target, body: ReturnType<typeof changesetBody>): Promise<RawResponse> {
  return postBatch(target.port, body, {
    path: `/${target.account}/$batch`,
    auth: { scheme: 'SharedKeyLite', account: target.account, key: devKey },
  });
}

/** The absolute URL of a resource as the SDKs write it inside a batch. */
function url(target: Target, resource: string): string {
  return `http://127.0.0.1:${target.port}/${target.account}/${resource}`;
}

const table = 'Faults';
/** Tells a hang from an answer; generous, since one answer can take seconds on a loaded machine. */
const answerDeadlineMs = 60_000;
const xmlHeaders = { 'Content-Type': 'application/xml', Accept: 'application/xml' };
const propertiesResource = '?restype=service&comp=properties';
const corsXml =
  '<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>' +
  '<MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders></AllowedHeaders></CorsRule></Cors></StorageServiceProperties>';
const loggingAndCorsXml =
  '<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write>' +
  '<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>' +
  corsXml.slice('<StorageServiceProperties>'.length);
const aclXml =
  '<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>p</Id><AccessPolicy>' +
  '<Start>2021-01-01T00:00:00.0000000Z</Start><Expiry>2031-01-02T00:00:00.0000000Z</Expiry><Permission>raud</Permission>' +
  '</AccessPolicy></SignedIdentifier></SignedIdentifiers>';

/** Every kind of operation the service has, in an order where each one does real work. */
const everyOperation: readonly Step[] = [
  { name: 'Create Table', send: (t) => request(t, 'POST', 'Tables', { body: { TableName: table } }) },
  {
    name: 'Insert Entity',
    send: (t) => request(t, 'POST', table, { body: { PartitionKey: 'p', RowKey: 'a', n: 1, s: 'x' } }),
  },
  {
    name: 'a change set of inserts and a merge',
    send: (t) =>
      batch(
        t,
        changesetBody([
          op.insert(url(t, table), { PartitionKey: 'p', RowKey: 'b', n: 2 }),
          op.insert(url(t, table), { PartitionKey: 'p', RowKey: 'c', n: 3 }),
          op.update(url(t, entityResource(table, 'p', 'a')), 'Merge', { PartitionKey: 'p', RowKey: 'a', m: true }),
        ]),
      ),
  },
  {
    name: 'Update Entity',
    send: (t) => request(t, 'PUT', entityResource(table, 'p', 'a'), { headers: { 'If-Match': '*' }, body: { n: 10 } }),
  },
  {
    name: 'Insert Or Merge Entity',
    send: (t) => request(t, 'MERGE', entityResource(table, 'p', 'b'), { body: { x: 'y' } }),
  },
  {
    name: 'Delete Entity',
    send: (t) => request(t, 'DELETE', entityResource(table, 'p', 'c'), { headers: { 'If-Match': '*' } }),
  },
  { name: 'Set Table ACL', send: (t) => request(t, 'PUT', `${table}?comp=acl`, { body: aclXml, headers: xmlHeaders }) },
  {
    name: 'Get Table ACL',
    send: (t) => request(t, 'GET', `${table}?comp=acl`, { headers: { Accept: 'application/xml' } }),
  },
  {
    name: 'Set Service Properties (one section)',
    send: (t) => request(t, 'PUT', propertiesResource, { body: corsXml, headers: xmlHeaders }),
  },
  {
    name: 'Get Service Properties',
    send: (t) => request(t, 'GET', propertiesResource, { headers: { Accept: 'application/xml' } }),
  },
  { name: 'Get Entity', send: (t) => request(t, 'GET', entityResource(table, 'p', 'a')) },
  {
    name: 'Query Entities',
    send: (t) => request(t, 'GET', `${table}()?$filter=${encodeURIComponent("n eq 10 or x eq 'y'")}`),
  },
  { name: 'Query Tables', send: (t) => request(t, 'GET', 'Tables') },
  {
    name: 'a batch of one point read',
    send: (t) => batch(t, queryBody(op.get(url(t, entityResource(table, 'p', 'a'))))),
  },
  { name: 'Delete Table', send: (t) => request(t, 'DELETE', `Tables('${table}')`) },
];

/** Set Service Properties naming two sections: each section is its own setting. */
const twoSectionProperties: readonly Step[] = [
  {
    name: 'Set Service Properties (Logging and Cors)',
    send: (t) => request(t, 'PUT', propertiesResource, { body: loggingAndCorsXml, headers: xmlHeaders }),
  },
];

/** What a client can observe of the account, read through the services over the bare engine. */
async function stateOf(store: TableStore, account: string): Promise<string> {
  const services = createTableServices(store);
  const tables = (await store.listTables(account, undefined, 100)).map((t) => t.name);
  const entities = (await walk(store, { account, name: table }, {})).entities.map(
    (e) => `${e.partitionKey}/${e.rowKey}: ${propertiesText(e.properties)}`,
  );
  const acl = tables.includes(table) ? await services.acls.get(account, table) : undefined;
  const properties = await services.serviceProperties.get(account);
  return show({ tables, entities, acl, properties });
}

/** The Azure error code of a response body, JSON or XML. */
function azureErrorCode(response: RawResponse): string | undefined {
  try {
    const code = response.json()['odata.error']?.code;
    if (typeof code === 'string') return code;
  } catch {
    // not JSON: maybe XML
  }
  return /^(?:<\?xml[^>]*\?>)?<Error><Code>([A-Za-z]+)<\/Code>/.exec(response.text)?.[1];
}

async function withinDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${answerDeadlineMs} ms`)), answerDeadlineMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A successful answer: 2xx, and no failed operation inside a batch response. */
function assertSucceeded(response: RawResponse, what: string): void {
  assert.ok(response.status >= 200 && response.status < 300, `${what}: ${describeResponse(response)}`);
  assert.ok(!/HTTP\/1\.1 [45]\d\d/.test(response.text), `${what}: a batch part failed: ${describeResponse(response)}`);
}

/** Accounts the server knows, one per run: runs share the engine but never see each other's data. */
const accountsMax = 400;

/** The real server in this process, over one engine wrapped in a FaultyStore. */
class FaultRig {
  private subject: StoreUnderTest | undefined;
  private faulty: FaultyStore | undefined;
  private server: http.Server | undefined;
  private port = 0;
  private runs = 0;

  constructor(private readonly factory: StoreFactory) {}

  async start(): Promise<void> {
    this.subject = await this.factory();
    this.faulty = new FaultyStore(this.subject.store);
    const accounts = Array.from({ length: accountsMax }, (_, i) => `fault${i}:${devKey}`).join(';');
    const frontDoor = new FrontDoor({
      accounts: loadAccounts(accounts),
      log: createLogger('silent'),
      requestsInFlightMax: 64,
    });
    this.server = frontDoor.server(tableService, createTableServices(this.faulty));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
    await this.subject?.close();
  }

  /** Runs the workload with no fault: the state after each step, and the calls it makes. */
  async dryRun(steps: readonly Step[]): Promise<{ states: string[]; calls: number }> {
    const { target, store, faulty } = this.nextRun(undefined, 'reject');
    const states = [await stateOf(store, target.account)];
    for (const step of steps) {
      assertSucceeded(await withinDeadline(step.send(target), step.name), `${step.name} without faults`);
      states.push(await stateOf(store, target.account));
    }
    return { states, calls: faulty.calls };
  }

  /** Runs the workload until call `failAt` fails, and checks the answer, the state and the server after it. */
  async faultRun(steps: readonly Step[], states: readonly string[], failAt: number, kind: FaultKind): Promise<void> {
    const { target, store, faulty } = this.nextRun(failAt, kind);
    for (const [i, step] of steps.entries()) {
      const what = `${step.name} with call ${failAt} failing (${kind})`;
      const response = await withinDeadline(step.send(target), what);
      const fault = faulty.fired;
      if (fault === undefined) {
        assertSucceeded(response, what);
        continue;
      }
      assert.ok(
        response.status >= 500 && response.status < 600,
        `${what} (${fault.method}): a 5xx, got ${describeResponse(response)}`,
      );
      assert.ok(
        azureErrorCode(response) !== undefined,
        `${what}: an Azure error body, got ${describeResponse(response)}`,
      );
      const state = await stateOf(store, target.account);
      assert.ok(
        state === states[i] || state === states[i + 1],
        `${what} (${fault.method}): the state is neither before nor after the request\n  before ${states[i]}\n  after  ${states[i + 1]}\n  found  ${state}`,
      );
      const health = await withinDeadline(request(target, 'GET', 'Tables'), `the request after ${what}`);
      assert.equal(health.status, 200, `the server answers after ${what}: ${describeResponse(health)}`);
      return;
    }
    assert.fail(`call ${failAt} was never made`);
  }

  /** A fresh account, and the wrapper armed to count (and fail) the calls of this run only. */
  private nextRun(
    failAt: number | undefined,
    kind: FaultKind,
  ): { target: Target; store: TableStore; faulty: FaultyStore } {
    assert.ok(this.subject !== undefined && this.faulty !== undefined, 'the rig is started');
    assert.ok(this.runs < accountsMax, 'an account for every run');
    const target = { port: this.port, account: `fault${this.runs++}` };
    this.faulty.arm(this.subject.store, failAt, kind);
    return { target, store: this.subject.store, faulty: this.faulty };
  }
}

/** Every call position of `steps`, failing each way `kinds` selects. */
async function walkFaults(rig: FaultRig, steps: readonly Step[], kinds: FaultCheckOptions['kinds']): Promise<number> {
  const { states, calls } = await rig.dryRun(steps);
  for (let failAt = 1; failAt <= calls; failAt++) {
    const chosen = kinds === 'one per call' ? [faultKinds[failAt % faultKinds.length]!] : faultKinds;
    for (const kind of chosen) await rig.faultRun(steps, states, failAt, kind);
  }
  return calls;
}

/** Registers the fault test for one engine: a server in this process over the wrapped engine. */
export function runFaultCheck(engine: string, factory: StoreFactory, options: FaultCheckOptions = {}): void {
  describe(`fault test: ${engine}`, () => {
    const rig = new FaultRig(factory);
    before(() => rig.start());
    after(() => rig.stop());

    test('every failing store call of every operation: a 5xx Azure error, the state before or after, the server still answering', async (t) => {
      const calls = await walkFaults(rig, everyOperation, options.kinds);
      t.diagnostic(
        `${calls} store calls, each failed ${options.kinds === 'one per call' ? 'one way' : `${faultKinds.length} ways`}`,
      );
    });

    test('Set Service Properties naming several sections is all or nothing', async () => {
      await walkFaults(rig, twoSectionProperties, options.kinds);
    });
  });
}
