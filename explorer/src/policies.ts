// Stored access policies (at most five) and service SAS URLs signed here with the account key
// (optionally naming a stored policy): the editor and the SAS card for any resource that has them,
// and the table's view built from them (Get/Set Table ACL). Containers use them in container-settings.ts.
import { getTableAcl, setTableAcl, type AccessPolicy, type Credentials } from './api.js';
import { field, h, replace } from './dom.js';
import { tableOrigin } from './endpoints.js';
import { tablePermissions, tableSas } from './sas.js';
import { attempt, errorMessage, status, succeeded } from './session.js';

const policiesMax = 5;

/** The permission letters a policy of one kind of resource may hold, in the service's order, and their names. */
export interface PermissionSet {
  readonly letters: readonly string[];
  readonly names: Readonly<Record<string, string>>;
}

const tablePermissionSet: PermissionSet = {
  letters: tablePermissions,
  names: { r: 'query', a: 'add', u: 'update', d: 'delete' },
};

export interface PolicyEditorOptions {
  /** Prefixes the ids of the list and its buttons: `{idPrefix}-list`, `-add`, `-save`. */
  readonly idPrefix: string;
  /** 'table', 'container': for the words. */
  readonly kind: string;
  readonly permissions: PermissionSet;
  /** Stores the policies (Set ACL), reporting a failure; true when stored. */
  save(policies: AccessPolicy[]): Promise<boolean>;
}

export interface PolicyEditor {
  readonly root: HTMLElement;
  /** Shows these policies, as stored. */
  show(policies: readonly AccessPolicy[]): void;
}

/** A card editing a resource's stored access policies (at most five): add, edit and remove rows, then save. */
export function policyEditor(options: PolicyEditorOptions): PolicyEditor {
  const { idPrefix, kind, permissions } = options;
  const list = h('div', { id: `${idPrefix}-list` });
  const addRow = (policy: AccessPolicy): void => addPolicyRow(list, policy, permissions, kind);
  const save = async (): Promise<void> => {
    const policies = readPolicies(list);
    if (policies.some((policy) => policy.id === '')) {
      status('Every policy needs an id.', 'error');
      return;
    }
    if (!(await options.save(policies))) return;
    status(`Saved ${policies.length} stored access polic${policies.length === 1 ? 'y' : 'ies'}.`);
  };
  const root = h(
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
          id: `${idPrefix}-add`,
          onclick: () => addRow({ id: '', start: '', expiry: '', permission: 'r' }),
        },
        '+ policy',
      ),
      h(
        'button',
        { type: 'button', id: `${idPrefix}-save`, class: 'primary', onclick: () => void save() },
        'Save policies',
      ),
    ),
  );
  return {
    root,
    show: (policies) => {
      replace(list);
      for (const policy of policies) addRow(policy);
    },
  };
}

/** The stored policies as choices for a SAS: none, or one by its id. */
export function showPolicyChoices(select: HTMLSelectElement, policies: readonly AccessPolicy[]): void {
  replace(
    select,
    h('option', { value: '' }, '(none: sign start, expiry and permissions)'),
    policies.map((policy) => h('option', { value: policy.id }, policy.id)),
  );
}

export function showPolicies(root: HTMLElement, credentials: Credentials, table: string): void {
  const sasPolicy = h('select', { id: 'sas-policy' });
  const editor = policyEditor({
    idPrefix: 'policy',
    kind: 'table',
    permissions: tablePermissionSet,
    save: async (policies) => {
      if (!(await succeeded(() => setTableAcl(credentials, table, policies)))) return false;
      await load();
      return true;
    },
  });
  replace(root, editor.root, tableSasCard(credentials, table, sasPolicy));

  async function load(): Promise<void> {
    const policies = await attempt(() => getTableAcl(credentials, table));
    if (policies === undefined) return;
    editor.show(policies);
    showPolicyChoices(sasPolicy, policies);
  }

  void load();
}

/** One editable policy, at the end of the list; refused past the service's limit. */
function addPolicyRow(list: HTMLElement, policy: AccessPolicy, permissionSet: PermissionSet, kind: string): void {
  if (list.querySelectorAll('.policy').length >= policiesMax) {
    status(`A ${kind} has at most ${policiesMax} stored access policies.`, 'error');
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
  const permissions = permissionBoxes(permissionSet, (letter) => ({
    class: `perm-${letter}`,
    checked: policy.permission.includes(letter),
  }));
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

/** A labelled tick box for each letter of the set; `attributes` adds each box's own. */
export function permissionBoxes(
  permissionSet: PermissionSet,
  attributes: (letter: string) => Record<string, string | boolean>,
): HTMLElement[] {
  return permissionSet.letters.map((letter) =>
    h(
      'label',
      { class: 'check' },
      h('input', { type: 'checkbox', value: letter, ...attributes(letter) }),
      permissionSet.names[letter],
    ),
  );
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

/** What a SAS card's inputs ask for: permission letters, start and expiry (ISO 8601 or ''), stored policy id or ''. */
export interface SasChoice {
  readonly permissions: string;
  readonly start: string;
  readonly expiry: string;
  readonly policyId: string;
}

export interface SasCardOptions {
  /** Prefixes the card's ids: `{idPrefix}-start`, `-expiry`, `-generate`, `-copy`, `-url`, `-{letter}`. */
  readonly idPrefix: string;
  /** 'table', 'container': for the words. */
  readonly kind: string;
  readonly permissions: PermissionSet;
  /** The stored policy choice (showPolicyChoices fills it). */
  readonly policy: HTMLSelectElement;
  /** More inputs on a row of their own (a table's key range). */
  readonly extra?: HTMLElement;
  /** The SAS URL for the choice. */
  sign(choice: SasChoice): Promise<string>;
}

/** A card making a service SAS URL: permissions, start, expiry, stored policy, signed in the page. */
export function sasCard(options: SasCardOptions): HTMLElement {
  const { idPrefix } = options;
  const inOneDay = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const permissions = permissionBoxes(options.permissions, (letter) => ({
    id: `${idPrefix}-${letter}`,
    checked: letter === 'r',
  }));
  const start = h('input', { id: `${idPrefix}-start`, placeholder: 'now' });
  const expiry = h('input', { id: `${idPrefix}-expiry`, value: inOneDay });
  const output = h('textarea', { id: `${idPrefix}-url`, readonly: true, rows: 3, spellcheck: 'false' });
  const error = h('p', { class: 'error', role: 'alert' });

  const generate = async (): Promise<void> => {
    error.textContent = '';
    const notDate = [start, expiry].find(
      (input) => input.value.trim() !== '' && Number.isNaN(Date.parse(input.value.trim())),
    );
    if (notDate !== undefined) {
      error.textContent = `${notDate.value} is not a date (use ISO 8601 UTC, e.g. ${inOneDay})`;
      return;
    }
    const choice = {
      permissions: checkedLetters(permissions),
      start: start.value.trim(),
      expiry: expiry.value.trim(),
      policyId: options.policy.value,
    };
    try {
      output.value = await options.sign(choice);
    } catch (caught) {
      error.textContent = errorMessage(caught);
    }
  };

  return h(
    'section',
    { class: 'card' },
    h('h3', {}, `Shared access signature for this ${options.kind}`),
    h('div', { class: 'row wrap' }, h('span', {}, 'Permissions:'), permissions),
    h(
      'div',
      { class: 'row wrap' },
      field('Start (UTC, optional)', start),
      field('Expiry (UTC)', expiry),
      field('Stored policy', options.policy),
    ),
    options.extra,
    h(
      'div',
      { class: 'row wrap' },
      h(
        'button',
        { type: 'button', id: `${idPrefix}-generate`, class: 'primary', onclick: () => void generate() },
        'Generate SAS URL',
      ),
      h('button', { type: 'button', id: `${idPrefix}-copy`, onclick: () => void copyUrl(output) }, 'Copy'),
    ),
    error,
    field('SAS URL', output, 'Anyone holding this URL has these rights until it expires (or its policy changes).'),
  );
}

/** The table's SAS card: the common one with the key range (spk, srk, epk, erk). */
function tableSasCard(credentials: Credentials, table: string, policy: HTMLSelectElement): HTMLElement {
  const keys = ['spk', 'srk', 'epk', 'erk'].map((name) => h('input', { id: `sas-${name}`, spellcheck: 'false' }));
  const extra = h(
    'div',
    { class: 'row wrap' },
    field('Start PartitionKey', keys[0]!),
    field('Start RowKey', keys[1]!),
    field('End PartitionKey', keys[2]!),
    field('End RowKey', keys[3]!),
  );
  const sign = async (choice: SasChoice): Promise<string> => {
    const token = await tableSas(credentials, {
      ...choice,
      table,
      startPartitionKey: keys[0]!.value,
      startRowKey: keys[1]!.value,
      endPartitionKey: keys[2]!.value,
      endRowKey: keys[3]!.value,
    });
    return `${tableOrigin()}/${credentials.account}/${table}?${token}`;
  };
  return sasCard({ idPrefix: 'sas', kind: 'table', permissions: tablePermissionSet, policy, extra, sign });
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
