// The Blob/Queue Shared Key flavour (http/auth.ts) against a string-to-sign built from the docs
// in tests/helpers/queue.ts: the empty Content-Length of a body of 0 bytes from version
// 2015-02-21, query parameters on their own lines (names lower-case and sorted, repeated values
// joined, values percent-decoded: a pop receipt's %2B signs as '+'), and Shared Key Lite.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { blobQueueSharedKey, verifySharedKey, type AuthRequest } from '../../src/http/auth.js';
import { hmacBase64 } from '../helpers/http.js';
import { queueStringToSign } from '../helpers/queue.js';
import { devAccount, devKey } from '../helpers/server.js';

const account = { name: devAccount, keys: [Buffer.from(devKey, 'base64')] };

/** A request signed by the docs' rules, as the server sees it (node's lower-case headers). */
function signed(
  method: string,
  target: string,
  headers: Record<string, string>,
  scheme: 'SharedKey' | 'SharedKeyLite' = 'SharedKey',
  signedHeaders = headers,
): AuthRequest {
  const signature = hmacBase64(devKey, queueStringToSign(scheme, method, target, signedHeaders));
  const q = target.indexOf('?');
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    method,
    rawPath: q < 0 ? target : target.slice(0, q),
    rawQuery: q < 0 ? '' : target.slice(q + 1),
    query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)),
    headers: { ...lower, authorization: `${scheme} ${devAccount}:${signature}` },
    account,
    pathStyle: true,
    now: Date.now(),
  };
}

const base = (version: string) => ({ 'x-ms-date': new Date().toUTCString(), 'x-ms-version': version });
const failsAuthentication = (error: unknown) => error instanceof StorageError && error.code === 'AuthenticationFailed';

describe('the Blob/Queue Shared Key flavour', () => {
  test('every query parameter on its own line, decoded; x-ms-* headers canonicalized', () => {
    const target = `/${devAccount}/q1/messages/id1?visibilitytimeout=0&popreceipt=AgAAAA%2Bx%2F%3D&Timeout=30`;
    const headers = { ...base('2021-02-12'), 'x-ms-client-request-id': 'abc', 'Content-Type': 'application/xml' };
    verifySharedKey(signed('PUT', target, headers), blobQueueSharedKey);
  });

  test('Content-Length 0 signs as empty from 2015-02-21, as 0 before', () => {
    const modern = { ...base('2021-02-12'), 'Content-Length': '0' };
    verifySharedKey(signed('DELETE', `/${devAccount}/q1/messages`, modern), blobQueueSharedKey);
    const old = { ...base('2009-09-19'), 'Content-Length': '0' };
    assert.throws(
      () => verifySharedKey(signed('DELETE', `/${devAccount}/q1`, old), blobQueueSharedKey),
      failsAuthentication,
    );
  });

  test('Shared Key Lite: comp only', () => {
    const headers = base('2021-02-12');
    verifySharedKey(signed('GET', `/${devAccount}/q1?comp=metadata`, headers, 'SharedKeyLite'), blobQueueSharedKey);
  });

  test('a header the signature did not cover fails', () => {
    const headers = { ...base('2021-02-12'), 'x-ms-meta-a': '1' };
    const request = signed('PUT', `/${devAccount}/q1?comp=metadata`, headers, 'SharedKey', base('2021-02-12'));
    assert.throws(() => verifySharedKey(request, blobQueueSharedKey), failsAuthentication);
  });
});
