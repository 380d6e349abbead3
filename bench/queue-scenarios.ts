// The Queue service workloads of the side-by-side benchmark
// (https://learn.microsoft.com/rest/api/storageservices/queue-service-rest-api): each run gets a
// fresh queue, deleted afterwards. The servers without a Queue service are left out.
import { expectStatus, UnexpectedReply, type TableResponse } from './client.js';
import type { QueueHttpClient } from './queue-client.js';
import type { Operation } from './load.js';
import type { PreparedRun, Scenario, ScenarioContext } from './scenarios.js';

/** Messages put before a get-and-delete run; a worker that finds the queue empty puts one back. */
const getDeleteBacklog = 4_000;
/** Messages put before a mixed run, so consumers start with work. */
const mixBacklog = 500;
const peekBacklog = 32;
const preloadConcurrency = 16;
/** A message of about the size SDK samples send. */
const messageText = 'x'.repeat(64);
const putBody = `<QueueMessage><MessageText>${messageText}</MessageText></QueueMessage>`;

interface QueueRunContext {
  queue: QueueHttpClient;
  name: string;
  concurrency: number;
}

function queueScenario(
  name: string,
  summary: string,
  backlog: number,
  operationsOf: (run: QueueRunContext) => { operations: Operation[]; note?: () => string | undefined },
): Scenario {
  return {
    name,
    summary,
    datasets: [],
    writes: true,
    service: 'queue',
    prepare: async (context: ScenarioContext): Promise<PreparedRun> => {
      const queue = context.queue;
      if (queue === undefined) throw new Error('the server has no Queue service');
      const queueName = `bench-${name}-${context.runId}`;
      await expectStatus('create queue', queue.send({ method: 'PUT', resource: queueName }), 201);
      await putMany(queue, queueName, backlog);
      const { operations, note } = operationsOf({ queue, name: queueName, concurrency: context.concurrency });
      let noted: string | undefined;
      return {
        operations,
        cleanup: async () => {
          noted = note?.();
          await expectStatus('delete queue', queue.send({ method: 'DELETE', resource: queueName }), 204);
        },
        get note() {
          return noted;
        },
      };
    },
  };
}

export const queueScenarios: readonly Scenario[] = [
  queueScenario('queue-put', 'Put Message (64 characters) into one queue', 0, ({ queue, name, concurrency }) => ({
    operations: Array.from({ length: concurrency }, () => () => putMessage(queue, name)),
  })),
  queueScenario(
    'queue-get-delete',
    `Get Messages (numofmessages=1), then Delete Message with its pop receipt; ${getDeleteBacklog} put before`,
    getDeleteBacklog,
    ({ queue, name, concurrency }) => {
      let refills = 0;
      const operation = async (): Promise<void> => {
        if (!(await getAndDelete(queue, name))) {
          refills++;
          await putMessage(queue, name);
        }
      };
      return {
        operations: Array.from({ length: concurrency }, () => operation),
        note: () => (refills === 0 ? undefined : `the queue ran empty: ${refills} operations put a message instead`),
      };
    },
  ),
  queueScenario(
    'queue-peek',
    `Peek Messages (numofmessages=1) of a queue of ${peekBacklog}`,
    peekBacklog,
    ({ queue, name, concurrency }) => ({
      operations: Array.from({ length: concurrency }, () => async () => {
        const response = await expectStatus('peek', peekMessage(queue, name), 200);
        if (!response.body.includes('<MessageText>')) throw new UnexpectedReply('peek found no message', response);
      }),
    }),
  ),
  queueScenario(
    'queue-mix',
    `half the workers put, half get and delete one message (polling again while the queue is empty); ${mixBacklog} put before`,
    mixBacklog,
    ({ queue, name, concurrency }) => {
      let emptyGets = 0;
      // An empty get is cheap: counting it as an operation would reward a server whose producers are slow.
      const consume = async (): Promise<void> => {
        while (!(await getAndDelete(queue, name))) emptyGets++;
      };
      return {
        operations: Array.from({ length: concurrency }, (_, worker) =>
          worker % 2 === 0 ? () => putMessage(queue, name) : consume,
        ),
        note: () => (emptyGets === 0 ? undefined : `${emptyGets} gets found the queue empty and polled again`),
      };
    },
  ),
];

async function putMessage(queue: QueueHttpClient, name: string): Promise<void> {
  await expectStatus('put message', queue.send({ method: 'POST', resource: `${name}/messages`, body: putBody }), 201);
}

function peekMessage(queue: QueueHttpClient, name: string): Promise<TableResponse> {
  return queue.send({ method: 'GET', resource: `${name}/messages`, query: { peekonly: 'true' }, readBody: true });
}

/** Gets one message and deletes it; false when the queue had none visible. */
async function getAndDelete(queue: QueueHttpClient, name: string): Promise<boolean> {
  const response = await expectStatus(
    'get messages',
    queue.send({ method: 'GET', resource: `${name}/messages`, query: { numofmessages: '1' }, readBody: true }),
    200,
  );
  const id = /<MessageId>([^<]+)<\/MessageId>/.exec(response.body)?.[1];
  const receipt = /<PopReceipt>([^<]+)<\/PopReceipt>/.exec(response.body)?.[1];
  if (id === undefined || receipt === undefined) return false;
  await expectStatus(
    'delete message',
    queue.send({ method: 'DELETE', resource: `${name}/messages/${id}`, query: { popreceipt: unescapeXml(receipt) } }),
    204,
  );
  return true;
}

function unescapeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, entity: string) =>
    entity === 'lt' ? '<' : entity === 'gt' ? '>' : entity === 'quot' ? '"' : entity === 'apos' ? "'" : '&',
  );
}

async function putMany(queue: QueueHttpClient, name: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: preloadConcurrency }, async () => {
      while (next < count) {
        next++;
        await putMessage(queue, name);
      }
    }),
  );
}
