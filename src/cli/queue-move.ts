// Moving messages between queues, at least once: receive (the message is hidden for a while), put a
// copy into the destination, and delete the original only after the put was acknowledged. A crash
// between the put and the delete leaves the message in both queues, never in neither.
import type { QueueClient } from '@azure/storage-queue';

/** Long enough for a put and a delete on a busy service; a message still held then shows again. */
const visibilityTimeoutSeconds = 60;
const messagesPerReceiveMax = 32;

/** The error to throw for a failed call on `queue`, after `moved` messages were moved. */
export type MoveErrorOf = (error: unknown, queue: 'source' | 'destination', moved: number) => Error;

/** Moves up to `max` messages from `from` to `to`; returns how many were moved. */
export async function moveMessages(
  from: QueueClient,
  to: QueueClient,
  max: number,
  errorOf: MoveErrorOf,
): Promise<number> {
  let moved = 0;
  while (moved < max) {
    const numberOfMessages = Math.min(messagesPerReceiveMax, max - moved);
    let received;
    try {
      received = await from.receiveMessages({ numberOfMessages, visibilityTimeout: visibilityTimeoutSeconds });
    } catch (error) {
      throw errorOf(error, 'source', moved);
    }
    if (received.receivedMessageItems.length === 0) break;
    for (const message of received.receivedMessageItems) {
      try {
        await to.sendMessage(message.messageText);
      } catch (error) {
        throw errorOf(error, 'destination', moved); // the original reappears in the source when its visibility passes
      }
      try {
        await from.deleteMessage(message.messageId, message.popReceipt);
      } catch (error) {
        throw errorOf(error, 'source', moved);
      }
      moved += 1;
    }
  }
  return moved;
}
