// Every SAS permission letter × every kind of SAS (service SAS sr=b and sr=c, account SAS with each
// srt) × every route of the Blob service, through raw HTTP against one real server. Each expectation
// comes from the documented tables, not from the server's code: the "Permissions for a directory,
// container, or blob" table of https://learn.microsoft.com/rest/api/storageservices/create-service-sas
// (service SAS) and the signedPermission / signedResourceTypes fields of
// https://learn.microsoft.com/rest/api/storageservices/create-account-sas (account SAS). The rows are
// keyed by the server's route table: a route with no row here fails the test, so no later operation
// (tags, batch, page blobs, Data Lake) can slip past SAS checks unexamined.
import { describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { blobService } from '../../../src/blob/definition.js';
import {
  accountSas,
  blobRequest,
  blobSas,
  userDelegationSas,
  type DelegationKey,
  type SasRequest,
} from '../../helpers/blob-sas.js';
import { blobEndpoint, uniqueContainerName } from '../../helpers/blob.js';
import { describeResponse, type RawResponse } from '../../helpers/http.js';
import {
  accountKind,
  matrixTests,
  serviceExpectation,
  type MatrixRow,
  type MatrixServer,
  type SasKind,
} from '../../helpers/sas-matrix.js';
import { devAccount, startServer, type RunningServer } from '../../helpers/server.js';
import { batchBody, deletePart } from '../../helpers/blob-batch.js';

/** A place an operation runs on, made with the account key. */
type FixtureKind =
  | 'none'
  | 'container'
  | 'newContainer'
  | 'leasedContainer'
  | 'blob'
  | 'newBlob'
  | 'appendBlob'
  | 'pageBlob'
  | 'leasedBlob';

interface Fixture {
  /** The server's blob endpoint, `http://127.0.0.1:{port}/devstoreaccount1`. */
  readonly endpoint: string;
  readonly container: string;
  /** Every blob fixture's blob is `b`; its container also holds `src`, a copy source. */
  readonly blob: string;
  readonly leaseId: string;
}

type Row = MatrixRow<Fixture, FixtureKind>;

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
const userDelegationKeyInfo = () =>
  `<KeyInfo><Expiry>${new Date(Date.now() + 3600_000).toISOString()}</Expiry></KeyInfo>`;
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
function copyRequest(f: Fixture, extra: Record<string, string> = {}, target = blobPath(f)): SasRequest {
  const sourceSas = blobSas({ sr: 'b', resource: `${f.container}/src`, sp: 'r' });
  return on(target, 'PUT', {
    'x-ms-copy-source': `${f.endpoint}/${f.container}/src?${sourceSas}`,
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

const findWhere = encodeURIComponent(`"k"='v'`);
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

/**
 * Blob Batch (blob-batch names no permission for the batch itself; Cerulean's choice): Delete or
 * Write on objects, what its parts may do; at service scope an account SAS only, at container scope
 * a service SAS for the container too. Its one part, signed with the key, deletes the fixture's blob.
 */
function batchRow(scope: 'service' | 'container'): Row {
  return {
    route: `POST ${scope} BlobBatch`,
    fixture: 'blob',
    request: (f) => {
      const boundary = `batch_${randomUUID()}`;
      const body = batchBody(boundary, [deletePart(0, `/${devAccount}/${blobPath(f)}`)]);
      const target = scope === 'service' ? '?comp=batch' : `${f.container}?restype=container&comp=batch`;
      return on(target, 'POST', { 'Content-Type': `multipart/mixed; boundary=${boundary}` }, body);
    },
    allowedStatus: 202,
    ...(scope === 'container' && { service: 'dw' }),
    account: { srt: 'o', letters: 'dw' },
  };
}

const rows: Row[] = [
  batchRow('service'),
  batchRow('container'),
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
  {
    route: 'GET service FindBlobsByTags',
    fixture: 'none',
    request: () => on(`?comp=blobs&where=${findWhere}`, 'GET'),
    account: { srt: 's', letters: 'f' },
  },
  ...accountInformationRows,
  // Only a bearer token gets a user delegation key: Shared Key is 403 (allowedStatus), and no SAS may.
  {
    route: 'POST service GetUserDelegationKey',
    fixture: 'none',
    request: () => on('?restype=service&comp=userdelegationkey', 'POST', {}, userDelegationKeyInfo()),
    allowedStatus: 403,
    account: { srt: 's', letters: '' },
  },
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
  {
    // No container of the name was deleted: an allowed request reaches the handler's 404.
    route: 'PUT container RestoreContainer',
    fixture: 'container',
    request: (f) =>
      on(`${f.container}?restype=container&comp=undelete`, 'PUT', {
        'x-ms-deleted-container-name': f.container,
        'x-ms-deleted-container-version': '00000000000000FF',
      }),
    allowedStatus: 404,
    account: { srt: 'c', letters: 'w' },
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
  // find-blobs-by-tags: Find (f), an account SAS at service scope, either kind for a container.
  {
    route: 'GET container FindBlobsByTags',
    fixture: 'container',
    request: (f) => on(`${f.container}?restype=container&comp=blobs&where=${findWhere}`, 'GET'),
    service: 'f',
    account: { srt: 'c', letters: 'f' },
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
  ...createRows('PUT blob CopyBlob', (f) => copyRequest(f)),
  ...createRows('PUT blob PutBlockList', (f) => on(blobPath(f, '?comp=blocklist'), 'PUT', {}, emptyBlockList)),
  // Staging a block: as Create or Write (Cerulean's choice: staging is the first step of writing a new blob).
  ...createRows('PUT blob PutBlock', (f) => on(blockPath(f), 'PUT', {}, 'x')),
  objectRow('PUT blob SnapshotBlob', 'blob', (f) => on(blobPath(f, '?comp=snapshot'), 'PUT'), 'cw'),
  // From URL: Put Blob From URL creates or replaces; Put Block From URL writes (its source carries its own read SAS).
  ...createRows('PUT blob PutBlobFromURL', (f) => copyRequest(f, { 'x-ms-blob-type': 'BlockBlob' })),
  objectRow('PUT blob PutBlockFromURL', 'blob', (f) => copyRequest(f, {}, blockPath(f)), 'w'),
  // Add (a): "add a block to an append blob" (both tables).
  objectRow('PUT blob AppendBlock', 'appendBlob', (f) => on(blobPath(f, '?comp=appendblock'), 'PUT', {}, 'more'), 'aw'),
  objectRow(
    'PUT blob AppendBlockFromURL',
    'appendBlob',
    (f) => copyRequest(f, {}, blobPath(f, '?comp=appendblock')),
    'aw',
  ),
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
  // set-blob-tier and append-blob-seal: a SAS "that has permission to write" (w).
  objectRow(
    'PUT blob SetBlobTier',
    'blob',
    (f) => on(blobPath(f, '?comp=tier'), 'PUT', { 'x-ms-access-tier': 'Cool' }),
    'w',
  ),
  objectRow('PUT blob SealBlob', 'appendBlob', (f) => on(blobPath(f, '?comp=seal'), 'PUT'), 'w'),
  // Page blobs: Write "create or write content" (Put Page), Read "read the content" (Get Page Ranges).
  objectRow(
    'PUT blob PutPage',
    'pageBlob',
    (f) => on(blobPath(f, '?comp=page'), 'PUT', { 'x-ms-page-write': 'clear', 'x-ms-range': 'bytes=0-511' }),
    'w',
  ),
  objectRow(
    'PUT blob PutPageFromURL',
    'pageBlob',
    (f) =>
      copyRequest(
        f,
        { 'x-ms-page-write': 'update', 'x-ms-range': 'bytes=0-511', 'x-ms-source-range': 'bytes=0-511' },
        blobPath(f, '?comp=page'),
      ),
    'w',
  ),
  objectRow('GET blob GetPageRegions', 'pageBlob', (f) => on(blobPath(f, '?comp=pagelist'), 'GET'), 'r'),
  // Chosen (unverified): Undelete Blob as a write; the docs name no letter for it.
  objectRow('PUT blob UndeleteBlob', 'blob', (f) => on(blobPath(f, '?comp=undelete'), 'PUT'), 'w'),
  objectRow('DELETE blob DeleteBlob [otherwise]', 'blob', (f) => on(blobPath(f), 'DELETE'), 'd'),
  // Permanent Delete (y) "permits permanent deletion of a blob snapshot or version"; naming neither
  // is then 400 (the request is authorized first).
  objectRow(
    'DELETE blob DeleteBlob [asksPermanent]',
    'blob',
    (f) => on(blobPath(f, '?deletetype=permanent'), 'DELETE'),
    'y',
    400,
  ),
  // Tag (t): "Permits blob tag operations" (create-service-sas, create-account-sas).
  objectRow('GET blob GetBlobTags', 'blob', (f) => on(blobPath(f, '?comp=tags'), 'GET'), 't'),
  objectRow(
    'PUT blob SetBlobTags',
    'blob',
    (f) => on(blobPath(f, '?comp=tags'), 'PUT', { 'Content-Type': 'application/xml' }, '<Tags><TagSet/></Tags>'),
    't',
    204,
  ),
  // Write (w): "snapshot or lease the blob"; Delete (d) breaks one from 2017-07-29 (service SAS).
  ...leaseRows('blob', 'w', 'wd'),
];

/** Service SAS letters (create-service-sas, Blob service) and account SAS letters (create-account-sas). */
const serviceLetters = 'racwdxyltmeopif';
const accountLetters = 'rwdylacuptfi';

/** The server's user delegation key, asked for once it runs (startBlobServer). */
let delegationKey: DelegationKey | undefined;

/** A service SAS, or a user delegation SAS (create-user-delegation-sas: it grants what a service SAS grants). */
function serviceKind(sr: 'b' | 'c', delegated = false): SasKind<Fixture> {
  return {
    name: `${delegated ? 'user delegation' : 'service'} SAS sr=${sr}`,
    letters: serviceLetters,
    sas: (letter, f) => {
      const fields = { sr, resource: `${f.container}/${f.blob}`, sp: letter };
      return delegated ? userDelegationSas(fields, delegationKey!) : blobSas(fields);
    },
    expect(row, letter) {
      const resource = row.route.split(' ')[1];
      return serviceExpectation(row, letter, resource === 'service' || (sr === 'b' && resource === 'container'));
    },
  };
}

const blobAccountSas = (srt: string, sp: string) => accountSas({ srt, sp });
const kinds: readonly SasKind<Fixture>[] = [
  serviceKind('b'),
  serviceKind('c'),
  serviceKind('c', true),
  ...(['s', 'c', 'o'] as const).map((srt) => accountKind<Fixture>(srt, accountLetters, blobAccountSas)),
];

describe('the Blob SAS matrix: every letter × SAS kind × route, against the documented tables', () => {
  matrixTests({ service: 'Blob', routes: blobService.routes, rows, kinds, start: startBlobServer });
});

/** A user delegation key for an unsigned token (the server takes any under --oauth basic). */
async function askDelegationKey(server: RunningServer): Promise<DelegationKey> {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const claims = { aud: 'https://storage.azure.com', iss: 'https://issuer.example/', exp, oid: 'o1', tid: 't1' };
  const token = `${part({ alg: 'RS256' })}.${part(claims)}.${part({})}`;
  const expiry = new Date(Date.now() + 3600_000).toISOString();
  const response = await fetch(`${blobEndpoint(server)}/?restype=service&comp=userdelegationkey`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'x-ms-version': '2021-08-06' },
    body: `<KeyInfo><Expiry>${expiry}</Expiry></KeyInfo>`,
  });
  const text = await response.text();
  assert.equal(response.status, 200, text);
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)![1]!;
  return {
    oid: field('SignedOid'),
    tid: field('SignedTid'),
    start: field('SignedStart'),
    expiry: field('SignedExpiry'),
    service: field('SignedService'),
    version: field('SignedVersion'),
    value: field('Value'),
  };
}

async function startBlobServer(): Promise<MatrixServer<Fixture, FixtureKind>> {
  const server = await startServer({ args: ['--oauth', 'basic'] });
  delegationKey = await askDelegationKey(server);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const send = (request: SasRequest, sas: string | undefined) => blobRequest(server, { ...request, agent }, sas);
  const ok = async (response: Promise<RawResponse>, what: string): Promise<void> => {
    const res = await response;
    assert.ok(res.status >= 200 && res.status < 300, `${what}: ${describeResponse(res)}`);
  };
  const key = (request: SasRequest) => ok(send(request, undefined), `${request.method} ${request.target}`);
  /** A fresh fixture of this kind, in a container of its own. */
  const make = async (kind: FixtureKind): Promise<Fixture> => {
    const fixture = { endpoint: blobEndpoint(server), container: uniqueContainerName('m'), blob: 'b', leaseId };
    if (kind === 'none' || kind === 'newContainer') return fixture;
    const { container } = fixture;
    await key(on(`${container}?restype=container`, 'PUT'));
    const acquire = { 'x-ms-lease-action': 'acquire', 'x-ms-lease-duration': '-1', 'x-ms-proposed-lease-id': leaseId };
    if (kind === 'leasedContainer') await key(on(`${container}?restype=container&comp=lease`, 'PUT', acquire));
    if (kind === 'container' || kind === 'leasedContainer') return fixture;
    // 512 bytes: a page's worth, for Put Page From URL.
    await key(on(`${container}/src`, 'PUT', { 'x-ms-blob-type': 'BlockBlob' }, 'source'.padEnd(512, '.')));
    if (kind === 'newBlob') return fixture;
    const type = kind === 'appendBlob' ? 'AppendBlob' : kind === 'pageBlob' ? 'PageBlob' : 'BlockBlob';
    const size: Record<string, string> = type === 'PageBlob' ? { 'x-ms-blob-content-length': '1024' } : {};
    const body = type === 'BlockBlob' ? 'content' : undefined;
    await key(on(`${container}/b`, 'PUT', { 'x-ms-blob-type': type, ...size }, body));
    if (kind === 'leasedBlob') await key(on(`${container}/b?comp=lease`, 'PUT', acquire));
    return fixture;
  };
  const stop = async () => {
    agent.destroy();
    await server.stop();
  };
  return { make, send, stop };
}
