// The Queue service from the command line: `cerulean queues` lists the queues with their approximate
// message counts; `cerulean queue peek|put|purge|move` read, add, clear and move messages. All of it
// through the official Queue SDK (src/cli/queue-endpoint.ts), as a client of the public API.
import { type Command, Option } from 'commander';
import { type QueueClient, RestError } from '@azure/storage-queue';
import { type CliCommand, CliError, commandGroup, finishCommandGroup, wholeNumber } from '../command.js';
import { defaultQueueEndpointUrl, queueConnectionStringVariable, resolveQueueEndpoint } from '../queue-endpoint.js';
import { moveMessages } from '../queue-move.js';
import { readStdin } from '../stdin.js';

interface QueueOptions {
  connectionString?: string;
  json?: boolean;
  count?: number;
  max?: number;
}

/** The most messages one Peek Messages or Get Messages call returns. */
export const messagesPerCallMax = 32;

export function queueConnectionOption(): Option {
  return new Option(
    '-c, --connection-string <string>',
    `connection string with a QueueEndpoint, or UseDevelopmentStorage=true ` +
      `(env ${queueConnectionStringVariable}; default the local server, ${defaultQueueEndpointUrl})`,
  );
}

export const queuesCommand: CliCommand = {
  name: 'queues',
  register(program: Command) {
    program
      .command('queues')
      .description('list the queues of the account with their approximate message counts')
      .option('--json', 'one JSON document for scripts')
      .addOption(queueConnectionOption())
      .addHelpText('after', '\nExample:\n  cerulean queues -c UseDevelopmentStorage=true\n')
      .action((options: QueueOptions) => listQueues(options));
  },
};

export const queueCommand: CliCommand = {
  name: 'queue',
  register(program: Command) {
    const queue = commandGroup(
      program,
      'queue',
      'peek at, put, purge or move the messages of a queue',
      'peek, put, purge or move',
    );
    registerPeekAndPut(queue);
    registerPurgeAndMove(queue);
    finishCommandGroup(queue);
  },
};

function registerPeekAndPut(queue: Command): void {
  queue
    .command('peek')
    .description('print the messages at the front of a queue, one JSON line each, without hiding them')
    .argument('<queue>', 'queue name')
    .option('--count <n>', `how many (1 to ${messagesPerCallMax}, the service's limit for one peek)`, countOption, 1)
    .addOption(queueConnectionOption())
    .addHelpText(
      'after',
      '\nEach line: {"id","dequeueCount","insertedOn","expiresOn","text"}.\n\n' +
        'Example:\n  cerulean queue peek orders --count 5\n',
    )
    .action((name: string, options: QueueOptions) => peek(name, options));
  queue
    .command('put')
    .description('add one message to a queue')
    .argument('<queue>', 'queue name')
    .argument('<text>', 'the message text ("-": read stdin, without its final line break)')
    .addOption(queueConnectionOption())
    .addHelpText(
      'after',
      '\nExamples:\n  cerulean queue put orders \'{"order":42}\'\n  echo hello | cerulean queue put orders -\n',
    )
    .action((name: string, text: string, options: QueueOptions) => put(name, text, options));
}

function registerPurgeAndMove(queue: Command): void {
  queue
    .command('purge')
    .description('delete every message of a queue (asks nothing; prints how many there were)')
    .argument('<queue>', 'queue name')
    .addOption(queueConnectionOption())
    .action((name: string, options: QueueOptions) => purge(name, options));
  queue
    .command('move')
    .description('move messages from one queue to another, e.g. from a poison queue back to its queue')
    .argument('<source>', 'queue to take the messages from')
    .argument('<destination>', 'queue to put them into (it must exist)')
    .option('--max <n>', 'move at most this many (default: until the source shows none)', wholeNumber('--max', 1))
    .addOption(queueConnectionOption())
    .addHelpText(
      'after',
      '\nAt least once: each message is received (hidden for a while), put into the destination, and only\n' +
        'once that put is acknowledged deleted from the source. If the command is interrupted, or a delete\n' +
        'fails, a message can end up in both queues; none is lost. A moved message is a new message: new id,\n' +
        'dequeue count 0, and the default time to live.\n\nExample:\n  cerulean queue move orders-poison orders\n',
    )
    .action((source: string, destination: string, options: QueueOptions) => move(source, destination, options));
}

function countOption(text: string): number {
  const value = wholeNumber('--count', 1)(text);
  if (value > messagesPerCallMax) throw new CliError(`--count must be at most ${messagesPerCallMax}, not '${text}'`, 2);
  return value;
}

async function listQueues(options: QueueOptions): Promise<void> {
  const { service, label } = resolveQueueEndpoint(options.connectionString);
  const queues: { name: string; approximateMessages: number }[] = [];
  try {
    for await (const item of service.listQueues()) {
      const properties = await service.getQueueClient(item.name).getProperties();
      queues.push({ name: item.name, approximateMessages: properties.approximateMessagesCount ?? 0 });
    }
  } catch (error) {
    throw queueError(error, label);
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ queues })}\n`);
    return;
  }
  const width = Math.max(0, ...queues.map((queue) => queue.name.length));
  for (const queue of queues) process.stdout.write(`${queue.name.padEnd(width)}  ${queue.approximateMessages}\n`);
}

async function peek(name: string, options: QueueOptions): Promise<void> {
  const client = queueClient(name, options);
  try {
    const peeked = await client.peekMessages({ numberOfMessages: options.count ?? 1 });
    for (const message of peeked.peekedMessageItems) {
      const { messageId: id, dequeueCount, insertedOn, expiresOn, messageText: text } = message;
      process.stdout.write(`${JSON.stringify({ id, dequeueCount, insertedOn, expiresOn, text })}\n`);
    }
  } catch (error) {
    throw queueError(error, name);
  }
}

async function put(name: string, given: string, options: QueueOptions): Promise<void> {
  const text = given === '-' ? (await readStdin('the message text')).replace(/\r?\n$/, '') : given;
  const client = queueClient(name, options);
  try {
    const sent = await client.sendMessage(text);
    process.stderr.write(`put ${name}: message ${sent.messageId} stored\n`);
  } catch (error) {
    throw queueError(error, name);
  }
}

async function purge(name: string, options: QueueOptions): Promise<void> {
  const client = queueClient(name, options);
  try {
    // Approximate, as the service says: messages added between the two calls are cleared too.
    const count = (await client.getProperties()).approximateMessagesCount ?? 0;
    await client.clearMessages();
    process.stdout.write(`purge ${name}: ${count} ${count === 1 ? 'message' : 'messages'} cleared\n`);
  } catch (error) {
    throw queueError(error, name);
  }
}

async function move(source: string, destination: string, options: QueueOptions): Promise<void> {
  if (source === destination) throw new CliError('the source and destination are the same queue', 2);
  const from = queueClient(source, options);
  const to = queueClient(destination, options);
  try {
    await to.getProperties(); // before taking anything: a typo'd destination moves nothing
  } catch (error) {
    throw queueError(error, destination);
  }
  const moved = await moveMessages(from, to, options.max ?? Number.POSITIVE_INFINITY, (error, queue, movedBefore) => {
    const failure = queueError(error, queue === 'source' ? source : destination);
    return new CliError(`${failure.message} (after ${movedBefore} moved)`);
  });
  process.stdout.write(`move ${source} → ${destination}: ${moved} ${moved === 1 ? 'message' : 'messages'} moved\n`);
}

function queueClient(name: string, options: QueueOptions): QueueClient {
  return resolveQueueEndpoint(options.connectionString).service.getQueueClient(name);
}

/** A failure of a call on `what` (a queue, or the endpoint), as one line. */
export function queueError(error: unknown, what: string): Error {
  if (error instanceof CliError) return error;
  if (!(error instanceof RestError)) return error as Error;
  if (error.code === 'QueueNotFound') return new CliError(`queue ${what} does not exist`);
  const reason = [error.statusCode, error.code].filter((part) => part !== undefined).join(' ');
  const message = (error.message.split('\n')[0] ?? '').trim();
  return new CliError(`${what}: ${reason === '' ? message : `${reason}: ${message}`}`);
}
