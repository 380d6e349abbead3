// The Table service's system tests that matter for a storage engine (tests/system/table/), run
// again with every server on PostgreSQL (CERULEAN_TEST_ENGINE=postgres, tests/helpers/server.ts):
// entities, tables, batches, queries, limits, EDM round trips, ACL and service properties, kill -9
// and restart durability.
// They run in a child `node --test`, one file at a time, so that they keep their own names.
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { postgresUnavailable } from '../../helpers/postgres.js';

const files = [
  'entities',
  'tables',
  'batch',
  'query',
  'query-semantics',
  'query-plan',
  'limits',
  'edm',
  'acl',
  'service-properties',
  'durability',
  'crash',
];

test('engine-relevant system tests on PostgreSQL', { skip: postgresUnavailable() }, async (t) => {
  const paths = files.map((name) => fileURLToPath(new URL(`../table/${name}.test.js`, import.meta.url)));
  // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead of running.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...paths], {
    env: { ...env, CERULEAN_TEST_ENGINE: 'postgres' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  const count = (name: string) => Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? 0);
  t.diagnostic(`${count('pass')} of ${count('tests')} passed on PostgreSQL`);
  if (code !== 0 || count('tests') === 0 || count('pass') !== count('tests')) {
    throw new Error(`system tests on PostgreSQL failed (exit ${code}):\n${output.slice(-20_000)}`);
  }
});
