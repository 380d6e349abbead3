// Every SAS permission letter × every kind of SAS (service SAS sr=b and sr=c, account SAS with each
// srt) × every route of the Blob service, through raw HTTP against one real server. Each expectation
// comes from the documented tables, not from the server's code: the "Permissions for a directory,
// container, or blob" table of https://learn.microsoft.com/rest/api/storageservices/create-service-sas
// (service SAS) and the signedPermission / signedResourceTypes fields of
// https://learn.microsoft.com/rest/api/storageservices/create-account-sas (account SAS). The rows are
// keyed by the server's route table: a route with no row here fails the test, so no later operation
// (tags, batch, page blobs, Data Lake) can slip past SAS checks unexamined.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { blobService } from '../../src/blob/definition.js';
import { accountSas, blobRequest, blobSas, blobUrl, type SasRequest } from '../helpers/blob-sas.js';
import { uniqueContainerName } from '../helpers/blob.js';
import { describeResponse, type RawResponse } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';

/** A place an operation runs on, made with the account key. */
type FixtureKind =
  'none' | 'container' | 'newContainer' | 'leasedContainer' | 'blob' | 'newBlob' | 'appendBlob' | 'leasedBlob';

interface Fixture {
  readonly container: string;
  /** Every blob fixture's blob is `b`; its container also holds `src`, a copy source. */
  readonly blob: string;
  readonly leaseId: string;
}

interface Row {
  /** `${method} ${resource} ${operation}` of the route it exercises. */
  readonly route: string;
  /** Several rows may exercise one route (a Put Blob of a new blob, and over an existing one). */
  readonly label?: string;
  readonly fixture: FixtureKind;
  request(fixture: Fixture, server: RunningServer): SasRequest;
  /** The status an allowed request answers (default: any 2xx). */
  readonly allowedStatus?: number;
  /** Letters of which any one lets a service SAS do it; undefined: no service SAS may (create-service-sas). */
  readonly service?: string;
  /** The resource type and the letters of which any one lets an account SAS do it (create-account-sas). */
  readonly account: { readonly srt: 's' | 'c' | 'o'; readonly letters: string };
}

const leaseId = '11111111-1111-1111-1111-111111111111';
const otherLeaseId = '22222222-2222-2222-2222-222222222222';
const blockId = Buffer.from('block-1').toString('base64');

const on = (target: string, method: string, headers?: Record<string, string>, body?: string): SasRequest => ({
  method,
  target,
  ...(headers && { headers }),
  ...(body !== undefined && { body }),
});

/** The lease routes of a container or blob: each action, and the line without one (the handler's 400). */
function leaseRows(
  resource: 'container' | 'blob',
  service: string | undefined,
  breakService: string | undefined,
): Row[] {
  const target = (f: Fixture) =>
    resource === 'container' ? `${f.container}?restype=container&comp=lease` : `${f.container}/${f.blob}?comp=lease`;
  const name = resource === 'container' ? 'Container' : 'Blob';
  const srt = resource === 'container' ? 'c' : 'o';
  const leased: FixtureKind = resource === 'container' ? 'leasedContainer' : 'leasedBlob';
  const free: FixtureKind = resource === 'container' ? 'container' : 'blob';
  const actions: [string, FixtureKind, Record<string, string>, string | undefined][] = [
    ['Acquire', free, { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1' }, service],
    ['Renew', leased, { 'x-ms-lease-action': 'renew', 'x-ms-lease-id': leaseId }, service],
    [
      'Change',
      leased,
      { 'x-ms-lease-action': 'change', 'x-ms-lease-id': leaseId, 'x-ms-proposed-lease-id': otherLeaseId },
      service,
    ],
    ['Release', leased, { 'x-ms-lease-action': 'release', 'x-ms-lease-id': leaseId }, service],
    // create-service-sas: "For version 2017-07-29 and later, the Delete permission also allows breaking a lease on a
    // blob."
    ['Break', leased, { 'x-ms-lease-action': 'break' }, breakService],
  ];
  const rows: Row[] = actions.map(([action, fixture, headers, letters]) => ({
    route: `PUT ${resource} ${action}${name}Lease`,
    fixture,
    request: (f) => on(target(f), 'PUT', headers),
    ...(letters !== undefined && { service: letters }),
    account: { srt, letters: 'w' },
  }));
  rows.push({
    route: `PUT ${resource} ${name}Lease`,
    fixture: free,
    request: (f) => on(target(f), 'PUT'),
    allowedStatus: 400,
    ...(service !== undefined && { service }),
    account: { srt, letters: 'w' },
  });
  return rows;
}

const serviceProperties =
  '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors /></StorageServiceProperties>';
const emptyBlockList = '<?xml version="1.0" encoding="utf-8"?><BlockList></BlockList>';

/**
 * The read-only operation on each resource kind: Get Account Information (unverified in the tables: Cerulean's choice,
 * Read on the service).
 */
const accountInformationRows: Row[] = (['service', 'container', 'blob'] as const).flatMap((resource) =>
  (['GET', 'HEAD'] as const).map((method) => ({
    route: `${method} ${resource} GetAccountInformation`,
    fixture:
      resource === 'service'
        ? ('none' as const)
        : resource === 'container'
          ? ('container' as const)
          : ('blob' as const),
    request: (f: Fixture) =>
      on(
        `${resource === 'service' ? '' : resource === 'container' ? f.container : `${f.container}/${f.blob}`}?restype=account&comp=properties`,
        method,
      ),
    service: 'r',
    account: { srt: 's' as const, letters: 'r' },
  })),
);

/** A copy whose source carries its own read SAS, so that only the destination's permission decides. */
function copyRequest(
  f: Fixture,
  server: RunningServer,
  extra: Record<string, string> = {},
  target = blobPath(f),
): SasRequest {
  const sourceSas = blobSas({ sr: 'b', resource: `${f.container}/src`, sp: 'r' });
  return on(target, 'PUT', {
    'x-ms-copy-source': blobUrl(server, f.container, 'src', sourceSas),
    ...extra,
  });
}

/** Writes that create or replace a blob: Create grants the first only (create-account-sas: "may not overwrite"). */
function createRows(route: string, request: Row['request'], allowedStatus?: number): Row[] {
  const status = allowedStatus === undefined ? {} : { allowedStatus };
  return [
    {
      route,
      label: 'a new blob',
      fixture: 'newBlob',
      request,
      service: 'cw',
      account: { srt: 'o', letters: 'cw' },
      ...status,
    },
    {
      route,
      label: 'an existing blob',
      fixture: 'blob',
      request,
      service: 'w',
      account: { srt: 'o', letters: 'w' },
      ...status,
    },
  ];
}

const blobPath = (f: Fixture, query = '') => `${f.container}/${f.blob}${query}`;
const blockPath = (f: Fixture) => blobPath(f, `?comp=block&blockid=${encodeURIComponent(blockId)}`);

/**
 * A blob operation whose service SAS letters and account SAS letters (srt=o) are the same, as the two tables give them.
 */
function objectRow(
  route: string,
  fixture: FixtureKind,
  request: Row['request'],
  letters: string,
  allowedStatus?: number,
): Row {
  return {
    route,
    fixture,
    request,
    service: letters,
    account: { srt: 'o', letters },
    ...(allowedStatus && { allowedStatus }),
  };
}

const rows: Row[] = [
  // Service level: account SAS only (create-account-sas: "service-level operations ... not available with a service
  // SAS").
  {
    route: 'GET service ListContainers',
    fixture: 'none',
    request: () => on('?comp=list', 'GET'),
    account: { srt: 's', letters: 'l' },
  },
  {
    route: 'GET service GetBlobServiceProperties',
    fixture: 'none',
    request: () => on('?restype=service&comp=properties', 'GET'),
    account: { srt: 's', letters: 'r' },
  },
  {
    route: 'PUT service SetBlobServiceProperties',
    fixture: 'none',
    request: () =>
      on('?restype=service&comp=properties', 'PUT', { 'Content-Type': 'application/xml' }, serviceProperties),
    account: { srt: 's', letters: 'w' },
  },
  {
    route: 'GET service GetBlobServiceStats',
    fixture: 'none',
    request: () => on('?restype=service&comp=stats', 'GET'),
    account: { srt: 's', letters: 'r' },
  },
  ...accountInformationRows,
  // Container level: account SAS with srt=c; a service SAS manages no container (create-service-sas).
  {
    route: 'PUT container CreateContainer',
    fixture: 'newContainer',
    request: (f) => on(`${f.container}?restype=container`, 'PUT'),
    account: { srt: 'c', letters: 'cw' },
  },
  {
    route: 'DELETE container DeleteContainer',
    fixture: 'container',
    request: (f) => on(`${f.container}?restype=container`, 'DELETE'),
    account: { srt: 'c', letters: 'd' },
  },
  ...(['GET', 'HEAD'] as const).flatMap((method): Row[] => [
    {
      route: `${method} container GetContainerProperties`,
      fixture: 'container',
      request: (f) => on(`${f.container}?restype=container`, method),
      account: { srt: 'c', letters: 'r' },
    },
    {
      route: `${method} container GetContainerMetadata`,
      fixture: 'container',
      request: (f) => on(`${f.container}?restype=container&comp=metadata`, method),
      account: { srt: 'c', letters: 'r' },
    },
    // No SAS reads or sets a container's ACL (Cerulean's choice: the tables list no letter for it).
    {
      route: `${method} container GetContainerACL`,
      fixture: 'container',
      request: (f) => on(`${f.container}?restype=container&comp=acl`, method),
      account: { srt: 'c', letters: '' },
    },
  ]),
  {
    route: 'PUT container SetContainerMetadata',
    fixture: 'container',
    request: (f) => on(`${f.container}?restype=container&comp=metadata`, 'PUT', { 'x-ms-meta-a': '1' }),
    account: { srt: 'c', letters: 'w' },
  },
  {
    route: 'PUT container SetContainerACL',
    fixture: 'container',
    request: (f) => on(`${f.container}?restype=container&comp=acl`, 'PUT'),
    account: { srt: 'c', letters: '' },
  },
  // create-service-sas: List (l) for a container; create-account-sas: List for Container resources.
  {
    route: 'GET container ListBlobs',
    fixture: 'container',
    request: (f) => on(`${f.container}?restype=container&comp=list`, 'GET'),
    service: 'l',
    account: { srt: 'c', letters: 'l' },
  },
  // A container SAS cannot lease a container (create-service-sas); an account SAS with srt=c and w can.
  ...leaseRows('container', undefined, undefined),
  // Blob level (srt=o). Reads: Read (r).
  objectRow('GET blob GetBlob', 'blob', (f) => on(blobPath(f), 'GET'), 'r'),
  objectRow('HEAD blob GetBlobProperties', 'blob', (f) => on(blobPath(f), 'HEAD'), 'r'),
  objectRow('GET blob GetBlobMetadata', 'blob', (f) => on(blobPath(f, '?comp=metadata'), 'GET'), 'r'),
  objectRow('HEAD blob GetBlobMetadata', 'blob', (f) => on(blobPath(f, '?comp=metadata'), 'HEAD'), 'r'),
  objectRow('GET blob GetBlockList', 'blob', (f) => on(blobPath(f, '?comp=blocklist'), 'GET'), 'r'),
  // Create (c): "write a new blob, snapshot a blob, or copy a blob to a new blob"; Write (w) any.
  ...createRows('PUT blob PutBlob', (f) => on(blobPath(f), 'PUT', { 'x-ms-blob-type': 'BlockBlob' }, 'new content')),
  ...createRows('PUT blob CopyBlob', (f, server) => copyRequest(f, server)),
  ...createRows('PUT blob PutBlockList', (f) => on(blobPath(f, '?comp=blocklist'), 'PUT', {}, emptyBlockList)),
  // Staging a block: as Create or Write (Cerulean's choice: staging is the first step of writing a new blob).
  ...createRows('PUT blob PutBlock', (f) => on(blockPath(f), 'PUT', {}, 'x')),
  objectRow('PUT blob SnapshotBlob', 'blob', (f) => on(blobPath(f, '?comp=snapshot'), 'PUT'), 'cw'),
  // Not served (501 once authorized), checked as what they are: Put Blob From URL creates, Put Block From URL writes.
  objectRow(
    'PUT blob PutBlobFromURL',
    'newBlob',
    (f, s) => copyRequest(f, s, { 'x-ms-blob-type': 'BlockBlob' }),
    'cw',
    501,
  ),
  objectRow(
    'PUT blob PutBlockFromURL',
    'blob',
    (f, s) => copyRequest(f, s, {}, blockPath(f)),
    'w',
    501,
  ),
  // Add (a): "add a block to an append blob" (both tables).
  objectRow('PUT blob AppendBlock', 'appendBlob', (f) => on(blobPath(f, '?comp=appendblock'), 'PUT', {}, 'more'), 'aw'),
  objectRow(
    'PUT blob SetBlobProperties',
    'blob',
    (f) => on(blobPath(f, '?comp=properties'), 'PUT', { 'x-ms-blob-content-type': 'text/plain' }),
    'w',
  ),
  objectRow(
    'PUT blob SetBlobMetadata',
    'blob',
    (f) => on(blobPath(f, '?comp=metadata'), 'PUT', { 'x-ms-meta-a': '1' }),
    'w',
  ),
  objectRow(
    'PUT blob AbortCopyBlob',
    'blob',
    (f) => on(blobPath(f, `?comp=copy&copyid=${randomUUID()}`), 'PUT', { 'x-ms-copy-action': 'abort' }),
    'w',
    409,
  ),
  objectRow('DELETE blob DeleteBlob', 'blob', (f) => on(blobPath(f), 'DELETE'), 'd'),
  // Write (w): "snapshot or lease the blob"; Delete (d) breaks one from 2017-07-29 (service SAS).
  ...leaseRows('blob', 'w', 'wd'),
];

interface SasKind {
  readonly name: string;
  readonly letters: string;
  sas(letter: string, fixture: Fixture): string;
  expect(row: Row, letter: string): number | string;
}

/** Service SAS letters (create-service-sas, Blob service) and account SAS letters (create-account-sas). */
const serviceLetters = 'racwdxyltmeopif';
const accountLetters = 'rwdylacuptfi';

const resourceOf = (row: Row) => row.route.split(' ')[1]!;

function serviceKind(sr: 'b' | 'c'): SasKind {
  return {
    name: `service SAS sr=${sr}`,
    letters: serviceLetters,
    sas: (letter, f) => blobSas({ sr, resource: `${f.container}/${f.blob}`, sp: letter }),
    expect(row, letter) {
      // A service SAS signs its resource: on the service, or a blob SAS on its container, the signature
      // names another resource than the request's, and fails (403 AuthenticationFailed).
      const resource = resourceOf(row);
      if (resource === 'service' || (sr === 'b' && resource === 'container')) return 'AuthenticationFailed';
      if (row.service !== undefined && row.service.includes(letter)) return row.allowedStatus ?? 200;
      return 'AuthorizationPermissionMismatch';
    },
  };
}

function accountKind(srt: 's' | 'c' | 'o'): SasKind {
  return {
    name: `account SAS srt=${srt}`,
    letters: accountLetters,
    sas: (letter) => accountSas({ srt, sp: letter }),
    expect(row, letter) {
      if (row.account.srt !== srt) return 'AuthorizationResourceTypeMismatch';
      if (row.account.letters.includes(letter)) return row.allowedStatus ?? 200;
      return 'AuthorizationPermissionMismatch';
    },
  };
}

const kinds: readonly SasKind[] = [
  serviceKind('b'),
  serviceKind('c'),
  accountKind('s'),
  accountKind('c'),
  accountKind('o'),
];

const routeKey = (route: { method: string; resource: string; operation: string }) =>
  `${route.method} ${route.resource} ${route.operation}`;

describe('the Blob SAS matrix: every letter × SAS kind × route, against the documented tables', () => {
  let server: RunningServer;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const shared = new Map<FixtureKind, Fixture>();

  const key = (request: SasRequest) => blobRequest(server, { ...request, agent }, undefined);

  async function ok(response: Promise<RawResponse>, what: string): Promise<void> {
    const res = await response;
    assert.ok(res.status >= 200 && res.status < 300, `${what}: ${describeResponse(res)}`);
  }

  /** A fresh fixture of this kind, in a container of its own. */
  async function makeFixture(kind: FixtureKind): Promise<Fixture> {
    const fixture = { container: uniqueContainerName('m'), blob: 'b', leaseId };
    if (kind === 'none' || kind === 'newContainer') return fixture;
    const { container } = fixture;
    await ok(key(on(`${container}?restype=container`, 'PUT')), 'create container');
    if (kind === 'leasedContainer') {
      const headers = {
        'x-ms-lease-action': 'acquire',
        'x-ms-lease-duration': '-1',
        'x-ms-proposed-lease-id': leaseId,
      };
      await ok(key(on(`${container}?restype=container&comp=lease`, 'PUT', headers)), 'lease container');
    }
    if (kind === 'container' || kind === 'leasedContainer') return fixture;
    await ok(key(on(`${container}/src`, 'PUT', { 'x-ms-blob-type': 'BlockBlob' }, 'source')), 'put source');
    if (kind === 'newBlob') return fixture;
    const type = kind === 'appendBlob' ? 'AppendBlob' : 'BlockBlob';
    await ok(
      key(on(`${container}/b`, 'PUT', { 'x-ms-blob-type': type }, type === 'BlockBlob' ? 'content' : undefined)),
      'put blob',
    );
    if (kind === 'leasedBlob') {
      const headers = {
        'x-ms-lease-action': 'acquire',
        'x-ms-lease-duration': '-1',
        'x-ms-proposed-lease-id': leaseId,
      };
      await ok(key(on(`${container}/b?comp=lease`, 'PUT', headers)), 'lease blob');
    }
    return fixture;
  }

  before(async () => {
    server = await startServer();
    const kindsUsed = new Set(rows.map((row) => row.fixture));
    for (const kind of kindsUsed) shared.set(kind, await makeFixture(kind));
  });

  after(async () => {
    agent.destroy();
    await server?.stop();
  });

  test('every route of the Blob service has a row (a new route must be added here with its expectations)', () => {
    const routes = blobService.routes.map(routeKey);
    assert.equal(new Set(routes).size, routes.length, 'two routes share method, resource and operation');
    const covered = new Set(rows.map((row) => row.route));
    const missing = routes.filter((route) => !covered.has(route));
    assert.deepEqual(missing, [], `routes without a row in the SAS matrix: ${missing.join(', ')}`);
    const stale = [...covered].filter((route) => !routes.includes(route));
    assert.deepEqual(stale, [], `rows for routes that no longer exist: ${stale.join(', ')}`);
  });

  test('every row succeeds with the account key (the requests are right)', async () => {
    await pool(rows, async (row) => {
      const fixture = await makeFixture(row.fixture);
      const res = await key(row.request(fixture, server));
      assertAllowed(res, row.allowedStatus, `${describeRow(row)} with Shared Key`);
    });
  });

  for (const kind of kinds) {
    test(`${kind.name}: each of ${kind.letters.length} letters on ${rows.length} rows`, async () => {
      const attempts = rows.flatMap((row) => [...kind.letters].map((letter) => ({ row, letter })));
      const failures: string[] = [];
      await pool(attempts, async ({ row, letter }) => {
        const expected = kind.expect(row, letter);
        // An allowed attempt changes its fixture: it gets its own. A refused one must change nothing.
        const fixture = typeof expected === 'number' ? await makeFixture(row.fixture) : shared.get(row.fixture)!;
        const res = await blobRequest(server, { ...row.request(fixture, server), agent }, kind.sas(letter, fixture));
        const what = `${describeRow(row)} with ${kind.name} sp=${letter}`;
        try {
          if (typeof expected === 'number') assertAllowed(res, expected === 200 ? undefined : expected, what);
          else assertRefusedWith(res, expected, what);
        } catch (error) {
          failures.push((error as Error).message.split('\n')[0]!);
        }
      });
      assert.deepEqual(failures, []);
    });
  }
});

function describeRow(row: Row): string {
  return row.label === undefined ? row.route : `${row.route} (${row.label})`;
}

function assertAllowed(res: RawResponse, status: number | undefined, what: string): void {
  const good = status === undefined ? res.status >= 200 && res.status < 300 : res.status === status;
  assert.ok(good, `${what}: expected ${status ?? '2xx'}, got ${res.status} ${res.headers['x-ms-error-code'] ?? ''}`);
}

function assertRefusedWith(res: RawResponse, code: string, what: string): void {
  const got = res.headers['x-ms-error-code'];
  assert.ok(res.status === 403 && got === code, `${what}: expected 403 ${code}, got ${res.status} ${got ?? ''}`);
}

/** Runs `work` over `items`, 16 at a time. */
async function pool<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}
