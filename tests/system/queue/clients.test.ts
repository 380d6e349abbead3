// The Queue service through the other official clients a user has: Debian's Python SDK
// (azure.storage.queue, run with /usr/bin/python3) and the Azure CLI (`az storage queue …`,
// `az storage message …`), both given only the connection string.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { queueConnectionString, uniqueQueueName } from '../../helpers/queue.js';
import { makeTempDir, removeDir, startServer, type RunningServer } from '../../helpers/server.js';

const run = promisify(execFile);
const commandTimeoutMs = 60_000;

let server: RunningServer;
before(async () => {
  server = await startServer({});
});
after(async () => {
  await server?.stop();
});

const pythonScript = `
import json, sys
from azure.storage.queue import QueueServiceClient
from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
service = QueueServiceClient.from_connection_string(sys.argv[1])
name = sys.argv[2]
queue = service.create_queue(name, metadata={"origin": "python"})
out = {}
try:
    queue.create_queue(metadata={"origin": "other"})
except ResourceExistsError as error:
    out["conflict"] = error.error_code
queue.send_message("hello from python")
queue.send_message("second", visibility_timeout=60)
out["count"] = queue.get_queue_properties().approximate_message_count
out["peek"] = [m.content for m in queue.peek_messages(max_messages=5)]
received = list(queue.receive_messages(messages_per_page=5, visibility_timeout=30))
out["received"] = [(m.content, m.dequeue_count) for m in received]
updated = queue.update_message(received[0], content="updated", visibility_timeout=0)
out["updated"] = updated.pop_receipt != received[0].pop_receipt
again = next(iter(queue.receive_messages()))
out["again"] = again.content
queue.delete_message(again.id, again.pop_receipt)
try:
    queue.delete_message(again.id, again.pop_receipt)
except ResourceNotFoundError as error:
    out["deleted_twice"] = error.error_code
out["listed"] = [q.name for q in service.list_queues(name_starts_with=name, include_metadata=True)]
queue.clear_messages()
service.delete_queue(name)
print(json.dumps(out))
`;

describe("Debian's Python SDK", () => {
  test('create, conflict, send, peek, receive, update, delete, list, clear', async () => {
    const name = uniqueQueueName('py');
    const { stdout } = await run('/usr/bin/python3', ['-c', pythonScript, queueConnectionString(server), name], {
      timeout: commandTimeoutMs,
    });
    const out = JSON.parse(stdout);
    assert.equal(out.conflict, 'QueueAlreadyExists');
    assert.equal(out.count, 2);
    assert.deepEqual(out.peek, ['hello from python']);
    assert.deepEqual(out.received, [['hello from python', 1]]);
    assert.equal(out.updated, true);
    assert.equal(out.again, 'updated');
    assert.equal(out.deleted_twice, 'MessageNotFound');
    assert.deepEqual(out.listed, [name]);
  });
});

describe('the Azure CLI', () => {
  let configDir: string;
  before(() => {
    configDir = makeTempDir('cerulean-az-');
  });
  after(() => removeDir(configDir));

  async function az(...args: string[]): Promise<any> {
    const env = {
      ...process.env,
      AZURE_CONFIG_DIR: configDir,
      AZURE_CORE_COLLECT_TELEMETRY: 'no',
      AZURE_CORE_NO_COLOR: '1',
    };
    const { stdout } = await run(
      'az',
      [...args, '--connection-string', queueConnectionString(server), '--output', 'json'],
      {
        env,
        timeout: commandTimeoutMs,
      },
    );
    return stdout.trim() === '' ? undefined : JSON.parse(stdout);
  }

  test('az storage queue create/list/delete and az storage message put/peek/get/delete/clear', async () => {
    const name = uniqueQueueName('az');
    assert.equal((await az('storage', 'queue', 'create', '--name', name)).created, true);
    const listed = await az('storage', 'queue', 'list', '--prefix', name);
    assert.deepEqual(
      listed.map((queue: { name: string }) => queue.name),
      [name],
    );
    await az('storage', 'message', 'put', '--queue-name', name, '--content', 'from az');
    await az('storage', 'message', 'put', '--queue-name', name, '--content', 'second');
    const peeked = await az('storage', 'message', 'peek', '--queue-name', name, '--num-messages', '5');
    assert.deepEqual(
      peeked.map((message: { content: string }) => message.content),
      ['from az', 'second'],
    );
    const [got] = await az('storage', 'message', 'get', '--queue-name', name);
    assert.equal(got.content, 'from az');
    assert.equal(got.dequeueCount, 1);
    await az('storage', 'message', 'delete', '--queue-name', name, '--id', got.id, '--pop-receipt', got.popReceipt);
    await az('storage', 'message', 'clear', '--queue-name', name);
    assert.deepEqual(await az('storage', 'message', 'peek', '--queue-name', name), []);
    assert.equal((await az('storage', 'queue', 'delete', '--name', name)).deleted, true);
  });
});
