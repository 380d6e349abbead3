// The explorer's files at /_explorer/ (docs/explorer.md), over raw HTTP: security headers, content types,
// no way out of the asset table, Azure-style 404s, account names without keys, and when it is on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { assertError, send, type RawResponse } from '../helpers/http.js';
import { devKey, startServer, type RunningServer } from '../helpers/server.js';

const secondKey = Buffer.from('second account key, 32 bytes....').toString('base64');

describe('explorer assets', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ inMemory: true, env: { AZURITE_ACCOUNTS: `second1:${secondKey}` } });
  });
  after(() => server.stop());
  const get = (path: string, method = 'GET'): Promise<RawResponse> => send(server.port, { method, path, auth: 'none' });

  test('npm start prints the explorer address', () => {
    assert.match(
      server.output().stdout,
      new RegExp(`^Explorer: http://127\\.0\\.0\\.1:${server.port}/_explorer/$`, 'm'),
    );
  });

  test('the page, its script and style carry their content types, a strict CSP and nosniff', async () => {
    const cases = [
      ['/_explorer/', 'text/html; charset=utf-8', '<script type="module" src="app.js">'],
      ['/_explorer/index.html', 'text/html; charset=utf-8', '<title>Cerulean explorer</title>'],
      ['/_explorer/app.js', 'text/javascript; charset=utf-8', 'import'],
      ['/_explorer/edm.js', 'text/javascript; charset=utf-8', 'Edm.Int64'],
      ['/_explorer/style.css', 'text/css; charset=utf-8', 'prefers-color-scheme'],
    ] as const;
    for (const [path, type, sample] of cases) {
      const response = await get(path);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers['content-type'], type, path);
      assert.ok(response.text.includes(sample), `${path} holds ${sample}`);
      assert.equal(response.headers['x-content-type-options'], 'nosniff', path);
      const csp = String(response.headers['content-security-policy']);
      assert.match(csp, /default-src 'self'/, path);
      assert.match(csp, /script-src 'self'(;|$)/, `${path}: no 'unsafe-inline' or other sources`);
      assert.match(csp, /frame-ancestors 'none'/, path);
      assert.equal(response.headers['x-frame-options'], 'DENY', path);
    }
    const html = (await get('/_explorer/')).text;
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the page');
    assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
    assert.doesNotMatch(html, /https?:\/\//, 'nothing loaded from elsewhere');
  });

  test('/_explorer redirects to /_explorer/', async () => {
    const response = await get('/_explorer');
    assert.equal(response.status, 301);
    assert.equal(response.headers.location, '/_explorer/');
  });

  test('unknown assets and escapes from the asset folder are 404 with an Azure error body', async () => {
    const paths = [
      '/_explorer/nope.js',
      '/_explorer/../package.json',
      '/_explorer/..%2Fpackage.json',
      '/_explorer/%2e%2e/%2e%2e/package.json',
      '/_explorer/%2e%2e%2f%2e%2e%2fsrc%2fmain.ts',
      '/_explorer/./index.html/../../bin/cerulean.js',
      '/_explorer//etc/passwd',
      '/_explorer/tsconfig.json',
      '/_explorer/app.js.map',
      '/_explorer/app.ts',
    ];
    for (const path of paths) {
      const response = await get(path);
      assert.equal(response.status, 404, path);
      assert.equal(response.headers['x-ms-error-code'], 'ResourceNotFound', path);
      assert.equal(response.json()['odata.error'].code, 'ResourceNotFound', path);
      assert.doesNotMatch(response.text, /"name"\s*:\s*"cerulean"|import /, `${path} leaks no file`);
    }
  });

  test('only GET and HEAD', async () => {
    assert.equal((await get('/_explorer/', 'HEAD')).status, 200);
    const post = await send(server.port, { method: 'POST', path: '/_explorer/', auth: 'none', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers['x-ms-error-code'], 'MethodNotAllowed');
  });

  test('accounts.json names every account and holds no key', async () => {
    const response = await get('/_explorer/accounts.json');
    assert.equal(response.status, 200);
    assert.deepEqual(new Set(response.json().accounts), new Set(['second1', 'devstoreaccount1']));
    assert.ok(!response.text.includes(secondKey) && !response.text.includes(devKey));
  });

  test('the REST API beside it is unchanged', async () => {
    const response = await send(server.port, { method: 'GET', path: '/devstoreaccount1/Tables' });
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-security-policy'], undefined);
  });
});

describe('when the explorer is on', () => {
  const explorer = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const config = loadConfig(argv, env);
    assert.notEqual(config, 'help');
    return config === 'help' ? undefined : config.explorer;
  };

  test('on by default for loopback addresses only', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', 'localhost'])
      assert.equal(explorer(['--host', host]), true, host);
    assert.equal(explorer([]), true, 'the default host');
    for (const host of ['0.0.0.0', '192.168.1.5', '::', 'example.com'])
      assert.equal(explorer(['--host', host]), false, host);
  });

  test('--explorer or CERULEAN_EXPLORER=1 turns it on anywhere; CERULEAN_EXPLORER=0 turns it off', () => {
    assert.equal(explorer(['--host', '0.0.0.0', '--explorer']), true);
    assert.equal(explorer(['--host', '0.0.0.0'], { CERULEAN_EXPLORER: '1' }), true);
    assert.equal(explorer([], { CERULEAN_EXPLORER: '0' }), false);
  });

  test('a server without it answers /_explorer/ as any unknown path of its own (404 ResourceNotFound), and prints no address', async () => {
    const server = await startServer({ inMemory: true, env: { CERULEAN_EXPLORER: '0' } });
    try {
      assert.doesNotMatch(server.output().stdout, /Explorer:/);
      const response = await send(server.port, { method: 'GET', path: '/_explorer/', auth: 'none' });
      assertError(response, 404, 'ResourceNotFound');
      assert.equal(response.headers['content-security-policy'], undefined);
    } finally {
      await server.stop();
    }
  });
});
