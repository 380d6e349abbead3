// The README's words on connection strings, checked: its full development connection string (ports
// moved to the test server's) is the one the server prints, and Debian's Python SDKs reach all three
// services with it; and Python's Blob and Queue SDKs of the versions the README names refuse
// `UseDevelopmentStorage=true`, as it says, while azure-data-tables takes it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { repoRoot, startServer, type RunningServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 120_000;

/** The README's full string: the development account on the default ports. */
function readmeConnectionString(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const found = /^\s*(DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;\S*:10000\S*)$/m.exec(readme);
  assert.ok(found, 'the README writes out the development connection string on a line of its own');
  return found[1]!;
}

const fields = (text: string): Map<string, string> =>
  new Map(
    text
      .split(';')
      .filter((part) => part !== '')
      .map((part) => [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)]),
  );

const pythonScript = `
import json, sys
from azure.storage.blob import BlobServiceClient, __version__ as blob_version
from azure.storage.queue import QueueServiceClient, __version__ as queue_version
from azure.data.tables import TableServiceClient
full = sys.argv[1]
def refusal(make):
    try:
        make()
        return None
    except ValueError as error:
        return str(error)
blobs = BlobServiceClient.from_connection_string(full)
blobs.create_container("readme")
queues = QueueServiceClient.from_connection_string(full)
queues.create_queue("readme")
tables = TableServiceClient.from_connection_string(full)
tables.create_table("readme")
print(json.dumps({
    "versions": [blob_version, queue_version],
    "containers": [c.name for c in blobs.list_containers()],
    "queues": [q.name for q in queues.list_queues()],
    "tables": [t.name for t in tables.list_tables()],
    "dev_blob": refusal(lambda: BlobServiceClient.from_connection_string("UseDevelopmentStorage=true")),
    "dev_queue": refusal(lambda: QueueServiceClient.from_connection_string("UseDevelopmentStorage=true")),
    "dev_table": refusal(lambda: TableServiceClient.from_connection_string("UseDevelopmentStorage=true")),
}))
`;

describe("the README's connection strings", () => {
  let server: RunningServer;
  let full: string;
  before(async () => {
    server = await startServer();
    const port = (url: string | undefined): string => new URL(url!).port;
    full = readmeConnectionString()
      .replace(':10000/', `:${port(server.blobUrl)}/`)
      .replace(':10001/', `:${port(server.queueUrl)}/`)
      .replace(':10002/', `:${port(server.url)}/`);
  });
  after(async () => {
    await server?.stop();
  });

  test('the full string is the one the server prints', () => {
    assert.deepEqual(fields(full), fields(server.connectionString));
  });

  test("Debian's Python SDKs reach every service with it; Blob and Queue refuse UseDevelopmentStorage=true", async () => {
    const { stdout } = await run('/usr/bin/python3', ['-c', pythonScript, full], { timeout: commandTimeoutMs });
    const out = JSON.parse(stdout);
    assert.deepEqual([out.containers, out.queues, out.tables], [['readme'], ['readme'], ['readme']]);
    assert.equal(out.dev_table, null, 'azure-data-tables takes UseDevelopmentStorage=true');
    // The README names the versions whose refusal it reports: a newer SDK may take the short form,
    // and then the README says too much.
    assert.match(out.versions[0], /^12\.15\./, 'azure-storage-blob 12.15, as the README says');
    assert.match(out.versions[1], /^12\.6\./, 'azure-storage-queue 12.6, as the README says');
    assert.match(out.dev_blob, /Connection string missing required connection details/);
    assert.match(out.dev_queue, /Connection string missing required connection details/);
  });
});
