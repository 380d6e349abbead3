// The Queues side of the explorer: the queue list (prefix filter, paging by marker, create, delete)
// in the left pane, and one queue's view: its approximate count, a peek at the front messages,
// put and clear. Calls go to the Queue service's own port (endpoints.ts).
import { isBase64, type Credentials } from './api.js';
import { byId, field, h, replace } from './dom.js';
import { lowerCaseNameReason, NameList } from './name-list.js';
import {
  approximateMessageCount,
  clearMessages,
  createQueue,
  deleteQueue,
  listQueues,
  peekCountMax,
  peekMessages,
  putMessage,
  type PeekedMessage,
} from './queue-api.js';
import { dequeueCard, moveCard } from './queue-actions.js';
import { attempt, status, succeeded } from './session.js';

/** Queues per List Queues page in the pane; *More queues* asks for the next. */
const queuesPerPage = 50;
/**
 * From this many dequeues a message looks poisoned: Azure Functions and the WebJobs SDK move a
 * message to `<queue>-poison` after 5 failed attempts by default.
 */
export const poisonDequeueCount = 5;
/** Put Message's default time to live: 7 days. */
const defaultTtlSeconds = 7 * 24 * 3600;

/** Wires the pane's controls; `current` gives the credentials in use (undefined before connecting). */
export function initQueues(current: () => Credentials | undefined): NameList {
  return new NameList({
    kind: 'queue',
    pageSize: queuesPerPage,
    contents: 'every message in it',
    credentials: current,
    page: listQueues,
    create: createQueue,
    remove: deleteQueue,
    open: openQueue,
    nameReason: lowerCaseNameReason,
  });
}

/** Opens one queue's view in the main area. */
export function openQueue(using: Credentials, queue: string): void {
  const view = new QueueView(using, queue);
  replace(byId('main'), view.root);
  void view.refresh();
}

/** The text of a message read as base64 of UTF-8; undefined when it is not. */
export function base64Decoded(text: string): string | undefined {
  if (text === '' || !isBase64(text)) return undefined;
  const binary = atob(text);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The base64 of the UTF-8 of `text`, as the .NET and JavaScript SDKs' base64 encoders write it. */
function base64Encoded(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/** One queue: count, put form, peeked messages. */
class QueueView {
  readonly root: HTMLElement;
  private readonly count = h('p', { id: 'queue-count', class: 'hint' });
  private readonly messages = h('tbody');
  private readonly decode = h('input', { type: 'checkbox', id: 'decode-base64' });
  private peeked: PeekedMessage[] = [];

  constructor(
    private readonly using: Credentials,
    private readonly queue: string,
  ) {
    this.decode.addEventListener('change', () => this.renderMessages());
    this.root = h(
      'div',
      { class: 'view', 'data-queue-view': queue },
      h('h2', {}, queue),
      this.count,
      this.putForm(),
      h(
        'div',
        { class: 'row wrap toolbar' },
        h('button', { type: 'button', id: 'peek-messages', onclick: () => void this.refresh() }, 'Refresh'),
        h('label', { class: 'row' }, this.decode, 'show base64-decoded'),
        h(
          'button',
          { type: 'button', id: 'clear-messages', class: 'danger', onclick: () => void this.clear() },
          'Clear messages…',
        ),
      ),
      h(
        'table',
        { id: 'messages', class: 'messages' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Id', 'Text', 'Inserted', 'Expires', 'Dequeued'].map((label) => h('th', {}, label)),
          ),
        ),
        this.messages,
      ),
      h(
        'p',
        { class: 'hint' },
        `Peek shows up to ${peekCountMax} visible messages from the front of the queue, without changing them; ` +
          'a message being processed (invisible) is not shown.',
      ),
      dequeueCard(using, queue, () => this.refresh()),
      moveCard(using, queue, () => this.refresh()),
    );
  }

  private putForm(): HTMLElement {
    const text = h('textarea', { id: 'message-text', rows: 3, spellcheck: 'false' });
    const encode = h('input', { type: 'checkbox', id: 'message-base64' });
    const visibility = h('input', { id: 'visibility-timeout', type: 'number', min: 0, max: 604800, value: 0 });
    const ttl = h('input', { id: 'message-ttl', type: 'number', min: 1, value: defaultTtlSeconds });
    const never = h('input', { type: 'checkbox', id: 'ttl-never' });
    never.addEventListener('change', () => (ttl.disabled = never.checked));
    const put = async (): Promise<void> => {
      const message = {
        text: encode.checked ? base64Encoded(text.value) : text.value,
        visibilityTimeoutSeconds: Number(visibility.value),
        timeToLiveSeconds: never.checked ? -1 : Number(ttl.value),
      };
      if (!(await succeeded(() => putMessage(this.using, this.queue, message)))) return;
      text.value = '';
      status(`Message put on ${this.queue}.`);
      await this.refresh();
    };
    return h(
      'form',
      { class: 'card', id: 'put-form', onsubmit: (event: Event) => (event.preventDefault(), void put()) },
      h('h3', {}, 'Put a message'),
      field('Text', text),
      h('label', { class: 'row' }, encode, 'encode as base64 (as the .NET and JavaScript SDKs can)'),
      h(
        'div',
        { class: 'row wrap' },
        field('Visibility timeout (s)', visibility),
        field('Time to live (s)', ttl),
        h('label', { class: 'row' }, never, 'never expires'),
      ),
      h('div', { class: 'row end' }, h('button', { type: 'submit', id: 'put-message', class: 'primary' }, 'Put')),
    );
  }

  /** Reads the count and peeks again. */
  async refresh(): Promise<void> {
    const [count, peeked] = await Promise.all([
      attempt(() => approximateMessageCount(this.using, this.queue)),
      attempt(() => peekMessages(this.using, this.queue, peekCountMax)),
    ]);
    if (count !== undefined) {
      this.count.textContent = `about ${count.toLocaleString('en-US')} message${count === 1 ? '' : 's'}`;
      this.count.dataset['count'] = String(count);
    }
    if (peeked === undefined) return;
    this.peeked = peeked;
    this.renderMessages();
  }

  private renderMessages(): void {
    const rows = this.peeked.map((message) => messageRow(message, this.decode.checked));
    replace(
      this.messages,
      rows.length > 0 ? rows : h('tr', {}, h('td', { colspan: 5, class: 'hint' }, 'No visible messages.')),
    );
  }

  private async clear(): Promise<void> {
    if (!confirm(`Delete every message of ${this.queue}? This cannot be undone.`)) return;
    if (!(await succeeded(() => clearMessages(this.using, this.queue)))) return;
    status(`Messages of ${this.queue} cleared.`);
    await this.refresh();
  }
}

function messageRow(message: PeekedMessage, decode: boolean): HTMLElement {
  const decoded = decode ? base64Decoded(message.text) : undefined;
  const poison = message.dequeueCount >= poisonDequeueCount;
  const text =
    decode && decoded === undefined
      ? h('span', { class: 'hint' }, '(not base64 of UTF-8 text) ', message.text)
      : (decoded ?? message.text);
  return h(
    'tr',
    { 'data-id': message.id, class: poison ? 'poison' : undefined },
    h('td', { class: 'message-id' }, message.id),
    h('td', { class: 'message-text' }, text),
    h('td', {}, message.insertionTime),
    h('td', {}, message.expirationTime.startsWith('Fri, 31 Dec 9999') ? 'never' : message.expirationTime),
    h(
      'td',
      { class: 'dequeue-count' },
      String(message.dequeueCount),
      poison &&
        h(
          'span',
          {
            class: 'poison-hint',
            title: `Dequeued ${message.dequeueCount} times: consumers may be failing on it (a poison message).`,
          },
          ' ⚠ poison?',
        ),
    ),
  );
}
