// Blob and account SAS for raw HTTP tests, signed here from the public pages (create-service-sas,
// create-account-sas) independently of src/http/sas.ts: only the HMAC is shared. Any letters may be
// signed (the SDKs' permission parsers refuse letters a resource type does not know), so a test can
// send every letter to every operation.
import http from 'node:http';
import { hmacBase64, send, type RawResponse } from './http.js';
import { blobEndpoint } from './blob.js';
import { queueStringToSign } from './queue.js';
import { devAccount, devKey, type RunningServer } from './server.js';

export const sasVersion = '2021-08-06';

export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const inADay = () => isoSeconds(Date.now() + 24 * 3600_000);

export interface BlobSasFields {
  /** 'c' for a container SAS, 'b' for a blob SAS. */
  readonly sr: 'b' | 'c';
  /** `container` (sr=c) or `container/blob` (sr=b), as the URL names it. */
  readonly resource: string;
  readonly sp: string;
  readonly st?: string;
  readonly se?: string;
  readonly sv?: string;
  readonly sip?: string;
  readonly spr?: string;
}

/**
 * create-service-sas, Blob service, by signed version: from 2018-11-09 sr and the snapshot time
 * follow sv, from 2020-12-06 the encryption scope; the response headers close the string.
 */
export function blobSas(fields: BlobSasFields, key = devKey): string {
  const sv = fields.sv ?? sasVersion;
  const se = fields.se ?? inADay();
  const signed = fields.sr === 'c' ? fields.resource.split('/')[0]! : fields.resource;
  const lines = [
    fields.sp,
    fields.st ?? '',
    se,
    `/blob/${devAccount}/${signed}`,
    '',
    fields.sip ?? '',
    fields.spr ?? '',
  ];
  lines.push(sv);
  if (sv >= '2018-11-09') lines.push(fields.sr, '');
  if (sv >= '2020-12-06') lines.push('');
  lines.push('', '', '', '', '');
  const sig = hmacBase64(key, lines.join('\n'));
  return queryOf({ sv, sr: fields.sr, sp: fields.sp, ...limits(fields, se), sig });
}

/** A user delegation key as Get User Delegation Key answers it (get-user-delegation-key). */
export interface DelegationKey {
  readonly oid: string;
  readonly tid: string;
  readonly start: string;
  readonly expiry: string;
  readonly service: string;
  readonly version: string;
  /** Base64. */
  readonly value: string;
}

/**
 * create-user-delegation-sas at version 2021-08-06: the key's fields follow the canonicalized
 * resource, then saoid, suoid, scid (empty here), sip, spr, sv, sr, the snapshot time, the encryption
 * scope and the five response headers; signed with the key's Value.
 */
export function userDelegationSas(fields: BlobSasFields, key: DelegationKey): string {
  const se = fields.se ?? inADay();
  const signed = fields.sr === 'c' ? fields.resource.split('/')[0]! : fields.resource;
  const keyFields = [key.oid, key.tid, key.start, key.expiry, key.service, key.version];
  const lines = [fields.sp, fields.st ?? '', se, `/blob/${devAccount}/${signed}`, ...keyFields, '', '', ''];
  lines.push(fields.sip ?? '', fields.spr ?? '', sasVersion, fields.sr, '', '', '', '', '', '', '');
  const sig = hmacBase64(key.value, lines.join('\n'));
  const keyParams = { skoid: key.oid, sktid: key.tid, skt: key.start, ske: key.expiry, sks: key.service };
  return queryOf({
    sv: sasVersion,
    sr: fields.sr,
    sp: fields.sp,
    ...limits(fields, se),
    ...keyParams,
    skv: key.version,
    sig,
  });
}

export interface AccountSasFields {
  readonly ss?: string;
  readonly srt: string;
  readonly sp: string;
  readonly st?: string;
  readonly se?: string;
  readonly sip?: string;
  readonly spr?: string;
}

/** create-account-sas: the string-to-sign ends in a newline; from 2020-12-06 the encryption scope follows sv. */
export function accountSas(fields: AccountSasFields, key = devKey): string {
  const ss = fields.ss ?? 'b';
  const se = fields.se ?? inADay();
  const lines = [devAccount, fields.sp, ss, fields.srt, fields.st ?? '', se, fields.sip ?? '', fields.spr ?? ''];
  lines.push(sasVersion, '');
  const sig = hmacBase64(key, `${lines.join('\n')}\n`);
  return queryOf({ sv: sasVersion, ss, srt: fields.srt, sp: fields.sp, ...limits(fields, se), sig });
}

/** The optional limits of either SAS, in the order the SDKs write them. */
function limits(fields: { st?: string; sip?: string; spr?: string }, se: string): Record<string, string | undefined> {
  return { st: fields.st, se, sip: fields.sip, spr: fields.spr };
}

function queryOf(params: Record<string, string | undefined>): string {
  return Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
}

export interface SasRequest {
  readonly method: string;
  /** After the account: `c1/b1?comp=block&blockid=…` (no SAS). */
  readonly target: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly agent?: http.Agent;
}

/** One raw request to the blob endpoint, path-style; `sas` (a query) or, when undefined, Shared Key. */
export function blobRequest(server: RunningServer, request: SasRequest, sas: string | undefined): Promise<RawResponse> {
  return sasRequest(Number(new URL(blobEndpoint(server)).port), request, sas);
}

/**
 * A queue service SAS (create-service-sas, Queue service): it names no resource of its own; it is
 * for the queue it signs, `/queue/{account}/{queue}`.
 */
export function queueSas(queue: string, sp: string, key = devKey): string {
  const se = inADay();
  const sig = hmacBase64(key, [sp, '', se, `/queue/${devAccount}/${queue}`, '', '', '', sasVersion].join('\n'));
  return queryOf({ sv: sasVersion, sp, se, sig });
}

/** One raw request to a Blob or Queue endpoint on `port`, path-style; `sas` or, when undefined, Shared Key. */
export function sasRequest(port: number, request: SasRequest, sas: string | undefined): Promise<RawResponse> {
  const separator = request.target.includes('?') ? '&' : '?';
  const path = `/${devAccount}/${request.target}${sas === undefined ? '' : `${separator}${sas}`}`;
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers: Record<string, string> = {
    'x-ms-version': sasVersion,
    'x-ms-date': new Date().toUTCString(),
    'Content-Length': String(body?.length ?? 0),
    ...(body !== undefined && { 'Content-Type': 'application/octet-stream' }),
    ...request.headers,
  };
  if (sas === undefined) {
    const signature = hmacBase64(devKey, queueStringToSign('SharedKey', request.method, path, headers));
    headers['Authorization'] = `SharedKey ${devAccount}:${signature}`;
  }
  const agent = request.agent;
  return send(port, {
    method: request.method,
    path,
    headers,
    ...(body && { body }),
    auth: 'none',
    ...(agent && { agent }),
  });
}

/** The service's URL of a blob of this server, as x-ms-copy-source names it, with an optional SAS. */
export function blobUrl(server: RunningServer, container: string, blob: string, sas?: string): string {
  return `${blobEndpoint(server)}/${container}/${blob}${sas === undefined ? '' : `?${sas}`}`;
}
