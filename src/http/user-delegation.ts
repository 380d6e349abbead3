// User delegation keys and the SAS they sign
// (https://learn.microsoft.com/rest/api/storageservices/get-user-delegation-key,
// create-user-delegation-sas). Cerulean stores no keys: a key's Value is derived from the account
// key and the key's own fields, so any process serving the account (or a restart) recomputes it
// from what the SAS carries (skoid, sktid, skt, ske, sks, skv, skdutid) and checks the signature
// with it (docs/access-control.md).
import { createHmac } from 'node:crypto';
import { floorMilliseconds, parseIsoTicks } from '../domain/edm.js';

/** What a user delegation key is made of, as Get User Delegation Key answers it. */
export interface DelegationKeyFields {
  readonly objectId: string;
  readonly tenantId: string;
  /** ISO 8601 UTC to the second (delegationKeyTime). */
  readonly start: string;
  readonly expiry: string;
  readonly service: string;
  readonly version: string;
  /** SignedDelegatedUserTid (from 2025-07-05); '' when none. */
  readonly delegatedUserTenantId: string;
}

/** Separates this derivation from any other HMAC made with the account key. */
const derivationLabel = 'cerulean user delegation key v1';

/**
 * The key's Value (base64 of 32 bytes): HMAC-SHA256 under the account key of the label and the
 * fields, one a line. Deterministic, so nothing is stored; changing the account key revokes every key.
 */
export function delegationKeyValue(accountKey: Buffer, fields: DelegationKeyFields): string {
  const { objectId, tenantId, start, expiry, service, version, delegatedUserTenantId } = fields;
  const text = [derivationLabel, objectId, tenantId, start, expiry, service, version, delegatedUserTenantId];
  return createHmac('sha256', accountKey).update(text.join('\n')).digest('base64');
}

/** A time as the key carries it: ISO 8601 UTC to the second, e.g. 2026-12-06T20:30:00Z (what the SDKs sign). */
export function delegationKeyTime(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** An ISO 8601 UTC time (a date, or a time to minutes, seconds or 100 ns) in ms; undefined when it is not one. */
export function parseDelegationTime(text: string): number | undefined {
  const ticks = parseIsoTicks(text, { dateOnly: true, zoneRequired: true, fractionDigitsMax: 7 });
  return ticks === undefined ? undefined : Number(floorMilliseconds(ticks));
}

/** The user delegation SAS parameters that sign (create-user-delegation-sas); absent ones are undefined. */
export interface DelegationSasParams {
  readonly sp?: string | undefined;
  readonly st?: string | undefined;
  readonly se?: string | undefined;
  readonly skoid?: string | undefined;
  readonly sktid?: string | undefined;
  readonly skt?: string | undefined;
  readonly ske?: string | undefined;
  readonly sks?: string | undefined;
  readonly skv?: string | undefined;
  readonly saoid?: string | undefined;
  readonly suoid?: string | undefined;
  readonly scid?: string | undefined;
  readonly skdutid?: string | undefined;
  readonly sduoid?: string | undefined;
  readonly sip?: string | undefined;
  readonly spr?: string | undefined;
  readonly sv?: string | undefined;
  readonly sr?: string | undefined;
  readonly ses?: string | undefined;
  readonly rscc?: string | undefined;
  readonly rscd?: string | undefined;
  readonly rsce?: string | undefined;
  readonly rscl?: string | undefined;
  readonly rsct?: string | undefined;
}

/**
 * The string a user delegation SAS signs, by its version (create-user-delegation-sas, and the
 * official SDKs' generateBlobSASQueryParameters): the key's fields after the canonicalized resource;
 * from 2020-02-10 saoid, suoid and scid; from 2020-12-06 the encryption scope; from 2025-07-05
 * skdutid and sduoid; from 2026-04-06 the signed request headers and query parameters (srh, srq:
 * empty here, a SAS naming any is refused before this). `timestamp` is the snapshot or version id.
 */
export function delegationSasStringToSign(p: DelegationSasParams, canonical: string, timestamp: string): string {
  const version = p.sv ?? '';
  const fields = [p.sp, p.st, p.se, canonical, p.skoid, p.sktid, p.skt, p.ske, p.sks, p.skv];
  if (version >= '2020-02-10') fields.push(p.saoid, p.suoid, p.scid);
  if (version >= '2025-07-05') fields.push(p.skdutid, p.sduoid);
  fields.push(p.sip, p.spr, p.sv, p.sr, timestamp);
  if (version >= '2020-12-06') fields.push(p.ses);
  if (version >= '2026-04-06') fields.push('', '');
  fields.push(p.rscc, p.rscd, p.rsce, p.rscl, p.rsct);
  return fields.map((field) => field ?? '').join('\n');
}
