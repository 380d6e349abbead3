import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { localTarget } from '../../src/http/local-url.js';

const accounts = new Set(['devstoreaccount1', 'otheracct']);
const isAccount = (name: string) => accounts.has(name);
const locate = (url: string, host = '127.0.0.1:24010', https = false) =>
  localTarget(new URL(url), host, https, isAccount);

describe('localTarget: is a copy source this server, and which account does it name', () => {
  test('path-style on the request host and port names the account and the path after it', () => {
    assert.deepEqual(locate('http://127.0.0.1:24010/otheracct/c/a/b.txt?sv=1&sig=x'), {
      account: 'otheracct',
      known: true,
      resourcePath: 'c/a/b.txt',
      rawQuery: 'sv=1&sig=x',
    });
    assert.equal(locate('http://127.0.0.1:24010/nosuch/c/b')?.known, false);
  });

  test('loopback names are one server when the request came over one; the port must match', () => {
    assert.equal(locate('http://localhost:24010/otheracct/c/b')?.account, 'otheracct');
    assert.equal(locate('http://[::1]:24010/otheracct/c/b')?.account, 'otheracct');
    assert.equal(locate('http://127.0.0.1:24011/otheracct/c/b'), undefined);
    assert.equal(locate('http://127.0.0.1/otheracct/c/b'), undefined);
    assert.equal(locate('http://example.com:24010/otheracct/c/b'), undefined);
    assert.equal(locate('http://localhost:24010/otheracct/c/b', 'storage.example:24010'), undefined);
  });

  test('host-style: an account label before the same host name, or a loopback name', () => {
    const hostStyle = locate('http://otheracct.blob.example:8080/c/b', 'devstoreaccount1.blob.example:8080');
    assert.deepEqual(hostStyle, { account: 'otheracct', known: true, resourcePath: 'c/b', rawQuery: '' });
    assert.equal(locate('http://otheracct.blob.localhost:24010/c/b')?.resourcePath, 'c/b');
    assert.equal(locate('http://otheracct.blob.elsewhere:8080/c/b', 'devstoreaccount1.blob.example:8080'), undefined);
  });

  test('default ports follow the scheme; other schemes are never local', () => {
    assert.equal(locate('https://localhost/otheracct/c/b', 'localhost', true)?.account, 'otheracct');
    assert.equal(locate('http://localhost/otheracct/c/b', 'localhost', true), undefined);
    assert.equal(locate('ftp://127.0.0.1:24010/otheracct/c/b'), undefined);
  });
});
