// The explorer's entry point: account and key, the table list, and the views of one table.
import { countEntities, createTable, deleteTable, listTables, isBase64, type Credentials } from './api.js';
import { byId, h, replace } from './dom.js';
import { showBrowser } from './browse.js';
import { showCors } from './cors.js';
import { showPolicies } from './policies.js';
import type { NameList } from './name-list.js';
import { initQueues } from './queues.js';
import { initBlobs } from './blobs.js';
import { loadEndpoints, serviceOrigin } from './endpoints.js';
import {
  attempt,
  clearStatus,
  devAccount,
  rememberedAccount,
  rememberedKey,
  rememberKey,
  status,
  succeeded,
} from './session.js';

let credentials: Credentials | undefined;
let currentTable: string | undefined;
let queues: NameList | undefined;
let containers: NameList | undefined;

type Service = 'tables' | 'queues' | 'blobs';
const services: readonly Service[] = ['tables', 'queues', 'blobs'];

const views = [
  { id: 'entities', label: 'Entities', show: showBrowser },
  { id: 'policies', label: 'Access policies & SAS', show: showPolicies },
] as const;

async function start(): Promise<void> {
  const accountInput = byId<HTMLInputElement>('account');
  const keyInput = byId<HTMLInputElement>('key');
  accountInput.addEventListener('change', () => (keyInput.value = rememberedKey(accountInput.value)));
  byId('connect-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const key = keyInput.value.trim();
    if (!isBase64(key) || key === '') {
      status('The key must be the account key in base64.', 'error');
      return;
    }
    const account = accountInput.value.trim();
    if (account !== credentials?.account) showHint('Pick a table.');
    credentials = { account, key };
    rememberKey(credentials);
    void refreshTables();
  });
  byId('table-filter').addEventListener('input', () => void refreshTables());
  byId('create-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void createNamedTable();
  });
  queues = initQueues(() => credentials);
  containers = initBlobs(() => credentials);
  for (const service of services) byId(`service-${service}`).addEventListener('click', () => showService(service));
  byId('cors-open').addEventListener('click', () => {
    if (credentials === undefined) return;
    currentTable = undefined;
    markCurrent();
    showCors(byId('main'), credentials);
  });
  const [names] = await Promise.all([loadAccountNames(), loadEndpoints()]);
  // The Blob service is offered when this server serves it.
  byId('service-blobs').hidden = serviceOrigin('blob') === undefined;
  replace(
    byId('account-names'),
    names.map((name) => h('option', { value: name })),
  );
  // The development account, whose key is well known, unless this tab used another.
  accountInput.value = rememberedAccount() ?? devAccount;
  keyInput.value = rememberedKey(accountInput.value);
  // With a key at hand (this tab's, or the development account's well-known one) connect at once.
  if (keyInput.value !== '') byId('connect-form').dispatchEvent(new Event('submit', { cancelable: true }));
}

async function loadAccountNames(): Promise<string[]> {
  try {
    const response = await fetch('accounts.json', { cache: 'no-store' });
    return ((await response.json()) as { accounts: string[] }).accounts;
  } catch {
    return [];
  }
}

let listGeneration = 0;

async function refreshTables(): Promise<void> {
  if (credentials === undefined) return;
  const generation = ++listGeneration;
  const prefix = byId<HTMLInputElement>('table-filter').value;
  const names = await attempt(() => listTables(credentials!, prefix));
  if (generation !== listGeneration) return;
  if (names === undefined) {
    // Wrong key or account: show nothing of the account used before, neither its tables nor the
    // rows of the table that was open.
    replace(byId('table-list'));
    queues?.clear();
    containers?.clear();
    showHint('Connect with the account key to see its tables.');
    byId<HTMLButtonElement>('cors-open').disabled = true;
    delete document.body.dataset['connected'];
    return;
  }
  byId<HTMLButtonElement>('cors-open').disabled = false;
  document.body.dataset['connected'] = credentials.account;
  if (!byId('queues-section').hidden) void queues?.refresh();
  if (!byId('blobs-section').hidden) void containers?.refresh();
  status(
    `${credentials.account}: ${names.length} table${names.length === 1 ? '' : 's'}${prefix === '' ? '' : ` starting with '${prefix}'`}`,
  );
  replace(
    byId('table-list'),
    names.map((name) =>
      h(
        'li',
        {},
        h('button', { type: 'button', class: 'table-link', 'data-table': name, onclick: () => openTable(name) }, name),
        countButton(name),
        h(
          'button',
          {
            type: 'button',
            class: 'icon danger',
            title: `Delete table ${name}`,
            'aria-label': `Delete table ${name}`,
            onclick: () => void removeTable(name),
          },
          '×',
        ),
      ),
    ),
  );
  markCurrent();
}

/** Counts a table's entities when asked (a full scan of its keys, so never on its own). */
function countButton(name: string): HTMLElement {
  const button = h(
    'button',
    { type: 'button', class: 'icon count', 'data-count': name, title: `Count the entities of ${name}` },
    '#',
  );
  button.addEventListener('click', async () => {
    if (credentials === undefined) return;
    button.textContent = '…';
    const count = await attempt(() => countEntities(credentials!, name));
    button.textContent = count === undefined ? '#' : count.toLocaleString('en-US');
    if (count !== undefined) status(`${name}: ${count.toLocaleString('en-US')} entities`);
  });
  return button;
}

async function createNamedTable(): Promise<void> {
  const input = byId<HTMLInputElement>('new-table');
  const name = input.value.trim();
  if (credentials === undefined || name === '') return;
  const reason = tableNameReason(name);
  if (reason !== undefined) {
    status(`Table name '${name}': ${reason}.`, 'error');
    input.setAttribute('aria-invalid', 'true');
    return;
  }
  input.removeAttribute('aria-invalid');
  const done = await succeeded(() => createTable(credentials!, name));
  if (!done) return;
  input.value = '';
  status(`Table ${name} created.`);
  await refreshTables();
  openTable(name);
}

async function removeTable(name: string): Promise<void> {
  if (credentials === undefined) return;
  if (!confirm(`Delete table ${name} and every entity in it? This cannot be undone.`)) return;
  const done = await succeeded(() => deleteTable(credentials!, name));
  if (!done) return;
  status(`Table ${name} deleted.`);
  if (currentTable === name) showHint('Pick a table.');
  await refreshTables();
}

function openTable(name: string, viewId: string = 'entities'): void {
  if (credentials === undefined) return;
  currentTable = name;
  markCurrent();
  const main = byId('main');
  const body = h('div', { class: 'view' });
  const tabs = h(
    'div',
    { class: 'tabs', role: 'tablist' },
    views.map((view) =>
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          id: `tab-${view.id}`,
          'aria-selected': String(view.id === viewId),
          onclick: () => (clearStatus(), openTable(name, view.id)),
        },
        view.label,
      ),
    ),
  );
  replace(main, h('h2', {}, name), tabs, body);
  views.find((view) => view.id === viewId)!.show(body, credentials, name);
}

/**
 * Which rule of table names `name` breaks (the service's: 3 to 63 letters and digits, starting with
 * a letter, not "tables"), in words, rather than the browser's "match the requested format".
 */
function tableNameReason(name: string): string | undefined {
  if (!/^[A-Za-z0-9]*$/.test(name)) {
    const bad = [...name].find((c) => !/[A-Za-z0-9]/.test(c))!;
    return `only letters and digits may appear, not ${JSON.stringify(bad)}`;
  }
  if (!/^[A-Za-z]/.test(name)) return 'it must start with a letter';
  if (name.length < 3) return `at least 3 characters (this has ${name.length})`;
  if (name.length > 63) return `at most 63 characters (this has ${name.length})`;
  if (name.toLowerCase() === 'tables') return '"tables" is reserved';
  return undefined;
}

/** Shows the tables, queues or containers in the left pane; the main area waits for a pick. */
function showService(service: Service): void {
  clearStatus();
  for (const each of services) {
    byId(`service-${each}`).setAttribute('aria-selected', String(each === service));
    byId(`${each}-section`).hidden = each !== service;
  }
  showHint({ tables: 'Pick a table.', queues: 'Pick a queue.', blobs: 'Pick a container.' }[service]);
  void { tables: refreshTables, queues: () => queues?.refresh(), blobs: () => containers?.refresh() }[service]();
}

function showHint(text: string): void {
  currentTable = undefined;
  replace(byId('main'), h('p', { class: 'hint' }, text));
}

function markCurrent(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('#table-list .table-link')) {
    button.setAttribute('aria-current', String(button.dataset['table'] === currentTable));
  }
}

void start();
