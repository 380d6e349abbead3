// Who is asking, and what may they do: picks the scheme a request uses (Azure REST: authorize-with-shared-key),
// verifies it,
// and returns the Access every operation consults before it touches data. An Authorization header
// wins (Bearer → Entra ID token, else Shared Key / Shared Key Lite); without one, a `sig` query
// parameter means a SAS; with neither the request fails as Shared Key would.
import { StorageError } from '../errors.js';
import { verifySharedKey, type AuthRequest, type SharedKeyFlavour } from './auth.js';
import { invalidToken, type BearerPrincipal, type BearerTarget, type BearerVerifier } from './bearer.js';
import {
  authorizeSas,
  keyInRange,
  verifySas,
  type SasGrant,
  type SasNeed,
  type SasVerdict,
  type StoredPolicy,
} from './sas.js';
import { type EntityKeys } from '../domain/entity.js';
import { type KeyRange } from '../domain/keys.js';
import { firstHeader } from './headers.js';

export interface AuthorizeRequest extends AuthRequest {
  /** The query string as received (after '?', still percent-encoded), for SAS parameters. */
  readonly rawQuery: string;
  /** The resource the URL names (a table, queue or container); undefined for service-level requests. */
  readonly resourceName: string | undefined;
  readonly clientIp: string;
  readonly https: boolean;
}

export interface AuthorizeOptions {
  /** Undefined when bearer tokens are not enabled. */
  readonly bearer: BearerVerifier | undefined;
  readonly lookupPolicy: (account: string, table: string, id: string) => Promise<StoredPolicy | undefined>;
  /** The service's string-to-sign (default: the Table service's). */
  readonly sharedKey?: SharedKeyFlavour;
  /** The service's letter in an account SAS's `ss` (default t). */
  readonly accountServiceLetter?: 'b' | 'q' | 't';
}

/** What the verified credential allows; operations call it before reading or writing. */
export interface Access {
  /**
   * Throws 403 unless the credential may perform `need`, on `table` when the operation has one
   * (blobs: `container/blob`); 'createOnly' when only a SAS's Create letter grants it (SasVerdict).
   */
  require(need: SasNeed, table?: string): SasVerdict;
  /** Throws 403 unless the credential may touch this entity (a service SAS key range). */
  requireKey(keys: EntityKeys): void;
  /** Reads are limited to this range; undefined = no limit. */
  readonly keyRange: KeyRange | undefined;
  /** Response headers a blob SAS sets on the blob reads it makes (rscc, …); undefined: none. */
  readonly responseHeaders?: Readonly<Record<string, string>> | undefined;
  /** Who a verified bearer token names; undefined for every other credential (Get User Delegation Key). */
  readonly principal?: BearerPrincipal | undefined;
}

/** The service's name in an account-scoped audience (https://{account}.{service}.core.windows.net). */
const bearerServices = { b: 'blob', q: 'queue', t: 'table' } as const;

/** Shared Key and verified bearer tokens act as the account owner (no RBAC roles locally). */
const fullAccess: Access = { require: () => undefined, requireKey: () => undefined, keyRange: undefined };

export async function authorize(request: AuthorizeRequest, options: AuthorizeOptions): Promise<Access> {
  const authorization = firstHeader(request.headers['authorization']);
  if (authorization !== undefined && /^bearer /i.test(authorization)) {
    const service = bearerServices[options.accountServiceLetter ?? 't'];
    return bearerAccess(options.bearer, authorization, request.now, { account: request.account.name, service });
  }
  if (authorization === undefined) {
    const access = await authorizeSasOnly(request, options);
    if (access !== undefined) return access;
  }
  verifySharedKey(request, options.sharedKey);
  return fullAccess;
}

/**
 * The access an `Authorization: Bearer …` value gives to `target` (the request's account, or a copy
 * source's: x-ms-copy-source-authorization): the account owner's, naming the token's principal.
 * Throws 401 InvalidAuthenticationInfo unless the token verifies.
 */
export function bearerAccess(
  bearer: BearerVerifier | undefined,
  authorization: string,
  now: number,
  target: BearerTarget,
): Access {
  if (bearer === undefined) {
    throw invalidToken(
      'Bearer tokens are not enabled on this server (start it with --oauth-jwks, --oauth-pem or --oauth basic).',
    );
  }
  const principal = bearer.verify(authorization.replace(/^bearer /i, '').trim(), now, target);
  return { ...fullAccess, principal };
}

/**
 * The access the SAS in `request.rawQuery` gives, or undefined when it carries no signature. Also
 * for a SAS in another URL of the account (a copy source), verified as if it came with the request
 * (same clock, client address and protocol), `resourceName` naming that URL's resource.
 */
export async function authorizeSasOnly(
  request: AuthorizeRequest,
  options: AuthorizeOptions,
): Promise<Access | undefined> {
  if (!hasSignature(request.rawQuery)) return undefined;
  const grant = await verifySas(request.rawQuery, {
    account: request.account,
    resourceName: request.resourceName,
    clientIp: request.clientIp,
    https: request.https,
    now: request.now,
    lookupPolicy: (table, id) => options.lookupPolicy(request.account.name, table, id),
    serviceLetter: options.accountServiceLetter,
  });
  return grant === undefined ? undefined : sasAccess(grant);
}

function sasAccess(grant: SasGrant): Access {
  const range = grant.kind === 'service' ? grant.keyRange : {};
  const limited = range.lower !== undefined || range.upper !== undefined;
  return {
    require(need, table) {
      if (grant.kind === 'service' && table !== undefined && !sasCovers(grant.table, table)) {
        const detail = `The SAS is for '${grant.table}', not '${table}'.`;
        throw new StorageError('AuthorizationFailure', undefined, detail);
      }
      return authorizeSas(grant, need);
    },
    requireKey({ partitionKey, rowKey }) {
      // Said the same way whether or not the entity exists, so nothing outside the range leaks.
      if (limited && !keyInRange(range, partitionKey, rowKey)) {
        throw new StorageError('AuthorizationFailure', undefined, 'The entity is outside the key range of the SAS.');
      }
    },
    keyRange: limited ? range : undefined,
    responseHeaders: grant.kind === 'service' ? grant.responseHeaders : undefined,
  };
}

/**
 * Whether a service SAS for `signed` (a table, a queue, a container, `container/blob`) covers
 * `resource`: itself, or a blob of a container SAS. Table, queue and container names compare
 * without case; a blob name, after the first '/', exactly (blob names are case-sensitive).
 */
export function sasCovers(signed: string, resource: string): boolean {
  const split = (name: string) => {
    const slash = name.indexOf('/');
    return slash === -1 ? [name.toLowerCase(), undefined] : [name.slice(0, slash).toLowerCase(), name.slice(slash + 1)];
  };
  const [signedContainer, signedBlob] = split(signed);
  const [container, blob] = split(resource);
  return signedContainer === container && (signedBlob === undefined || signedBlob === blob);
}

/** Whether the request carries a credential of any kind: an Authorization header or a SAS signature. */
export function hasCredential(headers: AuthorizeRequest['headers'], rawQuery: string): boolean {
  return firstHeader(headers['authorization']) !== undefined || hasSignature(rawQuery);
}

function hasSignature(rawQuery: string): boolean {
  return rawQuery.split('&').some((pair) => pair === 'sig' || pair.startsWith('sig='));
}
