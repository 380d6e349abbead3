import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { StorageError } from '../../src/errors.js';
import {
  BearerVerifier,
  bearerChallenge,
  defaultAudiences,
  loadJwks,
  loadPemKeys,
  type VerificationKey,
} from '../../src/http/bearer.js';
import { bearerClockSkewMs } from '../../src/limits.js';

const now = Date.parse('2026-11-21T04:16:36Z');
const nowSeconds = Math.floor(now / 1000);
const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const issuer = `https://sts.windows.net/${tenant}/`;

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });

const hashOf = { '256': 'sha256', '384': 'sha384', '512': 'sha512' } as const;

function base64url(value: object | Buffer): string {
  return (Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value))).toString('base64url');
}

/** A JWS compact token signed as RFC 7515/7518 say, written independently of the verifier. */
function token(alg: string, key: KeyObject, claims: object, header: object = {}): string {
  const signingInput = `${base64url({ alg, typ: 'JWT', ...header })}.${base64url(claims)}`;
  const hash = hashOf[alg.slice(2) as keyof typeof hashOf];
  let signature: Buffer;
  if (alg.startsWith('ES')) signature = sign(hash, Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' });
  else if (alg.startsWith('PS')) {
    signature = sign(hash, Buffer.from(signingInput), {
      key,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
    });
  } else signature = sign(hash, Buffer.from(signingInput), key);
  return `${signingInput}.${base64url(signature)}`;
}

const goodClaims = {
  iss: issuer,
  aud: 'https://storage.azure.com',
  exp: nowSeconds + 3600,
  nbf: nowSeconds - 60,
  oid: 'user-1',
};

const jwks = JSON.stringify({
  keys: [
    { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1', use: 'sig' },
    { ...p256.publicKey.export({ format: 'jwk' }), kid: 'ec-1', alg: 'ES256' },
    { ...p384.publicKey.export({ format: 'jwk' }), kid: 'ec-2' },
    { ...otherRsa.publicKey.export({ format: 'jwk' }), kid: 'enc-1', use: 'enc' },
  ],
});

const jwksKeys = loadJwks(jwks, 'test.jwks');

function verifier(keys: VerificationKey[] = jwksKeys, issuers: string[] | 'any' = [issuer]): BearerVerifier {
  return new BearerVerifier({ keys, issuers: issuers === 'any' ? undefined : issuers, audiences: defaultAudiences });
}

function refused(action: () => unknown, detail: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof StorageError, String(error));
    assert.equal(error.code, 'InvalidAuthenticationInfo');
    assert.equal(error.status, 401);
    assert.match(error.authDetail ?? '', detail);
    return true;
  });
}

describe('BearerVerifier: signatures', () => {
  const cases: [string, KeyObject, object][] = [
    ['RS256', rsa.privateKey, { kid: 'rsa-1' }],
    ['RS384', rsa.privateKey, { kid: 'rsa-1' }],
    ['RS512', rsa.privateKey, {}],
    ['PS256', rsa.privateKey, { kid: 'rsa-1' }],
    ['ES256', p256.privateKey, { kid: 'ec-1' }],
    ['ES384', p384.privateKey, { kid: 'ec-2' }],
  ];
  for (const [alg, key, header] of cases) {
    test(`${alg} signed by a configured key verifies`, () => {
      assert.deepEqual(verifier().verify(token(alg, key, goodClaims, header), now), {
        subject: 'user-1',
        objectId: 'user-1',
        tenantId: undefined,
        groups: [],
      });
    });
  }

  test('a key from a PEM file (SPKI or PKCS#8 private key) verifies', () => {
    const pem = `${rsa.publicKey.export({ type: 'spki', format: 'pem' })}\n${p256.privateKey.export({ type: 'pkcs8', format: 'pem' })}`;
    const keys = loadPemKeys(pem, 'keys.pem');
    assert.equal(keys.length, 2);
    verifier(keys).verify(token('RS256', rsa.privateKey, goodClaims), now);
    verifier(keys).verify(token('ES256', p256.privateKey, goodClaims), now);
  });

  test('a signature by an unconfigured key fails', () => {
    refused(
      () => verifier().verify(token('RS256', otherRsa.privateKey, goodClaims, { kid: 'rsa-1' }), now),
      /Signature validation failed/,
    );
  });

  test('a key marked for encryption is not used', () => {
    refused(
      () => verifier().verify(token('RS256', otherRsa.privateKey, goodClaims, { kid: 'enc-1' }), now),
      /Signature/,
    );
  });

  test('a key bound to ES256 is not used for ES384, nor a P-256 key for ES384', () => {
    refused(() => verifier().verify(token('ES384', p256.privateKey, goodClaims, { kid: 'ec-1' }), now), /Signature/);
  });

  test('a tampered payload or signature fails', () => {
    const good = token('RS256', rsa.privateKey, goodClaims);
    const [header, , signature] = good.split('.');
    const forged = `${header}.${base64url({ ...goodClaims, oid: 'admin' })}.${signature}`;
    refused(() => verifier().verify(forged, now), /Signature validation failed/);
    const flipped = good.slice(0, -2) + (good.endsWith('AA') ? 'BA' : 'AA');
    refused(() => verifier().verify(flipped, now), /Signature/);
  });

  test('alg none and HS256 keyed with the public key (algorithm confusion) fail', () => {
    const unsigned = `${base64url({ alg: 'none' })}.${base64url(goodClaims)}.`;
    refused(() => verifier().verify(unsigned, now), /not a JSON Web Token|not supported/);
    const input = `${base64url({ alg: 'HS256' })}.${base64url(goodClaims)}`;
    const mac = createHmac('sha256', rsa.publicKey.export({ type: 'spki', format: 'pem' }))
      .update(input)
      .digest();
    refused(() => verifier().verify(`${input}.${base64url(mac)}`, now), /not supported/);
  });

  test('an ES256 signature in DER form (not r||s) fails', () => {
    const input = `${base64url({ alg: 'ES256', kid: 'ec-1' })}.${base64url(goodClaims)}`;
    const der = sign('sha256', Buffer.from(input), p256.privateKey);
    refused(() => verifier().verify(`${input}.${base64url(der)}`, now), /Signature/);
  });

  test('a critical header is refused', () => {
    refused(() => verifier().verify(token('RS256', rsa.privateKey, goodClaims, { crit: ['exp'] }), now), /critical/);
  });

  test('malformed tokens', () => {
    for (const text of [
      '',
      'abc',
      'a.b',
      'a.b.c.d',
      'a b.c.d',
      `${base64url(['x'])}.${base64url(goodClaims)}.AA`,
      '!!.??.**',
    ]) {
      refused(() => verifier().verify(text, now), /JSON Web Token|segment|base64url/);
    }
  });
});

describe('BearerVerifier: claims', () => {
  const withClaims = (claims: object) => token('RS256', rsa.privateKey, claims);

  test('expired beyond the skew fails; within the skew passes', () => {
    verifier().verify(withClaims({ ...goodClaims, exp: nowSeconds - 60 }), now);
    refused(
      () => verifier().verify(withClaims({ ...goodClaims, exp: nowSeconds - bearerClockSkewMs / 1000 }), now),
      /expired/,
    );
  });

  test('not yet valid beyond the skew fails', () => {
    refused(() => verifier().verify(withClaims({ ...goodClaims, nbf: nowSeconds + 3600 }), now), /not yet valid/);
  });

  test('exp is required and must be a number', () => {
    const { exp: _exp, ...noExpiry } = goodClaims;
    refused(() => verifier().verify(withClaims(noExpiry), now), /exp/);
    refused(() => verifier().verify(withClaims({ ...goodClaims, exp: String(nowSeconds + 60) }), now), /exp/);
  });

  test('issuer must be configured when issuers are given; any issuer otherwise', () => {
    refused(() => verifier().verify(withClaims({ ...goodClaims, iss: 'https://evil.example/' }), now), /Issuer/);
    verifier(jwksKeys, 'any').verify(withClaims({ ...goodClaims, iss: 'https://evil.example/' }), now);
  });

  test('audience: the storage audience with or without slash, also inside an array; others fail', () => {
    verifier().verify(withClaims({ ...goodClaims, aud: 'https://storage.azure.com/' }), now);
    verifier().verify(withClaims({ ...goodClaims, aud: ['https://other', 'https://storage.azure.com'] }), now);
    refused(() => verifier().verify(withClaims({ ...goodClaims, aud: 'https://cosmos.azure.com' }), now), /Audience/);
    refused(() => verifier().verify(withClaims({ ...goodClaims, aud: undefined }), now), /Audience/);
  });
});

describe('key files', () => {
  test('short RSA keys, symmetric keys and other curves are refused at load', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 });
    assert.throws(() => loadJwks(JSON.stringify({ keys: [small.publicKey.export({ format: 'jwk' })] }), 'k'), /2048/);
    assert.throws(() => loadJwks(JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }), 'k'), /only RSA and EC/);
    const ed = generateKeyPairSync('ed25519');
    assert.throws(
      () => loadPemKeys(ed.publicKey.export({ type: 'spki', format: 'pem' }) as string, 'k'),
      /only RSA and/,
    );
  });

  test('broken files are refused with their name', () => {
    assert.throws(() => loadJwks('{', 'a.jwks'), /a.jwks is not JSON/);
    assert.throws(() => loadJwks('{"keys":{}}', 'a.jwks'), /no "keys" array/);
    assert.throws(
      () => loadJwks(JSON.stringify({ keys: [{ ...rsa.publicKey.export({ format: 'jwk' }), use: 'enc' }] }), 'a.jwks'),
      /no signing key/,
    );
    assert.throws(() => loadPemKeys('not pem', 'b.pem'), /b.pem holds no PEM block/);
    assert.throws(
      () => loadPemKeys('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----', 'b.pem'),
      /b.pem block 0/,
    );
  });

  test('the verifier needs a key', () => {
    assert.throws(
      () => new BearerVerifier({ keys: [], issuers: undefined, audiences: defaultAudiences }),
      /at least one/,
    );
  });
});

describe('challenge', () => {
  test('names the tenant of a GUID issuer, else common', () => {
    assert.equal(
      bearerChallenge([issuer]),
      `Bearer authorization_uri=https://login.microsoftonline.com/${tenant}/oauth2/authorize resource_id=https://storage.azure.com`,
    );
    assert.match(bearerChallenge(undefined), /microsoftonline\.com\/common\/oauth2/);
  });
});
