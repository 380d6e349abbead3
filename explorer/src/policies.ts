// A table's stored access policies (Get/Set Table ACL, at most five) and SAS URLs for the table,
// signed here with the account key (optionally naming a stored policy).
import { getTableAcl, setTableAcl, type AccessPolicy, type Credentials } from './api.js';
import { field, h, replace } from './dom.js';
import { tableOrigin } from './endpoints.js';
import { tablePermissions, tableSas } from './sas.js';
import { attempt, errorMessage, status, succeeded } from './session.js';

const policiesMax = 5;
const permissionNames: Record<string, string> = { r: 'query', a: 'add', u: 'update', d: 'delete' };

export function showPolicies(root: HTMLElement, credentials: Credentials, table: string): void {
  const list = h('div', { id: 'policy-list' });
  const sasPolicy = h('select', { id: 'sas-policy' });
  replace(
    root,
    h(
      'section',
      { class: 'card' },
      h('h3', {}, 'Stored access policies'),
      h(
        'p',
        { class: 'hint' },
        'A SAS that names a policy takes its start, expiry and permissions from it at every request, so editing or deleting the policy changes or revokes those SAS at once.',
      ),
      list,
      h(
        'div',
        { class: 'row wrap' },
        h(
          'button',
          {
            type: 'button',
            id: 'policy-add',
            onclick: () => addRow({ id: '', start: '', expiry: '', permission: 'r' }),
          },
          '+ policy',
        ),
        h(
          'button',
          { type: 'button', id: 'policy-save', class: 'primary', onclick: () => void save() },
          'Save policies',
        ),
      ),
    ),
    sasCard(credentials, table, sasPolicy),
  );

  const addRow = (policy: AccessPolicy): void => addPolicyRow(list, policy);
  const read = (): AccessPolicy[] => readPolicies(list);

  function showPolicyChoices(policies: readonly AccessPolicy[]): void {
    replace(
      sasPolicy,
      h('option', { value: '' }, '(none: sign start, expiry and permissions)'),
      policies.map((policy) => h('option', { value: policy.id }, policy.id)),
    );
  }

  async function load(): Promise<void> {
    const policies = await attempt(() => getTableAcl(credentials, table));
    if (policies === undefined) return;
    replace(list);
    for (const policy of policies) addRow(policy);
    showPolicyChoices(policies);
  }

  async function save(): Promise<void> {
    const policies = read();
    if (policies.some((policy) => policy.id === '')) {
      status('Every policy needs an id.', 'error');
      return;
    }
    const done = await succeeded(() => setTableAcl(credentials, table, policies));
    if (!done) return;
    status(`Saved ${policies.length} stored access polic${policies.length === 1 ? 'y' : 'ies'}.`);
    await load();
  }

  void load();
}

/** One editable policy, at the end of the list; refused past the service's limit. */
function addPolicyRow(list: HTMLElement, policy: AccessPolicy): void {
  if (list.querySelectorAll('.policy').length >= policiesMax) {
    status(`A table has at most ${policiesMax} stored access policies.`, 'error');
    return;
  }
  const id = h('input', {
    class: 'policy-id',
    'aria-label': 'policy id',
    placeholder: 'id',
    value: policy.id,
    maxlength: 64,
    spellcheck: 'false',
  });
  const start = h('input', {
    class: 'policy-start',
    'aria-label': 'start (UTC)',
    value: policy.start,
    placeholder: 'start (UTC)',
  });
  const expiry = h('input', {
    class: 'policy-expiry',
    'aria-label': 'expiry (UTC)',
    value: policy.expiry,
    placeholder: 'expiry (UTC)',
  });
  const permissions = tablePermissions.map((letter) =>
    h(
      'label',
      { class: 'check' },
      h('input', {
        type: 'checkbox',
        class: `perm-${letter}`,
        value: letter,
        checked: policy.permission.includes(letter),
      }),
      permissionNames[letter],
    ),
  );
  const row = h(
    'div',
    { class: 'policy row wrap' },
    id,
    start,
    expiry,
    permissions,
    h(
      'button',
      { type: 'button', class: 'icon danger', 'aria-label': 'delete policy', onclick: () => row.remove() },
      '×',
    ),
  );
  list.appendChild(row);
}

/** The policies as the rows show them now. */
function readPolicies(list: HTMLElement): AccessPolicy[] {
  return [...list.querySelectorAll('.policy')].map((row) => ({
    id: (row.querySelector('.policy-id') as HTMLInputElement).value.trim(),
    start: (row.querySelector('.policy-start') as HTMLInputElement).value.trim(),
    expiry: (row.querySelector('.policy-expiry') as HTMLInputElement).value.trim(),
    permission: [...row.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')]
      .map((box) => box.value)
      .join(''),
  }));
}

function sasCard(credentials: Credentials, table: string, policy: HTMLSelectElement): HTMLElement {
  const inOneDay = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const permissions = tablePermissions.map((letter) =>
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'checkbox', id: `sas-${letter}`, value: letter, checked: letter === 'r' }),
      permissionNames[letter],
    ),
  );
  const start = h('input', { id: 'sas-start', placeholder: 'now' });
  const expiry = h('input', { id: 'sas-expiry', value: inOneDay });
  const keys = ['spk', 'srk', 'epk', 'erk'].map((name) => h('input', { id: `sas-${name}`, spellcheck: 'false' }));
  const output = h('textarea', { id: 'sas-url', readonly: true, rows: 3, spellcheck: 'false' });
  const error = h('p', { class: 'error', role: 'alert' });

  const generate = async (): Promise<void> => {
    error.textContent = '';
    const letters = checkedLetters(permissions);
    const notDate = [start, expiry].find(
      (input) => input.value.trim() !== '' && Number.isNaN(Date.parse(input.value.trim())),
    );
    if (notDate !== undefined) {
      error.textContent = `${notDate.value} is not a date (use ISO 8601 UTC, e.g. ${inOneDay})`;
      return;
    }
    try {
      const token = await tableSas(credentials, sasRequest(table, letters, [start, expiry], policy, keys));
      output.value = `${tableOrigin()}/${credentials.account}/${table}?${token}`;
    } catch (caught) {
      error.textContent = errorMessage(caught);
    }
  };

  const copy = (): Promise<void> => copyUrl(output);

  return h(
    'section',
    { class: 'card' },
    h('h3', {}, 'Shared access signature for this table'),
    h('div', { class: 'row wrap' }, h('span', {}, 'Permissions:'), permissions),
    h(
      'div',
      { class: 'row wrap' },
      field('Start (UTC, optional)', start),
      field('Expiry (UTC)', expiry),
      field('Stored policy', policy),
    ),
    h(
      'div',
      { class: 'row wrap' },
      field('Start PartitionKey', keys[0]!),
      field('Start RowKey', keys[1]!),
      field('End PartitionKey', keys[2]!),
      field('End RowKey', keys[3]!),
    ),
    h(
      'div',
      { class: 'row wrap' },
      h(
        'button',
        { type: 'button', id: 'sas-generate', class: 'primary', onclick: () => void generate() },
        'Generate SAS URL',
      ),
      h('button', { type: 'button', id: 'sas-copy', onclick: () => void copy() }, 'Copy'),
    ),
    error,
    field('SAS URL', output, 'Anyone holding this URL has these rights until it expires (or its policy changes).'),
  );
}

function checkedLetters(permissions: readonly HTMLElement[]): string {
  return permissions
    .map((label) => label.querySelector('input')!)
    .filter((box) => box.checked)
    .map((box) => box.value)
    .join('');
}

export async function copyUrl(output: HTMLTextAreaElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(output.value);
  } catch {
    output.select();
    document.execCommand('copy');
  }
  status('SAS URL copied.');
}

/** What the card's inputs ask for; `keys` are the start and end PartitionKey and RowKey inputs, in that order. */
function sasRequest(
  table: string,
  permissions: string,
  [start, expiry]: readonly [HTMLInputElement, HTMLInputElement],
  policy: HTMLSelectElement,
  keys: readonly HTMLInputElement[],
): Parameters<typeof tableSas>[1] {
  return {
    table,
    permissions,
    start: start.value.trim(),
    expiry: expiry.value.trim(),
    policyId: policy.value,
    startPartitionKey: keys[0]!.value,
    startRowKey: keys[1]!.value,
    endPartitionKey: keys[2]!.value,
    endRowKey: keys[3]!.value,
  };
}
