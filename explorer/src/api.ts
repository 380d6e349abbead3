// The explorer's client of the public REST API: every request is signed in the browser with
// Shared Key Lite (HMAC-SHA256 through Web Crypto) under the key the user gave, exactly as an SDK
// would sign it. No privileged endpoint exists: the server authorizes these requests like any other.
import { entityFromWire, parseWireJson, type Entity, type WireEntity } from './edm.js';
import { tableOrigin } from './endpoints.js';

const apiVersion = '2019-02-02';
const jsonAccept = 'application/json;odata=minimalmetadata';
/** Browsers keep User-Agent to themselves; the server's insights know the explorer by this header. */
const explorerAgent = 'cerulean-explorer/1';

export interface Credentials {
  readonly account: string;
  /** The account key as the user typed it (base64). */
  readonly key: string;
}

/** A failed request, with the service's error code and message (Azure REST: status-and-error-codes2). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

export interface QueryPlan {
  /** `point`, `range`, `partition-scan`, `multi-range` or `table-scan`. */
  readonly kind: string;
  readonly scanned: number | undefined;
  readonly returned: number | undefined;
}

export interface Continuation {
  readonly nextPartitionKey: string;
  readonly nextRowKey: string | undefined;
}

export interface EntityPage {
  readonly entities: Entity[];
  readonly continuation: Continuation | undefined;
  readonly plan: QueryPlan | undefined;
  readonly elapsedMs: number;
}

export interface Query {
  readonly filter: string;
  readonly select: string;
  /** Entities per page, 1 to 1000; empty = the service's default (1000). */
  readonly top: string;
}

export interface AccessPolicy {
  id: string;
  start: string;
  expiry: string;
  permission: string;
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function hmacKey(base64Key: string): Promise<CryptoKey> {
  let key = keyCache.get(base64Key);
  if (key === undefined) {
    if (globalThis.crypto?.subtle === undefined) {
      throw new Error('This page is not a secure context (use http://127.0.0.1 or https), so it cannot sign requests.');
    }
    key = crypto.subtle.importKey('raw', base64ToBytes(base64Key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keyCache.set(base64Key, key);
  }
  return key;
}

/** Base64 HMAC-SHA256 of the UTF-8 string under the base64 key. */
export async function hmacBase64(base64Key: string, text: string): Promise<string> {
  const signature = await crypto.subtle.sign('HMAC', await hmacKey(base64Key), new TextEncoder().encode(text));
  return bytesToBase64(new Uint8Array(signature));
}

export function base64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  if (!isBase64(text)) throw new Error('not base64');
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

interface Call {
  readonly method: string;
  /** Path after the account, already percent-encoded, e.g. `/Tables` or `/People()`. */
  readonly path: string;
  readonly query?: Record<string, string | undefined>;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** Signs and sends one request; throws ApiError for any status of 400 or more. */
export async function call(credentials: Credentials, request: Call): Promise<Response> {
  const url = new URL(`${accountPrefix(credentials.account)}${request.path}`, tableOrigin());
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, value);
  }
  const date = new Date().toUTCString();
  const comp = url.searchParams.get('comp');
  // Azure REST: authorize-with-shared-key: date, then /account + the path as sent (+ ?comp=…).
  const resource = `/${credentials.account}${url.pathname}${comp === null ? '' : `?comp=${comp}`}`;
  const signature = await hmacBase64(credentials.key, `${date}\n${resource}`);
  const response = await fetch(url, {
    method: request.method,
    headers: {
      'x-ms-date': date,
      'x-ms-version': apiVersion,
      DataServiceVersion: '3.0',
      MaxDataServiceVersion: '3.0;NetFx',
      Accept: jsonAccept,
      Authorization: `SharedKeyLite ${credentials.account}:${signature}`,
      'x-ms-useragent': explorerAgent,
      ...request.headers,
    },
    body: request.body,
    cache: 'no-store',
  });
  if (response.status >= 400) throw await apiError(response);
  return response;
}

/**
 * Path-style `/account` normally; nothing when the page itself was loaded host-style
 * (`account.table.localhost`), where the server takes the account from the host name.
 */
function accountPrefix(account: string): string {
  const { hostname } = location;
  const hostStyle = hostname.startsWith(`${account}.`) && !/^[\d.]+$/.test(hostname);
  return hostStyle ? '' : `/${account}`;
}

export async function apiError(response: Response): Promise<ApiError> {
  const text = await response.text();
  const code = response.headers.get('x-ms-error-code') ?? 'Error';
  let message = text;
  try {
    // The Table API's OData error, or the Data Lake API's {"error":{"code","message"}}.
    const parsed = JSON.parse(text) as {
      'odata.error'?: { message?: { value?: string } };
      error?: { message?: string };
    };
    message = parsed['odata.error']?.message?.value ?? parsed.error?.message ?? text;
  } catch {
    const xml = new DOMParser().parseFromString(text, 'application/xml');
    message = xml.querySelector('Message')?.textContent ?? text;
  }
  return new ApiError(response.status, code, message.split('\n')[0] ?? '');
}

/** `'` doubled and percent-encoded: a quoted key or table name inside a URL path segment. */
export function quoted(text: string): string {
  return `'${encodeURIComponent(text.replace(/'/g, "''"))}'`;
}

function entityPath(table: string, partitionKey: string, rowKey: string): string {
  return `/${encodeURIComponent(table)}(PartitionKey=${quoted(partitionKey)},RowKey=${quoted(rowKey)})`;
}

export async function listTables(credentials: Credentials, prefix: string): Promise<string[]> {
  const names: string[] = [];
  let next: string | undefined;
  const filter =
    prefix === '' ? undefined : `TableName ge '${prefix.replace(/'/g, "''")}' and TableName lt '${prefixEnd(prefix)}'`;
  do {
    const response = await call(credentials, {
      method: 'GET',
      path: '/Tables',
      query: { $filter: filter, NextTableName: next },
    });
    const body = (await response.json()) as { value: { TableName: string }[] };
    names.push(...body.value.map((table) => table.TableName));
    next = response.headers.get('x-ms-continuation-NextTableName') ?? undefined;
  } while (next !== undefined);
  return names;
}

/** The least string greater than every string starting with `prefix`, quoted for $filter. */
function prefixEnd(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  return (prefix.slice(0, -1) + String.fromCharCode(last + 1)).replace(/'/g, "''");
}

export async function createTable(credentials: Credentials, table: string): Promise<void> {
  await call(credentials, {
    method: 'POST',
    path: '/Tables',
    headers: { 'Content-Type': 'application/json', Prefer: 'return-no-content' },
    body: JSON.stringify({ TableName: table }),
  });
}

export async function deleteTable(credentials: Credentials, table: string): Promise<void> {
  await call(credentials, { method: 'DELETE', path: `/Tables(${quoted(table)})` });
}

export async function queryEntities(
  credentials: Credentials,
  table: string,
  query: Query,
  continuation: Continuation | undefined,
): Promise<EntityPage> {
  const started = performance.now();
  const response = await call(credentials, {
    method: 'GET',
    path: `/${encodeURIComponent(table)}()`,
    query: {
      $filter: query.filter.trim(),
      // The keys always come along, so that every row can be opened, edited and exported.
      $select: query.select.trim() === '' ? '' : `PartitionKey,RowKey,${query.select.trim()}`,
      $top: query.top.trim(),
      NextPartitionKey: continuation?.nextPartitionKey,
      NextRowKey: continuation?.nextRowKey,
    },
  });
  const body = parseWireJson(await response.text()) as { value: WireEntity[] };
  const elapsedMs = performance.now() - started;
  const nextPartitionKey = response.headers.get('x-ms-continuation-NextPartitionKey');
  return {
    entities: body.value.map(entityFromWire),
    continuation:
      nextPartitionKey === null
        ? undefined
        : { nextPartitionKey, nextRowKey: response.headers.get('x-ms-continuation-NextRowKey') ?? undefined },
    plan: parsePlan(response.headers.get('x-cerulean-query-plan')),
    elapsedMs,
  };
}

/** How many entities `table` holds: every page of its keys, read on demand (a full scan). */
export async function countEntities(credentials: Credentials, table: string): Promise<number> {
  let count = 0;
  let continuation: Continuation | undefined;
  do {
    const page = await queryEntities(credentials, table, { filter: '', select: 'RowKey', top: '1000' }, continuation);
    count += page.entities.length;
    continuation = page.continuation;
  } while (continuation !== undefined);
  return count;
}

export interface InsightFinding {
  readonly kind: string;
  readonly account: string;
  readonly table: string;
  readonly summary: string;
  readonly pattern: string;
}

/**
 * The server's design insights for `table` (GET /_insights, signed like the API over
 * `/{account}/_insights`); none when the server keeps no insights or is not Cerulean.
 */
export async function tableInsights(credentials: Credentials, table: string): Promise<InsightFinding[]> {
  const date = new Date().toUTCString();
  const signature = await hmacBase64(credentials.key, `${date}\n/${credentials.account}/_insights`);
  const response = await fetch(new URL('/_insights', tableOrigin()), {
    headers: {
      'x-ms-date': date,
      'x-ms-version': apiVersion,
      Authorization: `SharedKeyLite ${credentials.account}:${signature}`,
    },
    cache: 'no-store',
  });
  if (!response.ok) return [];
  const report = (await response.json()) as { findings?: InsightFinding[] };
  return (report.findings ?? []).filter(
    (finding) => finding.account === credentials.account && finding.table === table,
  );
}

/** `partition-scan; scanned=1000; returned=12` (README "Queries and their cost"). */
export function parsePlan(header: string | null): QueryPlan | undefined {
  if (header === null) return undefined;
  const [kind = '', ...fields] = header.split(';').map((part) => part.trim());
  const number = (name: string): number | undefined => {
    const field = fields.find((part) => part.startsWith(`${name}=`));
    return field === undefined ? undefined : Number(field.slice(name.length + 1));
  };
  return { kind, scanned: number('scanned'), returned: number('returned') };
}

export async function getEntity(
  credentials: Credentials,
  table: string,
  partitionKey: string,
  rowKey: string,
): Promise<Entity> {
  const response = await call(credentials, { method: 'GET', path: entityPath(table, partitionKey, rowKey) });
  const entity = entityFromWire(parseWireJson(await response.text()) as WireEntity);
  return { ...entity, etag: response.headers.get('ETag') ?? entity.etag };
}

export type WriteMode = 'insert' | 'replace' | 'merge' | 'upsert';

/**
 * insert: POST, fails with 409 if the entity exists. replace/merge: PUT/MERGE with If-Match, so a
 * change made meanwhile answers 412 instead of being overwritten. upsert: PUT without If-Match.
 */
export async function writeEntity(
  credentials: Credentials,
  table: string,
  body: WireEntity,
  mode: WriteMode,
  etag?: string,
): Promise<void> {
  const json = JSON.stringify(body);
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Prefer: 'return-no-content' };
  if (mode === 'insert') {
    await call(credentials, { method: 'POST', path: `/${encodeURIComponent(table)}`, headers, body: json });
    return;
  }
  if (mode !== 'upsert') headers['If-Match'] = etag ?? '*';
  const path = entityPath(table, String(body['PartitionKey']), String(body['RowKey']));
  await call(credentials, { method: mode === 'merge' ? 'MERGE' : 'PUT', path, headers, body: json });
}

/**
 * Insert Or Replace of up to 100 entities of one partition as one entity group transaction
 * (Azure REST: performing-entity-group-transactions): all are written or none; a failure throws the first failing
 * part's error.
 */
export async function upsertBatch(
  credentials: Credentials,
  table: string,
  entities: readonly WireEntity[],
): Promise<void> {
  const batch = `batch_${crypto.randomUUID()}`;
  const changeset = `changeset_${crypto.randomUUID()}`;
  const base = `${tableOrigin()}${accountPrefix(credentials.account)}`;
  const parts = entities.map((entity, index) =>
    [
      `--${changeset}`,
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      `Content-ID: ${index}`,
      '',
      `PUT ${base}${entityPath(table, String(entity['PartitionKey']), String(entity['RowKey']))} HTTP/1.1`,
      'Content-Type: application/json',
      `Accept: ${jsonAccept}`,
      'DataServiceVersion: 3.0',
      '',
      JSON.stringify(entity),
    ].join('\r\n'),
  );
  const body = [
    `--${batch}`,
    `Content-Type: multipart/mixed; boundary=${changeset}`,
    '',
    ...parts,
    `--${changeset}--`,
    `--${batch}--`,
    '',
  ].join('\r\n');
  const response = await call(credentials, {
    method: 'POST',
    path: '/$batch',
    headers: { 'Content-Type': `multipart/mixed; boundary=${batch}` },
    body,
  });
  const text = await response.text();
  // A failed changeset answers with one part: the failing operation's status and error.
  const status = /HTTP\/1\.1 (\d{3})/.exec(text);
  if (status !== null && Number(status[1]) >= 300) {
    const code = /"code"\s*:\s*"([^"]*)"/.exec(text)?.[1] ?? 'Error';
    const message = /"value"\s*:\s*"([^"\\]*)/.exec(text)?.[1] ?? '';
    throw new ApiError(Number(status[1]), code, message);
  }
}

export async function deleteEntity(
  credentials: Credentials,
  table: string,
  partitionKey: string,
  rowKey: string,
  etag: string,
): Promise<void> {
  await call(credentials, {
    method: 'DELETE',
    path: entityPath(table, partitionKey, rowKey),
    headers: { 'If-Match': etag },
  });
}

export async function getTableAcl(credentials: Credentials, table: string): Promise<AccessPolicy[]> {
  const response = await call(credentials, {
    method: 'GET',
    path: `/${encodeURIComponent(table)}`,
    query: { comp: 'acl' },
  });
  return parseSignedIdentifiers(await response.text());
}

/** The stored access policies of a Get Table/Container/Queue ACL body. */
export function parseSignedIdentifiers(text: string): AccessPolicy[] {
  const xml = new DOMParser().parseFromString(text, 'application/xml');
  return [...xml.getElementsByTagName('SignedIdentifier')].map((identifier) => ({
    id: childText(identifier, 'Id'),
    start: childText(identifier, 'Start'),
    expiry: childText(identifier, 'Expiry'),
    permission: childText(identifier, 'Permission'),
  }));
}

/** The body of a Set Table/Container/Queue ACL: the policies, empty fields left out. */
export function signedIdentifiersXml(policies: readonly AccessPolicy[]): string {
  const xml = document.implementation.createDocument(null, 'SignedIdentifiers', null);
  for (const policy of policies) {
    const identifier = appendXml(xml.documentElement, 'SignedIdentifier');
    appendXml(identifier, 'Id', policy.id);
    const access = appendXml(identifier, 'AccessPolicy');
    if (policy.start !== '') appendXml(access, 'Start', policy.start);
    if (policy.expiry !== '') appendXml(access, 'Expiry', policy.expiry);
    if (policy.permission !== '') appendXml(access, 'Permission', policy.permission);
  }
  return serializeXml(xml);
}

export async function setTableAcl(
  credentials: Credentials,
  table: string,
  policies: readonly AccessPolicy[],
): Promise<void> {
  await call(credentials, {
    method: 'PUT',
    path: `/${encodeURIComponent(table)}`,
    query: { comp: 'acl' },
    headers: { 'Content-Type': 'application/xml' },
    body: signedIdentifiersXml(policies),
  });
}

export async function getServiceProperties(credentials: Credentials): Promise<XMLDocument> {
  const response = await call(credentials, {
    method: 'GET',
    path: '/',
    query: { restype: 'service', comp: 'properties' },
  });
  return new DOMParser().parseFromString(await response.text(), 'application/xml');
}

export async function setServiceProperties(credentials: Credentials, properties: XMLDocument): Promise<void> {
  await call(credentials, {
    method: 'PUT',
    path: '/',
    query: { restype: 'service', comp: 'properties' },
    headers: { 'Content-Type': 'application/xml' },
    body: serializeXml(properties),
  });
}

/** The text of the first descendant element named `name`, or ''. */
export function childText(parent: Element, name: string): string {
  return parent.getElementsByTagName(name)[0]?.textContent ?? '';
}

/** Appends an element (with text, escaped by the DOM) to an XML element. */
export function appendXml(parent: Element, name: string, text?: string): Element {
  const element = parent.ownerDocument.createElementNS(null, name);
  if (text !== undefined) element.textContent = text;
  parent.appendChild(element);
  return element;
}

function serializeXml(xml: XMLDocument): string {
  return `<?xml version="1.0" encoding="utf-8"?>${new XMLSerializer().serializeToString(xml.documentElement)}`;
}
