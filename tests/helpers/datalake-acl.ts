// Bearer tokens for the Data Lake ACL tests: users (oid) and their groups (the `groups` claim),
// signed by one key that a test server trusts through --oauth-jwks.
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });

export const alice = 'a11ce000-0000-4000-8000-000000000001';
export const bob = 'b0b00000-0000-4000-8000-000000000002';
export const team = '7ea70000-0000-4000-8000-00000000000a';
/** How long a minted token lives. */
export const tokenLifetimeSeconds = 600;

/** A JWT for `oid` (a member of `groups`), signed by the key writeTrustedKeys writes. */
export function mintToken(oid: string, groups: readonly string[] = []): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { aud: 'https://storage.azure.com', iss: 'https://issuer.example/', nbf: now - 60 };
  const input = `${part({ alg: 'RS256', kid: 'k' })}.${part({ ...claims, exp: now + tokenLifetimeSeconds, oid, groups })}`;
  return `${input}.${sign('sha256', Buffer.from(input), signing.privateKey).toString('base64url')}`;
}

/** The JWKS file the server takes (--oauth-jwks): its path. */
export function writeTrustedKeys(dir: string): string {
  const file = join(dir, 'keys.jwks');
  writeFileSync(file, JSON.stringify({ keys: [{ ...signing.publicKey.export({ format: 'jwk' }), kid: 'k' }] }));
  return file;
}
