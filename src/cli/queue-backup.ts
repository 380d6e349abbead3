// The queues of an account in an account backup file: a queue record (its metadata), then one
// message record per visible message read (src/cli/queue-copy.ts says which, and what a client
// cannot read: ids, insertion times, dequeue counts, invisible messages); and back, each message
// put with the time to live it had left when backed up, measured from the restore.
import type { QueueServiceClient } from '@azure/storage-queue';
import type { BackupWriter } from './account-backup.js';
import { CliError } from './command.js';
import type { Interruption } from './interrupt.js';
import { remainingSeconds, visitMessages, type QueueMessageMode } from './queue-copy.js';

export interface QueueRecord {
  readonly kind: 'queue';
  readonly name: string;
  readonly metadata: Record<string, string>;
}

export interface MessageRecord {
  readonly kind: 'message';
  readonly queue: string;
  readonly text: string;
  /** ISO 8601; null: never expires. */
  readonly expiresOn: string | null;
}

/** Writes one queue and its messages; answers how many messages, and how many the source held beyond them. */
export async function backupQueue(
  service: QueueServiceClient,
  writer: BackupWriter,
  name: string,
  mode: QueueMessageMode,
  interruption: Interruption,
): Promise<{ messages: number; left: number }> {
  const queue = service.getQueueClient(name);
  const properties = await queue.getProperties();
  await writer.record({ kind: 'queue', name, metadata: properties.metadata ?? {} });
  if (mode === 'none') return { messages: 0, left: properties.approximateMessagesCount ?? 0 };
  const { visited, left } = await visitMessages(
    queue,
    mode,
    interruption,
    (message) =>
      writer.record({
        kind: 'message',
        queue: name,
        text: message.messageText,
        expiresOn: remainingSeconds(message.expiresOn) === -1 ? null : message.expiresOn.toISOString(),
      }),
    properties,
  );
  return { messages: visited, left };
}

/** Puts queues and messages back; a queue that exists is refused unless `replace` (then messages are added). */
export class QueueRestorer {
  /** Messages whose time to live ran out between the backup and the restore: not put. */
  expired = 0;

  constructor(
    private readonly service: QueueServiceClient,
    private readonly replace: boolean,
  ) {}

  async queue(record: QueueRecord): Promise<void> {
    const client = this.service.getQueueClient(record.name);
    if (!this.replace && (await client.exists()))
      throw new CliError(`queue ${record.name} exists: delete it first, or give --replace (messages are then added)`);
    await client.createIfNotExists({ metadata: record.metadata });
    await client.setMetadata(record.metadata);
  }

  async message(record: MessageRecord): Promise<void> {
    const ttl = record.expiresOn === null ? -1 : remainingSeconds(new Date(record.expiresOn));
    if (ttl === 0) {
      this.expired++;
      return;
    }
    await this.service.getQueueClient(record.queue).sendMessage(record.text, { messageTimeToLive: ttl });
  }
}
