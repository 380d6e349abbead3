#!/usr/bin/env node
// `npm test`: runs the tidy check, compiles (server, tests and the explorer's browser modules),
// starts a throwaway PostgreSQL cluster when Debian's server binaries are here (so the PostgreSQL
// engine's tests run too), runs every test, and stops the cluster.
//
// The tests find the database through one variable, CERULEAN_TEST_DATABASE_URL; a URL the caller
// already set is used as it is and no cluster is started. Without binaries the PostgreSQL tests
// skip, loudly, unless CI is set: then this fails. Extra arguments replace `dist/tests/`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { postgresBin, startCluster } from './pg-cluster.mjs';

const urlVariable = 'CERULEAN_TEST_DATABASE_URL';

// The whole suite starts with the tidy check (docs/testing.md#the-tidy-check); a run of named
// test files skips it.
if (process.argv.length <= 2) {
  const tidy = spawnSync(process.execPath, ['scripts/tidy.mjs'], { stdio: 'inherit' });
  if (tidy.status !== 0) process.exit(tidy.status ?? 1);
}

// tsc never deletes what a removed or moved source compiled to: such a stale test would run again
// from its old place, against the code as it is now. Outputs whose source is gone are removed first.
removeStaleOutputs('dist', ['src', 'tests', 'bench']);

for (const project of ['tsconfig.json', 'explorer/tsconfig.json']) {
  const compile = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', project], { stdio: 'inherit' });
  if (compile.status !== 0) process.exit(compile.status ?? 1);
}

const env = { ...process.env };
let cluster;
if (env[urlVariable] === undefined) {
  const bin = postgresBin();
  if (bin === undefined) {
    const missing = 'PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb)';
    if (env.CI) {
      process.stderr.write(`\n*** ${missing} and CI is set: failing. Install the postgresql package. ***\n\n`);
      process.exit(1);
    }
    process.stderr.write(`\n*** ${missing}: the PostgreSQL engine tests will be SKIPPED. ***\n\n`);
  } else {
    cluster = await startCluster(bin);
    env[urlVariable] = cluster.url;
    process.stderr.write(`PostgreSQL test cluster at ${cluster.url}\n`);
  }
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.once(signal, () => {
    cluster?.destroy();
    process.exit(code);
  });
}
const targets = process.argv.length > 2 ? process.argv.slice(2) : ['dist/tests/'];
const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...targets], { stdio: 'inherit', env });
const [code, signal] = await new Promise((resolve) => child.once('exit', (...result) => resolve(result)));
cluster?.destroy();
process.exit(code ?? (signal ? 1 : 0));

/** Removes each `<out>/<root>/….js` (and its `.map`, `.d.ts`) whose `<root>/….ts` source no longer exists. */
function removeStaleOutputs(out, roots) {
  const walk = (dir, rel) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const relative = join(rel, entry.name);
      if (entry.isDirectory()) walk(join(dir, entry.name), relative);
      else {
        const source = relative.replace(/(\.d\.ts|\.js\.map|\.js)$/, '.ts');
        if (source !== relative && !existsSync(source)) rmSync(join(dir, entry.name));
      }
    }
  };
  for (const root of roots) walk(join(out, root), root);
}
