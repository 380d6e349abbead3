// PACKAGING TEST (slow: it runs npm). The package as its users install it: `npm pack`, then
// `npm install -g` of the tarball into an empty prefix gives a `cerulean` that serves; and the packed
// tree installed for production (`npm ci --omit=dev`, no TypeScript, no test SDKs) starts too.
// npm answers from its cache where it can (--prefer-offline); the first run on a machine fetches.
// The tarball is packed from the dist/ the test run compiled (--ignore-scripts: no second compile).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BlobServiceClient } from '@azure/storage-blob';
import { TableServiceClient } from '@azure/data-tables';
import { ceruleanBanner, makeTempDir, removeDir, repoRoot, startNodeProcess } from '../../helpers/server.js';

/** npm with a cold cache fetches ~90 packages and may compile better-sqlite3: minutes on a busy machine. */
const npmTimeoutMs = 900_000;
const npmFlags = ['--prefer-offline', '--no-audit', '--no-fund'];

function npm(args: readonly string[], cwd: string): void {
  const run = spawnSync('npm', [...args], { cwd, encoding: 'utf8', timeout: npmTimeoutMs });
  assert.equal(run.status, 0, `npm ${args.join(' ')}\n${run.stdout}\n${run.stderr}`);
}

/** Starts `script` (a `cerulean` as installed), checks the Table and Blob services answer, stops it. */
async function servesFrom(script: string, cwd: string): Promise<void> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('CERULEAN_')) env[name] = value;
  const args = [script, '--in-memory', '--port', '0', '--queue-port', '0', '--blob-port', '0'];
  const server = await startNodeProcess({ args, cwd, env, ready: ceruleanBanner(), name: script });
  try {
    const options = { allowInsecureConnection: true };
    const tables = TableServiceClient.fromConnectionString(server.ready.connectionString, options);
    await tables.createTable('packaged');
    const blobs = BlobServiceClient.fromConnectionString(server.ready.connectionString);
    await blobs.createContainer('packaged');
    const names = [];
    for await (const container of blobs.listContainers()) names.push(container.name);
    assert.deepEqual(names, ['packaged']);
  } finally {
    assert.equal(await server.stop(), 0);
  }
}

describe('the npm package', () => {
  let dir = '';
  let tarball = '';
  before(() => {
    dir = makeTempDir('cerulean-package-');
    npm(['pack', '--ignore-scripts', '--pack-destination', dir], repoRoot);
    tarball = join(dir, 'cerulean-0.1.0.tgz');
    assert.ok(existsSync(tarball));
  });
  after(() => removeDir(dir));

  test('npm install -g of the tarball into an empty prefix gives a cerulean that serves', async () => {
    const prefix = join(dir, 'prefix');
    // A global install runs no install scripts npm was not told to allow: better-sqlite3 compiles its addon.
    npm(['install', '-g', '--prefix', prefix, '--allow-scripts=better-sqlite3', ...npmFlags, tarball], dir);
    await servesFrom(join(prefix, 'bin', 'cerulean'), dir);
  });

  test('the packed tree installed for production (npm ci --omit=dev) starts', async () => {
    const tree = join(dir, 'production');
    mkdirSync(tree);
    const unpack = spawnSync('tar', ['xzf', tarball, '-C', tree, '--strip-components=1']);
    assert.equal(unpack.status, 0, String(unpack.stderr));
    copyFileSync(join(repoRoot, 'package-lock.json'), join(tree, 'package-lock.json'));
    npm(['ci', '--omit=dev', ...npmFlags], tree); // package.json's allowScripts lets better-sqlite3 build
    assert.ok(!existsSync(join(tree, 'node_modules', 'typescript')), 'a production install has no TypeScript');
    await servesFrom(join(tree, 'bin', 'cerulean.js'), tree);
  });
});
