// The system tests that matter for a storage engine, run again with every server on PostgreSQL
// (CERULEAN_TEST_ENGINE=postgres, tests/helpers/server.ts): entities, tables, batches, queries,
// limits, EDM round trips, ACL/CORS and service properties, kill -9 and restart durability.
// They run in a child `node --test`, one file at a time, so that they keep their own names.
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { postgresUnavailable } from '../helpers/postgres.js';

const files = [
  'entities',
  'tables',
  'batch',
  'query',
  'query-semantics',
  'query-plan',
  'limits',
  'edm',
  'errors',
  'acl',
  'cors',
  'service-properties',
  'durability',
  'crash',
];

test('engine-relevant system tests on PostgreSQL', { skip: postgresUnavailable() }, async (t) => {
  const paths = files.map((name) => fileURLToPath(new URL(`./${name}.test.js`, import.meta.url)));
  const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...paths], {
    env: { ...process.env, CERULEAN_TEST_ENGINE: 'postgres' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  const summary = output.split('\n').filter((line) => /^ℹ (tests|pass|fail|duration_ms)/.test(line));
  t.diagnostic(summary.join('; '));
  if (code !== 0) throw new Error(`system tests on PostgreSQL failed (exit ${code}):\n${output.slice(-20_000)}`);
});
