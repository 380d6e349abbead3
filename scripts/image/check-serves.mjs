// The production install the image is made of, checked before it goes in: `bin/cerulean.js` of the staged
// tree (npm ci --omit=dev: no TypeScript, no test SDKs) starts and answers over HTTP.
import assert from 'node:assert/strict';
import { startNodeProcess } from '../server-process.mjs';

/** Starts the staged server in memory on free ports, asks its Table listener for /_metrics, stops it. */
export async function checkServes(app) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('CERULEAN_')) env[name] = value;
  const prefix = 'Azurite Table service is successfully listening at ';
  const server = await startNodeProcess({
    args: [`${app}/bin/cerulean.js`, '--in-memory', '--port', '0', '--queue-port', '0', '--blob-port', '0'],
    cwd: app,
    env,
    name: 'the production install',
    ready: (line) => (line.startsWith(prefix) ? line.slice(prefix.length).trim() : undefined),
  });
  try {
    const response = await fetch(`${server.ready}/_metrics`);
    assert.equal(response.status, 200, `GET /_metrics of the production install: ${response.status}`);
    await response.arrayBuffer();
  } finally {
    assert.equal(await server.stop(), 0, 'the production install stops cleanly on SIGTERM');
  }
}
