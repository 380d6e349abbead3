// The Blob service's deletion settings and deleted containers, in one view: the account's blob
// soft delete policy (DeleteRetentionPolicy of Get/Set Blob Service Properties, days and enabled),
// and the soft-deleted containers (List Containers include=deleted; kept when the server runs with
// --container-soft-delete-days), each with a Restore button (Restore Container).
import { childText, type Credentials } from './api.js';
import { h, replace } from './dom.js';
import { serviceCall } from './service-call.js';
import { attempt, status, succeeded } from './session.js';

const propertiesQuery = { restype: 'service', comp: 'properties' };
/** Days Set Blob Service Properties takes (set-blob-service-properties). */
const daysMin = 1;
const daysMax = 365;

export interface DeletedContainer {
  readonly name: string;
  readonly version: string;
  readonly deletedTime: string;
  readonly remainingRetentionDays: string;
}

function parseXml(text: string): XMLDocument {
  return new DOMParser().parseFromString(text, 'application/xml');
}

async function deleteRetentionPolicy(using: Credentials): Promise<{ enabled: boolean; days: string }> {
  const response = await serviceCall('blob', using, { method: 'GET', path: '', query: propertiesQuery });
  const policy = parseXml(await response.text()).getElementsByTagName('DeleteRetentionPolicy')[0];
  if (policy === undefined) return { enabled: false, days: '' };
  return { enabled: childText(policy, 'Enabled') === 'true', days: childText(policy, 'Days') };
}

/** Sets only the DeleteRetentionPolicy: the service keeps the elements a body leaves out. */
async function setDeleteRetentionPolicy(using: Credentials, enabled: boolean, days: number): Promise<void> {
  const inner = enabled ? `<Enabled>true</Enabled><Days>${days}</Days>` : '<Enabled>false</Enabled>';
  const body =
    '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>' +
    `<DeleteRetentionPolicy>${inner}</DeleteRetentionPolicy></StorageServiceProperties>`;
  await serviceCall('blob', using, {
    method: 'PUT',
    path: '',
    query: propertiesQuery,
    headers: { 'Content-Type': 'application/xml' },
    body,
  });
}

/** Every soft-deleted container of the account, page after page. */
async function listDeletedContainers(using: Credentials): Promise<DeletedContainer[]> {
  const found: DeletedContainer[] = [];
  let marker: string | undefined;
  do {
    const query = { comp: 'list', include: 'deleted', marker };
    const xml = parseXml(await (await serviceCall('blob', using, { method: 'GET', path: '', query })).text());
    for (const entry of xml.getElementsByTagName('Container')) {
      if (childText(entry, 'Deleted') !== 'true') continue;
      found.push({
        name: childText(entry, 'Name'),
        version: childText(entry, 'Version'),
        deletedTime: childText(entry, 'DeletedTime'),
        remainingRetentionDays: childText(entry, 'RemainingRetentionDays'),
      });
    }
    marker = childText(xml.documentElement, 'NextMarker') || undefined;
  } while (marker !== undefined);
  return found;
}

async function restoreContainer(using: Credentials, container: DeletedContainer): Promise<void> {
  await serviceCall('blob', using, {
    method: 'PUT',
    path: `/${encodeURIComponent(container.name)}`,
    query: { restype: 'container', comp: 'undelete' },
    headers: {
      'x-ms-deleted-container-name': container.name,
      'x-ms-deleted-container-version': container.version,
    },
  });
}

/** Shows the view in `root`; `restored` runs after a container came back (the pane lists it). */
export function showBlobRetention(root: HTMLElement, using: Credentials, restored: () => void): void {
  delete root.dataset['policyLoaded'];
  const rows = h('tbody', { id: 'deleted-containers' });
  const list = async (): Promise<void> => {
    const deleted = await attempt(() => listDeletedContainers(using));
    if (deleted === undefined) return;
    replace(
      rows,
      deleted.map((each) => deletedContainerRow(using, each, list, restored)),
    );
    rows.dataset['loaded'] = 'true';
  };
  replace(
    root,
    h('h2', {}, `Deleted blobs and containers of ${using.account}`),
    policyCard(root, using),
    h(
      'section',
      { class: 'card' },
      h('h3', {}, 'Deleted containers'),
      h(
        'p',
        { class: 'hint' },
        'Kept when the server runs with --container-soft-delete-days (Azure: an account setting).',
      ),
      h(
        'table',
        { class: 'grid' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Deleted'), h('th', {}, 'Days left'), h('th', {}))),
        rows,
      ),
    ),
  );
  void list();
}

/** The blob soft delete card: the policy as read (then `root` is marked policyLoaded), saved as edited. */
function policyCard(root: HTMLElement, using: Credentials): HTMLElement {
  const enabled = h('input', { type: 'checkbox', id: 'retention-enabled' });
  const days = h('input', {
    type: 'number',
    id: 'retention-days',
    min: String(daysMin),
    max: String(daysMax),
    'aria-label': 'Days kept',
  });
  const save = async (): Promise<void> => {
    const count = Number(days.value);
    if (enabled.checked && !(Number.isInteger(count) && count >= daysMin && count <= daysMax)) {
      status(`Days kept: a whole number from ${daysMin} to ${daysMax}.`, 'error');
      return;
    }
    if (!(await succeeded(() => setDeleteRetentionPolicy(using, enabled.checked, count)))) return;
    status(enabled.checked ? `Deleted blobs are kept ${count} days.` : 'Deleted blobs are no longer kept.');
  };
  void (async () => {
    const policy = await attempt(() => deleteRetentionPolicy(using));
    if (policy === undefined) return;
    enabled.checked = policy.enabled;
    days.value = policy.days;
    root.dataset['policyLoaded'] = 'true';
  })();
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, 'Blob soft delete'),
    h('p', { class: 'hint' }, 'Deleted blobs, snapshots and versions are kept, restorable, for the days set here.'),
    h(
      'div',
      { class: 'row wrap' },
      h('label', { class: 'check' }, enabled, 'Keep deleted blobs'),
      h('label', {}, 'Days kept ', days),
      h('button', { type: 'button', id: 'retention-save', onclick: () => void save() }, 'Save'),
    ),
  );
}

function deletedContainerRow(
  using: Credentials,
  container: DeletedContainer,
  changed: () => Promise<void>,
  restored: () => void,
): HTMLElement {
  const restore = async (): Promise<void> => {
    if (!(await succeeded(() => restoreContainer(using, container)))) return;
    status(`Container ${container.name} restored.`);
    restored();
    await changed();
  };
  return h(
    'tr',
    { 'data-deleted-container': container.name, 'data-version': container.version },
    h('td', {}, container.name),
    h('td', {}, container.deletedTime),
    h('td', { class: 'number' }, container.remainingRetentionDays),
    h('td', {}, h('button', { type: 'button', class: 'container-restore', onclick: () => void restore() }, 'Restore')),
  );
}
