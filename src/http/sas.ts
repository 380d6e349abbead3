// Shared access signatures: service SAS for one table and account SAS (Azure REST: create-service-sas,
// create-account-sas).
// verifySas proves a token genuine and currently usable and returns what it grants;
// authorizeSas then checks that grant against what one operation needs.
import { timingSafeEqual } from 'node:crypto';
import { floorMilliseconds, parseIsoTicks } from '../domain/edm.js';
import { compareKeyToBound, type KeyBound, type KeyRange } from '../domain/keys.js';
import { StorageError } from '../errors.js';
import type { Account } from './accounts.js';
import { sign } from './auth.js';
import { delegationKeyTime, delegationKeyValue, delegationSasStringToSign, parseDelegationTime } from './user-delegation.js';

const sasParamNames = [
  'sv',
  'tn',
  'sp',
  'st',
  'se',
  'sip',
  'spr',
  'si',
  'spk',
  'srk',
  'epk',
  'erk',
  'ss',
  'srt',
  'ses',
  'sig',
  'sr',
  'rscc',
  'rscd',
  'rsce',
  'rscl',
  'rsct',
  'skoid',
  'sktid',
  'skt',
  'ske',
  'sks',
  'skv',
  'saoid',
  'suoid',
  'scid',
  'skdutid',
  'sduoid',
  'srh',
  'srq',
] as const;
export type SasParamName = (typeof sasParamNames)[number];
/** The SAS query parameters present, percent-decoded. */
export type SasParams = Partial<Record<SasParamName, string>>;

const tablePermissions = ['r', 'a', 'u', 'd'] as const;
const queuePermissions = ['r', 'a', 'u', 'p'] as const;
/** Blob and container letters (create-service-sas): read, add, create, write, delete, … */
const blobPermissions = [...'racwdxyltmeopif'];
export type QueuePermission = (typeof queuePermissions)[number];
const accountPermissions = ['r', 'w', 'd', 'l', 'a', 'c', 'u', 'p', 't', 'f', 'y'] as const;
const resourceTypes = ['s', 'c', 'o'] as const;
export type TablePermission = (typeof tablePermissions)[number];
export type AccountPermission = (typeof accountPermissions)[number];
export type ResourceType = (typeof resourceTypes)[number];

/** A stored access policy (Set Table ACL) as its XML gives it; absent fields are undefined. */
export interface StoredPolicy {
  readonly start?: string | undefined;
  readonly expiry?: string | undefined;
  readonly permission?: string | undefined;
}

export type SasGrant =
  | {
      readonly kind: 'service';
      /** The table as named by `tn` (any case), or the queue the URL names (a queue SAS names none). */
      readonly table: string;
      /** Table letters r a u d; queue letters r a u p; blob letters (blobPermissions). */
      readonly permissions: ReadonlySet<string>;
      /** The keys the token may touch (spk/srk/epk/erk); open bounds are absent. */
      readonly keyRange: KeyRange;
      /** A blob SAS's response headers (rscc, rscd, rsce, rscl, rsct) that replace the blob's own on reads. */
      readonly responseHeaders?: Readonly<Record<string, string>> | undefined;
      /** The signed version (sv): some letters grant more from a version on (SasNeed.serviceAlso). */
      readonly version?: string | undefined;
    }
  | {
      readonly kind: 'account';
      readonly resourceTypes: ReadonlySet<ResourceType>;
      readonly permissions: ReadonlySet<AccountPermission>;
    };

export interface SasContext {
  readonly account: Account;
  /**
   * The resource the request URL names (a table, queue or container). Undefined for $batch and
   * service-level requests: the caller then checks a service grant's `table` against the tables
   * the request touches.
   */
  readonly resourceName: string | undefined;
  /** The peer address as node reports it (IPv4, IPv4-mapped IPv6 or IPv6). */
  readonly clientIp: string;
  readonly https: boolean;
  /** Server clock, ms since the epoch. */
  readonly now: number;
  readonly lookupPolicy: (table: string, id: string) => Promise<StoredPolicy | undefined> | StoredPolicy | undefined;
  /** The letter an account SAS's `ss` must hold for the service asked (default t, tables). */
  readonly serviceLetter?: 'b' | 'q' | 't';
}

/**
 * Verifies the SAS in a raw query string (the part after '?', still percent-encoded: decoding it
 * ourselves keeps a literal '+' as '+', Azure REST: create-account-sas). Returns undefined when there is no `sig`.
 * Failures: bad or unsigned token → AuthenticationFailed; then, per Azure REST: common-rest-api-error-codes, the
 * Authorization* codes (time window, protocol, source IP, service, table).
 */
export async function verifySas(rawQuery: string, context: SasContext): Promise<SasGrant | undefined> {
  const params = parseSasParams(rawQuery);
  if (params.sig === undefined) return undefined;
  if (context.serviceLetter === 'q' && params.ss === undefined && params.srt === undefined) {
    return verifyQueueSas(params, context);
  }
  if (context.serviceLetter === 'b' && params.sr !== undefined) return verifyBlobSas(params, rawQuery, context);
  if (params.tn !== undefined) return verifyServiceSas(params, params.tn, context);
  if (params.ss !== undefined || params.srt !== undefined) return verifyAccountSas(params, context);
  throw authenticationFailed('The SAS has neither tn (service SAS) nor ss and srt (account SAS).');
}

/** What an operation needs from a SAS (permissions: Azure REST: create-service-sas, create-account-sas). */
export interface SasNeed {
  readonly resourceType: ResourceType;
  /** Service SAS letters, all required; '' = no service SAS may do this (Azure REST: create-service-sas). */
  readonly service: string;
  /** Account SAS: any one of these strings, each with all its letters required. */
  readonly account: readonly string[];
  /**
   * More letters that grant it to a service SAS, each from a signed version (sv) on: Add for
   * Append Block, Delete for Break Lease from 2017-07-29 (create-service-sas).
   */
  readonly serviceAlso?: readonly { readonly letters: string; readonly since?: string }[] | undefined;
  /**
   * Create ('c') grants it to either kind of SAS too, but only for a blob that does not exist yet:
   * "users can create new blobs, but may not overwrite existing blobs" (create-account-sas,
   * create-service-sas). authorizeSas then answers 'createOnly' and the operation checks.
   */
  readonly create?: boolean | undefined;
}

/**
 * What a grant allows of a need: undefined, all of it; 'createOnly', only through Create ('c'), so
 * the operation may make a new blob but must refuse to replace one (403 AuthorizationPermissionMismatch).
 */
export type SasVerdict = 'createOnly' | undefined;

export const sasNeeds = {
  getServiceProperties: { resourceType: 's', service: '', account: ['r'] },
  setServiceProperties: { resourceType: 's', service: '', account: ['w'] },
  getServiceStats: { resourceType: 's', service: '', account: ['r'] },
  queryTables: { resourceType: 's', service: '', account: ['l'] },
  createTable: { resourceType: 'c', service: '', account: ['c', 'w'] },
  deleteTable: { resourceType: 'c', service: '', account: ['d'] },
  // Not in the account SAS table; Azure REST: create-account-sas recommends container + read/write (unverified).
  getTableAcl: { resourceType: 'c', service: '', account: ['r'] },
  setTableAcl: { resourceType: 'c', service: '', account: ['w'] },
  queryEntities: { resourceType: 'o', service: 'r', account: ['r'] },
  insertEntity: { resourceType: 'o', service: 'a', account: ['a'] },
  upsertEntity: { resourceType: 'o', service: 'au', account: ['au'] },
  updateEntity: { resourceType: 'o', service: 'u', account: ['u'] },
  deleteEntity: { resourceType: 'o', service: 'd', account: ['d'] },
} as const satisfies Record<string, SasNeed>;

/**
 * Throws unless the grant covers the need: AuthorizationResourceTypeMismatch or
 * AuthorizationPermissionMismatch (Azure REST: common-rest-api-error-codes). A service SAS asked for a table-level or
 * service-level operation gets AuthorizationPermissionMismatch, as in Azurite (code unverified).
 * An account SAS's resource type is checked before its letters. Entity keys are checked separately
 * with keyInRange. Returns 'createOnly' when only Create grants the need (SasVerdict).
 */
export function authorizeSas(grant: SasGrant, need: SasNeed): SasVerdict {
  if (grant.kind === 'account' && !grant.resourceTypes.has(need.resourceType)) {
    throw new StorageError('AuthorizationResourceTypeMismatch');
  }
  if (grantsAll(grant, need)) return undefined;
  if (need.create === true && (grant.permissions as ReadonlySet<string>).has('c')) return 'createOnly';
  throw new StorageError('AuthorizationPermissionMismatch');
}

function grantsAll(grant: SasGrant, need: SasNeed): boolean {
  if (grant.kind === 'account') return need.account.some((letters) => hasAll(grant.permissions, letters));
  if (need.service !== '' && hasAll(grant.permissions, need.service)) return true;
  const version = grant.version ?? '';
  return (need.serviceAlso ?? []).some(
    ({ letters, since }) => hasAll(grant.permissions, letters) && version >= (since ?? ''),
  );
}

/** Whether (partitionKey, rowKey) lies in a service SAS key range (Azure REST: create-service-sas table). */
export function keyInRange(range: KeyRange, partitionKey: string, rowKey: string): boolean {
  const { lower, upper } = range;
  const belowLower = (order: number) => order < 0 || (order === 0 && !lower?.inclusive);
  const aboveUpper = (order: number) => order > 0 || (order === 0 && !upper?.inclusive);
  if (lower !== undefined && belowLower(compareKeyToBound(partitionKey, rowKey, lower))) return false;
  if (upper !== undefined && aboveUpper(compareKeyToBound(partitionKey, rowKey, upper))) return false;
  return true;
}

/**
 * Percent-decodes the SAS parameters of a raw query. A SAS parameter given twice makes the token
 * ambiguous (which `sig` was meant?): 403 AuthenticationFailed, as for any malformed token
 * (Azure REST: create-service-sas); the service's wording for this case is unverified, the detail is the storage
 * services' "Signature fields not well formed."
 */
export function parseSasParams(rawQuery: string): SasParams {
  const params: SasParams = {};
  for (const pair of rawQuery.split('&')) {
    const equals = pair.indexOf('=');
    const name = equals === -1 ? pair : pair.slice(0, equals);
    if (!isSasParamName(name)) continue;
    if (params[name] !== undefined) {
      throw authenticationFailed(
        `Signature fields not well formed: the SAS parameter ${name} is given more than once.`,
      );
    }
    params[name] = percentDecoded(name, equals === -1 ? '' : pair.slice(equals + 1));
  }
  return params;
}

/** Azure REST: create-service-sas; versions before 2015-04-05 have no sip/spr, before 2015-02-21 no "/table" prefix. */
export function serviceSasStringToSign(params: SasParams, accountName: string): string {
  const version = params.sv ?? '';
  const tableName = (params.tn ?? '').toLowerCase();
  const resource = version >= '2015-02-21' ? `/table/${accountName}/${tableName}` : `/${accountName}/${tableName}`;
  const fields = [params.sp, params.st, params.se, resource, params.si];
  if (version >= '2015-04-05') fields.push(params.sip, params.spr);
  fields.push(version, params.spk, params.srk, params.epk, params.erk);
  return fields.map((field) => field ?? '').join('\n');
}

/**
 * Azure REST: create-account-sas, with a trailing newline; from 2020-12-06 the encryption scope follows sv
 * (unverified).
 */
export function accountSasStringToSign(params: SasParams, accountName: string): string {
  const { sp, ss, srt, st, se, sip, spr, sv } = params;
  const fields = [accountName, sp, ss, srt, st, se, sip, spr, sv];
  if ((sv ?? '') >= '2020-12-06') fields.push(params.ses);
  return `${fields.map((field) => field ?? '').join('\n')}\n`;
}

async function verifyServiceSas(params: SasParams, table: string, context: SasContext): Promise<SasGrant> {
  requireParam(params, 'sv');
  checkSignature(serviceSasStringToSign(params, context.account.name), params, context.account);
  const { st, se, sp } = await effectivePolicy(params, table, context);
  checkTimeWindow(st, se, context.now);
  checkProtocol(params.spr, context.https);
  checkSourceIp(params.sip, context.clientIp);
  if (context.resourceName !== undefined && context.resourceName.toLowerCase() !== table.toLowerCase()) {
    const detail = `The SAS is for table '${table}', not '${context.resourceName}'.`;
    throw new StorageError('AuthorizationFailure', undefined, detail);
  }
  return { kind: 'service', table, permissions: letters(sp, tablePermissions), keyRange: keyRange(params) };
}

/**
 * A queue service SAS names no resource in its parameters (no `tn`, no `sr`): it is for the queue
 * the URL names, signed as `/queue/{account}/{queue}` (create-service-sas).
 */
export function queueSasStringToSign(params: SasParams, accountName: string, queue: string): string {
  const version = params.sv ?? '';
  const resource = version >= '2015-02-21' ? `/queue/${accountName}/${queue}` : `/${accountName}/${queue}`;
  const fields = [params.sp, params.st, params.se, resource, params.si];
  if (version >= '2015-04-05') fields.push(params.sip, params.spr);
  fields.push(version);
  return fields.map((field) => field ?? '').join('\n');
}

async function verifyQueueSas(params: SasParams, context: SasContext): Promise<SasGrant> {
  requireParam(params, 'sv');
  const queue = context.resourceName ?? '';
  checkSignature(queueSasStringToSign(params, context.account.name, queue), params, context.account);
  const { st, se, sp } = await effectivePolicy(params, queue, context);
  checkTimeWindow(st, se, context.now);
  checkProtocol(params.spr, context.https);
  checkSourceIp(params.sip, context.clientIp);
  return { kind: 'service', table: queue, permissions: letters(sp, queuePermissions), keyRange: {} };
}

/** The fields each blob SAS version signs after the canonicalized resource, then the response headers. */
function blobSasFields(params: SasParams, signedTimestamp: string): (string | undefined)[] {
  const version = params.sv ?? '';
  const fields: (string | undefined)[] = [params.si];
  if (version >= '2015-04-05') fields.push(params.sip, params.spr);
  fields.push(version);
  if (version >= '2018-11-09') fields.push(params.sr, signedTimestamp);
  if (version >= '2020-12-06') fields.push(params.ses);
  fields.push(params.rscc, params.rscd, params.rsce, params.rscl, params.rsct);
  return fields;
}

/**
 * A blob service SAS (create-service-sas): for the container (`sr=c`) or the blob (`sr=b`, and
 * its snapshot `bs` or version `bv`) the URL names, signed as `/blob/{account}/{container}[/{blob}]`
 * (no `/blob` before 2015-02-21); `resource` is `container` or `container/blob`, as the URL names it.
 */
export function blobSasStringToSign(
  params: SasParams,
  accountName: string,
  resource: string,
  rawQuery: string,
): string {
  const { canonical, timestamp } = blobSigned(params, accountName, resource, rawQuery);
  const fields = [params.sp, params.st, params.se, canonical, ...blobSasFields(params, timestamp)];
  return fields.map((field) => field ?? '').join('\n');
}

/** The canonicalized resource a blob SAS signs, and its snapshot (sr=bs) or version (sr=bv) timestamp. */
function blobSigned(params: SasParams, accountName: string, resource: string, rawQuery: string) {
  const version = params.sv ?? '';
  const slash = resource.indexOf('/');
  const signed = params.sr === 'c' && slash !== -1 ? resource.slice(0, slash) : resource;
  const canonical = version >= '2015-02-21' ? `/blob/${accountName}/${signed}` : `/${accountName}/${signed}`;
  const query = new URLSearchParams(rawQuery);
  const timestamp = params.sr === 'bs' ? query.get('snapshot') : params.sr === 'bv' ? query.get('versionid') : '';
  return { canonical, timestamp: timestamp ?? '' };
}

const blobResources: ReadonlySet<string> = new Set(['c', 'b', 'bs', 'bv']);

async function verifyBlobSas(params: SasParams, rawQuery: string, context: SasContext): Promise<SasGrant> {
  requireParam(params, 'sv');
  if (!blobResources.has(params.sr ?? ''))
    throw authenticationFailed(`The SAS resource sr '${params.sr}' is not valid.`);
  const resource = context.resourceName ?? '';
  const container = resource.split('/')[0] ?? '';
  const delegated = params.skoid !== undefined;
  if (delegated) checkDelegationSas(params, context, blobSigned(params, context.account.name, resource, rawQuery));
  else checkSignature(blobSasStringToSign(params, context.account.name, resource, rawQuery), params, context.account);
  // A user delegation SAS has no stored access policy (create-user-delegation-sas: si is not used).
  const { st, se, sp } = delegated ? requiredWindow(params) : await effectivePolicy(params, container, context);
  checkTimeWindow(st, se, context.now);
  checkProtocol(params.spr, context.https);
  checkSourceIp(params.sip, context.clientIp);
  if (params.sr !== 'c' && !resource.includes('/')) {
    throw new StorageError('AuthorizationFailure', undefined, 'A blob SAS (sr=b) cannot be used on its container.');
  }
  // What the SAS covers: its container (sr=c) or its blob; see sasCovers.
  const signed = params.sr === 'c' ? container : resource;
  const overrides = {
    'Cache-Control': params.rscc,
    'Content-Disposition': params.rscd,
    'Content-Encoding': params.rsce,
    'Content-Language': params.rscl,
    'Content-Type': params.rsct,
  };
  const given = Object.entries(overrides).filter((entry): entry is [string, string] => entry[1] !== undefined);
  const responseHeaders = Object.fromEntries(given);
  const permissions = letters(sp, blobPermissions);
  return { kind: 'service', table: signed, permissions, keyRange: {}, responseHeaders, version: params.sv };
}

async function verifyAccountSas(params: SasParams, context: SasContext): Promise<SasGrant> {
  for (const name of ['sv', 'ss', 'srt', 'sp', 'se'] as const) requireParam(params, name);
  checkSignature(accountSasStringToSign(params, context.account.name), params, context.account);
  checkTimeWindow(params.st, params.se, context.now);
  checkProtocol(params.spr, context.https);
  checkSourceIp(params.sip, context.clientIp);
  if (!(params.ss ?? '').includes(context.serviceLetter ?? 't')) throw new StorageError('AuthorizationServiceMismatch');
  return {
    kind: 'account',
    resourceTypes: letters(params.srt, resourceTypes),
    permissions: letters(params.sp, accountPermissions),
  };
}

/** The signature must equal the HMAC of the string-to-sign under one of the keys (the account's by default). */
function checkSignature(stringToSign: string, params: SasParams, account: Account, keys = account.keys): void {
  const provided = Buffer.from(params.sig ?? '');
  for (const key of keys) {
    const expected = Buffer.from(sign(stringToSign, key));
    if (expected.length === provided.length && timingSafeEqual(expected, provided)) return;
  }
  throw authenticationFailed(`Signature did not match. String to sign used was ${stringToSign}`);
}

/**
 * A user delegation SAS (create-user-delegation-sas): its key's fields all given, for the Blob
 * service, usable now (skt ≤ now ≤ ske), and its signature made with the key derived from them
 * (user-delegation.ts) under one of the account keys. srh and srq (signed request headers and
 * query parameters, 2026-04-06) are refused: Cerulean does not check them (chosen).
 */
function checkDelegationSas(
  params: SasParams,
  context: SasContext,
  signed: { readonly canonical: string; readonly timestamp: string },
): void {
  for (const name of ['skoid', 'sktid', 'skt', 'ske', 'sks', 'skv'] as const) requireParam(params, name);
  if (params.srh !== undefined || params.srq !== undefined) {
    throw authenticationFailed('A SAS with signed request headers or query parameters (srh, srq) is not supported.');
  }
  if (!(params.sks ?? '').includes('b')) {
    throw authenticationFailed(`The user delegation key is for service '${params.sks}', not the Blob service (b).`);
  }
  const start = parseDelegationTime(params.skt ?? '');
  const expiry = parseDelegationTime(params.ske ?? '');
  if (start === undefined || expiry === undefined) {
    throw authenticationFailed('The user delegation key times skt and ske must be ISO 8601 UTC times.');
  }
  // The service's wording for a key outside its validity is unverified.
  if (context.now > expiry) throw authenticationFailed(`The user delegation key expired at ${params.ske}.`);
  if (context.now < start) throw authenticationFailed(`The user delegation key is not valid before ${params.skt}.`);
  const fields = {
    objectId: params.skoid ?? '',
    tenantId: params.sktid ?? '',
    start: delegationKeyTime(start),
    expiry: delegationKeyTime(expiry),
    service: params.sks ?? '',
    version: params.skv ?? '',
    delegatedUserTenantId: params.skdutid ?? '',
  };
  const keys = context.account.keys.map((key) => Buffer.from(delegationKeyValue(key, fields), 'base64'));
  const stringToSign = delegationSasStringToSign(params, signed.canonical, signed.timestamp);
  checkSignature(stringToSign, params, context.account, keys);
}

/** A user delegation SAS names its permissions and expiry itself (create-user-delegation-sas: both required). */
function requiredWindow(params: SasParams) {
  requireParam(params, 'sp');
  requireParam(params, 'se');
  return { st: params.st, se: params.se!, sp: params.sp! };
}

/**
 * st, se and sp from the URL or from the stored policy `si` (Azure REST: create-service-sas). An unknown policy is
 * AuthorizationFailure (emulator behaviour); a field in both places is a 400 (Set Table ACL docs;
 * code unverified).
 */
async function effectivePolicy(params: SasParams, table: string, context: SasContext) {
  const policy = params.si === undefined ? {} : await context.lookupPolicy(table, params.si);
  if (policy === undefined) {
    const detail = `No stored access policy '${params.si}' on table '${table}'.`;
    throw new StorageError('AuthorizationFailure', undefined, detail);
  }
  const st = pick('st', params.st, policy.start);
  const se = pick('se', params.se, policy.expiry);
  const sp = pick('sp', params.sp, policy.permission);
  if (se === undefined) throw authenticationFailed('The SAS has no expiry (se) and no stored policy gives one.');
  if (sp === undefined) throw authenticationFailed('The SAS has no permissions (sp) and no stored policy gives them.');
  return { st, se, sp };
}

function pick(name: SasParamName, fromUrl: string | undefined, fromPolicy: string | undefined): string | undefined {
  if (fromUrl !== undefined && fromPolicy !== undefined) {
    const detail = `The SAS field ${name} is also set by the stored access policy.`;
    throw new StorageError('InvalidQueryParameterValue', detail);
  }
  return fromUrl ?? fromPolicy;
}

/**
 * The SAS is usable from st (or now when absent) until se, with no allowance for clock skew: the
 * service documents none (docs/access-control.md). Both refusals are 403 AuthenticationFailed with
 * the service's detail texts, one for a SAS without st that has expired, the other for a time
 * outside [st, se] (as the service's replies show them; not in its documentation).
 */
function checkTimeWindow(start: string | undefined, expiry: string | undefined, now: number): void {
  const startMs = start === undefined ? undefined : parseTime('st', start);
  const expiryMs = expiry === undefined ? Infinity : parseTime('se', expiry);
  const shown = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toUTCString() : '');
  if (startMs === undefined && now > expiryMs) {
    throw authenticationFailed(
      `Signed expiry time [${shown(expiryMs)}] must be after signed start time [${shown(now)}]`,
    );
  }
  if (startMs !== undefined && (now < startMs || now > expiryMs)) {
    throw authenticationFailed(
      `Signature not valid in the specified time frame: Start [${shown(startMs)}] - Expiry [${shown(expiryMs)}] - ` +
        `Current [${shown(now)}]`,
    );
  }
}

/** ISO 8601 UTC as SAS allows it: a date, or a time with its zone to minutes, seconds or 100 ns. */
function parseTime(name: 'st' | 'se', text: string): number {
  const ticks = parseIsoTicks(text, { dateOnly: true, zoneRequired: true, fractionDigitsMax: 7 });
  if (ticks === undefined) throw authenticationFailed(`The SAS field ${name} '${text}' is not an ISO 8601 UTC time.`);
  return Number(floorMilliseconds(ticks));
}

/** spr is 'https' or 'https,http' (the default when absent). */
function checkProtocol(protocols: string | undefined, https: boolean): void {
  if (protocols === undefined) return;
  if (!protocols.split(',').includes(https ? 'https' : 'http')) throw new StorageError('AuthorizationProtocolMismatch');
}

/** sip is one IPv4 address or an inclusive range `a.b.c.d-e.f.g.h`. */
function checkSourceIp(range: string | undefined, clientIp: string): void {
  if (range === undefined) return;
  const [first = '', last = first] = range.split('-');
  const low = ipv4Number(first);
  const high = ipv4Number(last);
  if (low === undefined || high === undefined) {
    throw authenticationFailed(`The SAS field sip '${range}' is not an IPv4 address or range.`);
  }
  const client = ipv4Number(clientIpv4(clientIp));
  if (client === undefined || client < low || client > high) {
    throw new StorageError(
      'AuthorizationSourceIPMismatch',
      `This request is not authorized to perform this operation using this source IP ${clientIp}.`,
    );
  }
}

/** Node reports IPv4 peers of a dual-stack socket as ::ffff:a.b.c.d; IPv6 loopback counts as 127.0.0.1. */
function clientIpv4(address: string): string {
  if (address === '::1') return '127.0.0.1';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

function ipv4Number(address: string): number | undefined {
  const parts = address.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((value, part) => value * 256 + Number(part), 0);
}

/**
 * spk/srk/epk/erk as store bounds. A row key bound needs its partition key bound (Azure REST: create-service-sas),
 * but the JS SDK leaves an empty `spk=''`/`epk=''` out of the URL while signing it, so a missing
 * one beside a row key bound is the empty key.
 */
function keyRange(params: SasParams): KeyRange {
  const { srk, erk } = params;
  const spk = params.spk ?? (srk === undefined ? undefined : '');
  const epk = params.epk ?? (erk === undefined ? undefined : '');
  const lower = keyBound(spk, srk);
  const upper = keyBound(epk, erk);
  return { ...(lower && { lower }), ...(upper && { upper }) };
}

function keyBound(partitionKey: string | undefined, rowKey: string | undefined): KeyBound | undefined {
  if (partitionKey === undefined) return undefined;
  return rowKey === undefined ? { partitionKey, inclusive: true } : { partitionKey, rowKey, inclusive: true };
}

/** The letters of `text` that are in `alphabet`; others are ignored. */
function letters<T extends string>(text: string | undefined, alphabet: readonly T[]): ReadonlySet<T> {
  return new Set(alphabet.filter((letter) => (text ?? '').includes(letter)));
}

function hasAll(granted: ReadonlySet<string>, needed: string): boolean {
  return [...needed].every((letter) => granted.has(letter));
}

function requireParam(params: SasParams, name: SasParamName): void {
  if (params[name] === undefined) throw authenticationFailed(`The SAS has no ${name} parameter.`);
}

function isSasParamName(name: string): name is SasParamName {
  return (sasParamNames as readonly string[]).includes(name);
}

function percentDecoded(name: string, value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw authenticationFailed(`The SAS parameter ${name} is not validly percent-encoded.`);
  }
}

function authenticationFailed(detail: string): StorageError {
  return new StorageError('AuthenticationFailed', undefined, detail);
}
