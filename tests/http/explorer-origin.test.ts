// Which origins are the explorer's (src/http/explorer-origin.ts): this server's listeners on the host
// name the request used, except those serving user content (the blob port), whose pages could be
// anyone's. The whole path through a server process is tested in tests/explorer/own-origin.test.ts.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { ownOrigin, ownOrigins, servesExplorer } from '../../src/http/explorer-origin.js';

const listeners = [
  { service: 'table', port: 10002 },
  { service: 'queue', port: 10001 },
  { service: 'blob', port: 10000 },
];

function request(host: string, origin?: string, encrypted = false): IncomingMessage {
  return {
    headers: { host, ...(origin !== undefined && { origin }) },
    socket: { encrypted },
  } as unknown as IncomingMessage;
}

describe('the explorer origins', () => {
  test('table and queue listeners on the host name the request used', () => {
    assert.equal(ownOrigin(request('127.0.0.1:10001', 'http://127.0.0.1:10002'), listeners), 'http://127.0.0.1:10002');
    assert.equal(ownOrigin(request('127.0.0.1:10002', 'http://127.0.0.1:10001'), listeners), 'http://127.0.0.1:10001');
    assert.equal(ownOrigin(request('localhost:10000', 'http://LOCALHOST:10002'), listeners), 'http://LOCALHOST:10002');
    assert.equal(ownOrigin(request('[::1]:10001', 'http://[::1]:10002'), listeners), 'http://[::1]:10002');
    assert.equal(
      ownOrigin(request('127.0.0.1:10001', 'https://127.0.0.1:10002', true), listeners),
      'https://127.0.0.1:10002',
    );
  });

  test('not the blob listener, whose pages are user content; the explorer is not served there', () => {
    assert.equal(ownOrigin(request('127.0.0.1:10002', 'http://127.0.0.1:10000'), listeners), undefined);
    assert.equal(servesExplorer('blob'), false);
    assert.equal(servesExplorer('table'), true);
    assert.equal(servesExplorer('queue'), true);
  });

  test('nothing else: other host names, schemes, ports, opaque and malformed origins, odd Host headers', () => {
    const foreign: [string, string | undefined][] = [
      ['127.0.0.1:10001', 'http://localhost:10002'],
      ['127.0.0.1:10001', 'https://127.0.0.1:10002'],
      ['127.0.0.1:10001', 'http://127.0.0.1:3000'],
      ['127.0.0.1:10001', 'null'],
      ['127.0.0.1:10001', 'not a url'],
      ['127.0.0.1:10001', undefined],
      ['evil;x:10001', 'http://evil;x:10002'],
    ];
    for (const [host, origin] of foreign)
      assert.equal(ownOrigin(request(host, origin), listeners), undefined, `${host} ${origin}`);
  });

  test('the page may connect to every listener, blob included', () => {
    assert.deepEqual(ownOrigins(request('127.0.0.1:10002'), listeners), [
      'http://127.0.0.1:10002',
      'http://127.0.0.1:10001',
      'http://127.0.0.1:10000',
    ]);
    assert.deepEqual(ownOrigins(request('a b'), listeners), []);
  });
});
