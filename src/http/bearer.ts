// Microsoft Entra ID bearer tokens (Azure REST: authorize-with-azure-active-directory), opt-in: a JWT is accepted only
// when its
// signature verifies under a key the operator configured (a JWKS or PEM file) and its issuer,
// audience and lifetime claims hold. Signatures use node:crypto; RS*, PS* and ES* algorithms.
// Any token that does not verify is 401 InvalidAuthenticationInfo with a WWW-Authenticate
// challenge, as the service answers (header format unverified).
import { createPublicKey, constants, verify, X509Certificate, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { StorageError } from '../errors.js';
import { bearerClockSkewMs, bearerRsaModulusBitsMin } from '../limits.js';

export interface VerificationKey {
  /** The JWKS `kid`; a token naming a kid is checked only against keys with that kid. */
  readonly kid?: string;
  /** The JWKS `alg`, when the key is bound to one algorithm. */
  readonly alg?: string;
  readonly key: KeyObject;
}

export interface BearerConfig {
  readonly keys: readonly VerificationKey[];
  /** Accepted `iss` values; undefined accepts any issuer (the keys are the trust anchor). */
  readonly issuers: readonly string[] | undefined;
  /** Accepted `aud` values. */
  readonly audiences: readonly string[];
  /**
   * Whether the account-scoped audience of the request's service is accepted too
   * (https://{account}.{service}.core.windows.net, with or without a trailing slash). The server
   * sets it unless the operator named the audiences; absent: false.
   */
  readonly accountAudiences?: boolean;
  /**
   * Azurite's `--oauth basic` level: issuer, audience and lifetime are checked, the signature is not
   * (a local emulator taking whatever token a test's credential makes). Absent: signatures are verified.
   */
  readonly unsigned?: boolean;
}

/** Who a verified token names: its `oid` (else `sub`) as subject, its `oid` and `tid` claims, and its `groups`. */
export interface BearerPrincipal {
  readonly subject: string | undefined;
  readonly objectId: string | undefined;
  readonly tenantId: string | undefined;
  /** The `groups` claim's object ids (Data Lake ACLs' named and owning groups); [] without one. */
  readonly groups?: readonly string[] | undefined;
}

/** Where a request goes: the account and the service, as an account-scoped audience names them. */
export interface BearerTarget {
  readonly account: string;
  readonly service: 'blob' | 'queue' | 'table';
}

/**
 * What the SDKs request with the scope https://storage.azure.com/.default (Azure REST:
 * authorize-with-azure-active-directory). The service also takes a token for the account's own
 * service URL, what the SDKs' `audience` option asks for (getQueueServiceAccountAudience and its
 * blob and table twins): see accountAudiences.
 */
export const defaultAudiences: readonly string[] = ['https://storage.azure.com', 'https://storage.azure.com/'];

interface Algorithm {
  readonly hash: 'sha256' | 'sha384' | 'sha512';
  readonly keyTypes: readonly string[];
  readonly pss?: true;
  /** ECDSA: the curve node names and the byte length of r and of s. */
  readonly curve?: string;
  readonly coordinateBytes?: number;
}

const rsa = ['rsa', 'rsa-pss'];
const algorithms: Readonly<Record<string, Algorithm>> = {
  RS256: { hash: 'sha256', keyTypes: ['rsa'] },
  RS384: { hash: 'sha384', keyTypes: ['rsa'] },
  RS512: { hash: 'sha512', keyTypes: ['rsa'] },
  PS256: { hash: 'sha256', keyTypes: rsa, pss: true },
  PS384: { hash: 'sha384', keyTypes: rsa, pss: true },
  PS512: { hash: 'sha512', keyTypes: rsa, pss: true },
  ES256: { hash: 'sha256', keyTypes: ['ec'], curve: 'prime256v1', coordinateBytes: 32 },
  ES384: { hash: 'sha384', keyTypes: ['ec'], curve: 'secp384r1', coordinateBytes: 48 },
  ES512: { hash: 'sha512', keyTypes: ['ec'], curve: 'secp521r1', coordinateBytes: 66 },
};

const base64urlPattern = /^[A-Za-z0-9_-]+$/;
const guidPattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

export class BearerVerifier {
  /** The WWW-Authenticate value of every bearer refusal. */
  readonly challenge: string;

  constructor(private readonly config: BearerConfig) {
    if (config.keys.length === 0 && config.unsigned !== true)
      throw new Error('bearer authentication needs at least one verification key');
    this.challenge = bearerChallenge(config.issuers);
  }

  /**
   * Verifies `token` (the text after "Bearer ") at time `now` (ms) for a request to `target`;
   * returns who it names.
   */
  verify(token: string, now: number, target?: BearerTarget): BearerPrincipal {
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((part) => base64urlPattern.test(part))) {
      throw invalidToken('The token is not a JSON Web Token (three base64url segments).');
    }
    const [headerText, payloadText, signatureText] = parts as [string, string, string];
    const header = jsonSegment(headerText);
    const payload = jsonSegment(payloadText);
    const named = header['alg'];
    const alg = typeof named === 'string' && Object.hasOwn(algorithms, named) ? named : undefined;
    if (alg === undefined) throw invalidToken(`The token algorithm ${JSON.stringify(named)} is not supported.`);
    const algorithm = algorithms[alg]!;
    if (header['crit'] !== undefined) throw invalidToken('The token has critical header parameters.');
    const signed = Buffer.from(`${headerText}.${payloadText}`, 'ascii');
    const signature = Buffer.from(signatureText, 'base64url');
    const kid = typeof header['kid'] === 'string' ? header['kid'] : undefined;
    const verified =
      this.config.unsigned === true ||
      this.candidates(alg, kid).some((key) => signatureValid(algorithm, key, signed, signature));
    if (!verified) {
      throw invalidToken('Signature validation failed.');
    }
    this.checkClaims(payload, now, this.audiencesFor(target));
    const text = (name: string) => (typeof payload[name] === 'string' ? (payload[name] as string) : undefined);
    const groups = Array.isArray(payload['groups'])
      ? (payload['groups'] as unknown[]).filter((group): group is string => typeof group === 'string')
      : [];
    return { subject: text('oid') ?? text('sub'), objectId: text('oid'), tenantId: text('tid'), groups };
  }

  private candidates(algorithm: string, kid: string | undefined): KeyObject[] {
    const usable = this.config.keys.filter((key) => key.alg === undefined || key.alg === algorithm);
    const named = kid === undefined ? [] : usable.filter((key) => key.kid === kid);
    // A kid no configured key has is tried against the keys that have none (PEM keys).
    const chosen = named.length > 0 ? named : usable.filter((key) => kid === undefined || key.kid === undefined);
    return chosen.map((key) => key.key);
  }

  /** The configured audiences, and the account-scoped URL of the target's service unless the operator named them. */
  private audiencesFor(target: BearerTarget | undefined): readonly string[] {
    if (target === undefined || this.config.accountAudiences !== true) return this.config.audiences;
    const serviceUrl = `https://${target.account}.${target.service}.core.windows.net`;
    return [...this.config.audiences, serviceUrl, `${serviceUrl}/`];
  }

  private checkClaims(payload: Record<string, unknown>, now: number, accepted: readonly string[]): void {
    const seconds = (name: string, required: boolean): number | undefined => {
      const value = payload[name];
      if (value === undefined && !required) return undefined;
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw invalidToken(`The token claim ${name} is missing or not a number.`);
      }
      return value;
    };
    const expiry = seconds('exp', true)!;
    const notBefore = seconds('nbf', false);
    if (now - bearerClockSkewMs >= expiry * 1000) {
      throw invalidToken('Lifetime validation failed. The token is expired.');
    }
    if (notBefore !== undefined && now + bearerClockSkewMs < notBefore * 1000) {
      throw invalidToken('Lifetime validation failed. The token is not yet valid.');
    }
    const issuer = payload['iss'];
    if (this.config.issuers !== undefined && !(typeof issuer === 'string' && this.config.issuers.includes(issuer))) {
      throw invalidToken('Issuer validation failed.');
    }
    const audience = payload['aud'];
    const audiences = typeof audience === 'string' ? [audience] : Array.isArray(audience) ? audience : [];
    if (!audiences.some((value) => typeof value === 'string' && accepted.includes(value))) {
      throw invalidToken('Audience validation failed.');
    }
  }
}

/**
 * The WWW-Authenticate value for a bearer refusal, naming the tenant of the configured issuers
 * (issuerTenant); "common" when none is configured. @azure/core-client retries after a challenge
 * only for a GUID tenant, so "common" stops it looping.
 */
export function bearerChallenge(issuers: readonly string[] | undefined): string {
  const tenant = issuerTenant(issuers ?? []) ?? 'common';
  const authorizationUri = `https://login.microsoftonline.com/${tenant}/oauth2/authorize`;
  return `Bearer authorization_uri=${authorizationUri} resource_id=https://storage.azure.com`;
}

/**
 * The tenant the issuers name: the first GUID in any of them (https://sts.windows.net/{tid}/,
 * https://login.microsoftonline.com/{tid}/v2.0), else the first path segment of an issuer URL
 * that is a domain name (https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0).
 */
export function issuerTenant(issuers: readonly string[]): string | undefined {
  const guid = issuers.map((issuer) => guidPattern.exec(issuer)?.[0]).find(Boolean);
  if (guid !== undefined) return guid;
  for (const issuer of issuers) {
    const segment = URL.canParse(issuer) ? new URL(issuer).pathname.split('/')[1] : undefined;
    if (segment !== undefined && /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(segment)) return segment;
  }
  return undefined;
}

/** 401 InvalidAuthenticationInfo; the server adds the challenge header. */
export function invalidToken(detail: string): StorageError {
  return new StorageError('InvalidAuthenticationInfo', undefined, detail);
}

function jsonSegment(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    throw invalidToken('A token segment is not base64url-encoded JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidToken('A token segment is not a JSON object.');
  }
  return value as Record<string, unknown>;
}

function signatureValid(algorithm: Algorithm, key: KeyObject, signed: Buffer, signature: Buffer): boolean {
  if (!algorithm.keyTypes.includes(key.asymmetricKeyType ?? '')) return false;
  if (algorithm.curve !== undefined) {
    if (key.asymmetricKeyDetails?.namedCurve !== algorithm.curve) return false;
    // JWS ECDSA signatures are r || s, each of fixed length (RFC 7518 §3.4).
    if (signature.length !== 2 * algorithm.coordinateBytes!) return false;
    return verify(algorithm.hash, signed, { key, dsaEncoding: 'ieee-p1363' }, signature);
  }
  if (algorithm.pss) {
    const options = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };
    return verify(algorithm.hash, signed, options, signature);
  }
  return verify(algorithm.hash, signed, key, signature);
}

// -- key files (read at startup; errors are plain Errors that stop the server) ---------------------

/** Entra ID bearer tokens, enabled by a JWKS and/or PEM key file (the --oauth-* flags). */
export interface OAuthConfig {
  readonly jwksFile: string | undefined;
  readonly pemFile: string | undefined;
  /** Accepted `iss` values; undefined = any. */
  readonly issuers: readonly string[] | undefined;
  /** Accepted `aud` values; undefined = the storage audiences and the account-scoped service URL. */
  readonly audiences: readonly string[] | undefined;
  /** `--oauth basic`: tokens' signatures are not checked (BearerConfig.unsigned). */
  readonly unsigned?: boolean;
}

/** The verifier the --oauth-* flags describe. */
export function createBearerVerifier(oauth: OAuthConfig): BearerVerifier {
  const read = (file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const keys = [
    ...(oauth.jwksFile === undefined ? [] : loadJwks(read(oauth.jwksFile), oauth.jwksFile)),
    ...(oauth.pemFile === undefined ? [] : loadPemKeys(read(oauth.pemFile), oauth.pemFile)),
  ];
  return new BearerVerifier({
    keys,
    issuers: oauth.issuers,
    audiences: oauth.audiences ?? defaultAudiences,
    accountAudiences: oauth.audiences === undefined,
    unsigned: oauth.unsigned === true,
  });
}

/** The signing keys of a JWKS document ({"keys":[…]}); keys for other uses are skipped. */
export function loadJwks(text: string, source: string): VerificationKey[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Error(`${source} is not JSON`);
  }
  const entries = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(entries)) throw new Error(`${source} is not a JWKS document: it has no "keys" array`);
  const keys: VerificationKey[] = [];
  entries.forEach((entry: Record<string, unknown>, index) => {
    if (entry === null || typeof entry !== 'object' || (entry['use'] !== undefined && entry['use'] !== 'sig')) return;
    const where = `${source} key ${index}`;
    if (entry['kty'] !== 'RSA' && entry['kty'] !== 'EC') {
      throw new Error(`${where}: only RSA and EC keys are supported, not kty ${JSON.stringify(entry['kty'])}`);
    }
    const key = jwkPublicKey(entry, where);
    const kid = typeof entry['kid'] === 'string' ? entry['kid'] : undefined;
    const alg = typeof entry['alg'] === 'string' ? entry['alg'] : undefined;
    if (alg !== undefined && !Object.hasOwn(algorithms, alg)) {
      throw new Error(`${where}: algorithm ${alg} is not supported`);
    }
    keys.push({ ...(kid !== undefined && { kid }), ...(alg !== undefined && { alg }), key: checkedKey(key, where) });
  });
  if (keys.length === 0) throw new Error(`${source} holds no signing key`);
  return keys;
}

/** Every PEM block of a file: public keys, certificates (their public key) or private keys (theirs). */
export function loadPemKeys(text: string, source: string): VerificationKey[] {
  const blocks = text.match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`${source} holds no PEM block`);
  return blocks.map((block, index) => {
    const where = `${source} block ${index}`;
    try {
      const certificate = block.startsWith('-----BEGIN CERTIFICATE-----');
      const key = certificate ? new X509Certificate(block).publicKey : createPublicKey(block);
      return { key: checkedKey(key, where) };
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}`);
    }
  });
}

function jwkPublicKey(entry: Record<string, unknown>, where: string): KeyObject {
  try {
    const x5c = entry['x5c'];
    if (entry['n'] === undefined && entry['x'] === undefined && Array.isArray(x5c) && typeof x5c[0] === 'string') {
      return new X509Certificate(Buffer.from(x5c[0], 'base64')).publicKey;
    }
    const { d: _private, ...publicPart } = entry;
    return createPublicKey({ key: publicPart as JsonWebKey, format: 'jwk' });
  } catch (error) {
    throw new Error(`${where}: ${(error as Error).message}`);
  }
}

function checkedKey(key: KeyObject, where: string): KeyObject {
  const type = key.asymmetricKeyType;
  if (type === 'rsa' || type === 'rsa-pss') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < bearerRsaModulusBitsMin) {
      throw new Error(`${where}: RSA keys need at least ${bearerRsaModulusBitsMin} bits, not ${bits}`);
    }
    return key;
  }
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (type === 'ec' && Object.values(algorithms).some((algorithm) => algorithm.curve === curve)) return key;
  throw new Error(`${where}: only RSA and P-256/P-384/P-521 EC keys are supported, not ${type} ${curve ?? ''}`.trim());
}
