// What a consumer does, by hand, on one queue: dequeue a message (Get Messages of one, which hides it
// and hands out its pop receipt) and delete it by id and pop receipt; and move a queue's messages to
// another (a poison queue's back to its source), as `cerulean queue move` does (src/cli/queue-move.ts)
// but through the REST API from the page: get one, put a copy, delete the original, with a count
// and a stop. At least once: a failure between the put and the delete leaves the message in both.
import type { Credentials } from './api.js';
import { field, h } from './dom.js';
import { deleteMessage, getMessages, putMessage, type ReceivedMessage } from './queue-api.js';
import { attempt, status, succeeded } from './session.js';

/** Get Messages' default visibility timeout. */
const defaultVisibilitySeconds = 30;
/** Long enough for a put and a delete; a message still held then shows again in the source. */
const moveVisibilitySeconds = 60;
/** Put Message's default time to live: 7 days (the moved copy starts a new life, as the CLI's does). */
const movedTtlSeconds = 7 * 24 * 3600;
/** Azure Functions and the WebJobs SDK name a queue's poison queue `<queue>-poison`. */
const poisonSuffix = '-poison';

/** The dequeue card: dequeue one message, list the ones dequeued here, delete each by id and pop receipt. */
export function dequeueCard(using: Credentials, queue: string, changed: () => Promise<void>): HTMLElement {
  const visibility = h('input', {
    id: 'dequeue-visibility',
    type: 'number',
    min: 1,
    max: 604800,
    value: defaultVisibilitySeconds,
  });
  const rows = h('tbody');
  const remove = async (message: ReceivedMessage, row: HTMLElement): Promise<void> => {
    if (!(await succeeded(() => deleteMessage(using, queue, message.id, message.popReceipt)))) return;
    row.remove();
    status(`Message ${message.id} deleted.`);
    await changed();
  };
  const dequeue = async (): Promise<void> => {
    const got = await attempt(() => getMessages(using, queue, 1, Number(visibility.value)));
    if (got === undefined) return;
    const [message] = got;
    if (message === undefined) {
      status(`${queue} has no visible message to dequeue.`);
      return;
    }
    const row = dequeuedRow(message, () => void remove(message, row));
    rows.append(row);
    status(`Dequeued ${message.id}: hidden until ${message.timeNextVisible}.`);
    await changed();
  };
  return h(
    'section',
    { class: 'card', id: 'dequeue-card' },
    h('h3', {}, 'Dequeue'),
    h(
      'p',
      { class: 'hint' },
      'Get Messages of one: the message is hidden for the visibility timeout and its dequeue count rises. ' +
        'Delete it with its pop receipt before the timeout ends, or it shows again.',
    ),
    h(
      'div',
      { class: 'row wrap' },
      field('Visibility timeout (s)', visibility),
      h(
        'button',
        { type: 'button', id: 'dequeue-message', class: 'primary', onclick: () => void dequeue() },
        'Dequeue one',
      ),
    ),
    h(
      'table',
      { id: 'dequeued', class: 'messages' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Id', 'Text', 'Pop receipt', 'Dequeued', 'Visible again', ''].map((label) => h('th', {}, label)),
        ),
      ),
      rows,
    ),
  );
}

/** A dequeued message's row: id, text, pop receipt, dequeue count, when it shows again, and Delete. */
function dequeuedRow(message: ReceivedMessage, onDelete: () => void): HTMLElement {
  return h(
    'tr',
    { 'data-id': message.id },
    h('td', { class: 'message-id' }, message.id),
    h('td', { class: 'message-text' }, message.text),
    h('td', { class: 'pop-receipt' }, message.popReceipt),
    h('td', {}, String(message.dequeueCount)),
    h('td', {}, message.timeNextVisible),
    h('td', {}, h('button', { type: 'button', class: 'message-delete danger', onclick: onDelete }, 'Delete')),
  );
}

/**
 * Moves messages from `from` to `to` one at a time until `from` has none visible, `max` were moved
 * or `stopped()`; `progress` hears the count. Returns how many were moved; a failure is thrown.
 */
export async function moveMessages(
  using: Credentials,
  from: string,
  to: string,
  max: number,
  stopped: () => boolean,
  progress: (moved: number) => void,
): Promise<number> {
  let moved = 0;
  while (moved < max && !stopped()) {
    const [message] = await getMessages(using, from, 1, moveVisibilitySeconds);
    if (message === undefined) break;
    const copy = { text: message.text, visibilityTimeoutSeconds: 0, timeToLiveSeconds: movedTtlSeconds };
    await putMessage(using, to, copy);
    await deleteMessage(using, from, message.id, message.popReceipt);
    moved += 1;
    progress(moved);
  }
  return moved;
}

/** The move card: a destination (a poison queue's source by default), a most count, move and stop. */
export function moveCard(using: Credentials, queue: string, changed: () => Promise<void>): HTMLElement {
  const source = queue.endsWith(poisonSuffix) ? queue.slice(0, -poisonSuffix.length) : '';
  const destination = h('input', { id: 'move-destination', value: source, spellcheck: 'false' });
  const most = h('input', { id: 'move-max', type: 'number', min: 1, value: 1000 });
  const count = h('span', { id: 'move-count', class: 'hint' });
  const stop = h('button', { type: 'button', id: 'move-stop', disabled: true }, 'Stop');
  const start = h('button', { type: 'button', id: 'move-start', class: 'primary' }, 'Move messages');
  let stopRequested = false;
  stop.addEventListener('click', () => (stopRequested = true));
  start.addEventListener('click', async () => {
    const to = destination.value.trim();
    if (to === '' || to === queue) {
      status('Name another queue to move the messages to.', 'error');
      return;
    }
    stopRequested = false;
    [start.disabled, stop.disabled] = [true, false];
    let moved = 0;
    const report = (n: number): void => void (count.textContent = `moved ${(moved = n)}`);
    report(0);
    const done = await succeeded(() => moveMessages(using, queue, to, Number(most.value), () => stopRequested, report));
    [start.disabled, stop.disabled] = [false, true];
    count.dataset['done'] = String(moved);
    if (done)
      status(
        `Moved ${moved} message${moved === 1 ? '' : 's'} from ${queue} to ${to}${stopRequested ? ' (stopped)' : ''}.`,
      );
    await changed();
  });
  const hint = source === '' ? 'to another queue' : `back to ${source}, the queue this poison queue is named for`;
  return h(
    'section',
    { class: 'card', id: 'move-card' },
    h('h3', {}, 'Move messages'),
    h('p', { class: 'hint' }, `Each visible message is got, put ${hint}, then deleted here.`),
    h('div', { class: 'row wrap' }, field('To queue', destination), field('At most', most), start, stop, count),
  );
}
