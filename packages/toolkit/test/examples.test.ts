// Every example runs green against a fresh Cerulean server (each in its own process, as a user
// runs it). `npm run examples -- --azurite` runs them against Azurite.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { exampleFiles, runExample } from '../examples/run-all.js';
import { startServer, type TestServer } from './servers.js';

let server: TestServer;
before(async () => {
  server = await startServer('cerulean');
});
after(async () => {
  await server.stop();
});

test('there is an example for every pattern', () => {
  assert.ok(exampleFiles().length >= 13, exampleFiles().join(', '));
});

for (const name of exampleFiles()) {
  test(`example ${name} passes against Cerulean`, async () => {
    const result = await runExample(name, server.connectionString);
    assert.equal(result.exitCode, 0, result.output);
    assert.ok(/^ok {3}/m.test(result.output) && !/^FAIL/m.test(result.output), result.output);
  });
}
