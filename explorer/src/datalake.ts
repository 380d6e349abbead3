// The explorer's client of the Data Lake Storage Gen2 API (https://learn.microsoft.com/rest/api/storageservices/data-lake-storage-gen2),
// which this server answers on the Blob service's port (docs/datalake.md): a path's owner, group,
// permissions and ACL (Get Properties `?action=getAccessControl`, Set Access Control), and Create
// Path of a directory. The card shows and edits one path's access control.
import type { Credentials } from './api.js';
import { blobPath } from './blob-api.js';
import { field, h, replace } from './dom.js';
import { errorMessage, status, succeeded } from './session.js';
import { serviceCall } from './service-call.js';

export interface PathAccess {
  readonly owner: string;
  readonly group: string;
  /** `rwxr-x---`, with `+` when the ACL has entries beyond the permissions. */
  readonly permissions: string;
  /** The whole ACL: `user::rwx,group::r-x,other::---,user:alice:r-x`. */
  readonly acl: string;
  /** `directory` or `file`. */
  readonly resourceType: string;
}

export async function getAccessControl(
  credentials: Credentials,
  filesystem: string,
  path: string,
): Promise<PathAccess> {
  const response = await serviceCall('blob', credentials, {
    method: 'HEAD',
    path: blobPath(filesystem, path),
    query: { action: 'getAccessControl' },
  });
  const header = (name: string) => response.headers.get(name) ?? '';
  return {
    owner: header('x-ms-owner'),
    group: header('x-ms-group'),
    permissions: header('x-ms-permissions'),
    acl: header('x-ms-acl'),
    resourceType: header('x-ms-resource-type'),
  };
}

/** What one Set Access Control changes: owner and group (blank: unchanged), and permissions or the ACL. */
export interface AccessChange {
  readonly owner: string;
  readonly group: string;
  readonly permissions?: string;
  readonly acl?: string;
}

export async function setAccessControl(
  credentials: Credentials,
  filesystem: string,
  path: string,
  change: AccessChange,
): Promise<void> {
  const headers: Record<string, string> = {};
  if (change.owner !== '') headers['x-ms-owner'] = change.owner;
  if (change.group !== '') headers['x-ms-group'] = change.group;
  if (change.permissions !== undefined) headers['x-ms-permissions'] = change.permissions;
  if (change.acl !== undefined) headers['x-ms-acl'] = change.acl;
  await serviceCall('blob', credentials, {
    method: 'PATCH',
    path: blobPath(filesystem, path),
    query: { action: 'setAccessControl' },
    headers,
  });
}

/** Create Path of a directory (parents made as needed); 409 PathAlreadyExists when the path is there. */
export async function createDirectory(credentials: Credentials, filesystem: string, path: string): Promise<void> {
  await serviceCall('blob', credentials, {
    method: 'PUT',
    path: blobPath(filesystem, path),
    query: { resource: 'directory' },
    headers: { 'If-None-Match': '*' },
  });
}

/**
 * One path's owner, group, permissions and ACL, and a form that sets them: owner, group and
 * permissions in one request, or owner, group and the ACL in another (the API takes permissions or
 * an ACL, never both). Shows the service's refusal when the account has no hierarchical namespace.
 */
export function accessCard(using: Credentials, filesystem: string, path: string): HTMLElement {
  const card = h('section', { class: 'card', id: 'access-card' }, h('h3', {}, 'Access control (Data Lake)'));
  void fillAccessCard(card, using, filesystem, path);
  return card;
}

async function fillAccessCard(card: HTMLElement, using: Credentials, filesystem: string, path: string) {
  let access: PathAccess;
  try {
    access = await getAccessControl(using, filesystem, path);
  } catch (error) {
    replace(
      card,
      h('h3', {}, 'Access control (Data Lake)'),
      h('p', { class: 'hint', id: 'access-unavailable' }, `No access control: ${errorMessage(error)}`),
    );
    return;
  }
  const save = async (change: AccessChange, what: string) => {
    if (!(await succeeded(() => setAccessControl(using, filesystem, path, change)))) return;
    status(`${what} of ${path} set.`);
    await fillAccessCard(card, using, filesystem, path);
  };
  const shown = (label: string, id: string, value: string) => h('tr', {}, h('th', {}, label), h('td', { id }, value));
  replace(
    card,
    h('h3', {}, `Access control (Data Lake ${access.resourceType})`),
    h(
      'table',
      { class: 'messages', id: 'access-shown' },
      h(
        'tbody',
        {},
        shown('Owner', 'access-shown-owner', access.owner),
        shown('Group', 'access-shown-group', access.group),
        shown('Permissions', 'access-shown-permissions', access.permissions),
        shown('ACL', 'access-shown-acl', access.acl),
      ),
    ),
    ...accessForm(access, save),
  );
}

/** Inputs for owner, group, permissions and the ACL, filled with `access`, and the two ways to save them. */
function accessForm(access: PathAccess, save: (change: AccessChange, what: string) => Promise<void>): HTMLElement[] {
  const owner = h('input', { id: 'access-owner', value: access.owner, spellcheck: 'false' });
  const group = h('input', { id: 'access-group', value: access.group, spellcheck: 'false' });
  const permissions = h('input', {
    id: 'access-permissions',
    value: access.permissions.replace(/\+$/, ''),
    spellcheck: 'false',
    placeholder: 'rwxr-x--- or 0750',
  });
  const acl = h('textarea', { id: 'access-acl', rows: 3, spellcheck: 'false' });
  acl.value = access.acl;
  const who = () => ({ owner: owner.value.trim(), group: group.value.trim() });
  const button = (id: string, label: string, onclick: () => void, primary = false) =>
    h('button', { type: 'button', id, ...(primary ? { class: 'primary' } : {}), onclick }, label);
  return [
    h('div', { class: 'row wrap' }, field('Owner', owner), field('Group', group)),
    field('Permissions', permissions, 'Symbolic (rwxr-x---, t or T for the sticky bit) or octal (0750).'),
    button(
      'access-save-permissions',
      'Set owner, group and permissions',
      () => void save({ ...who(), permissions: permissions.value.trim() }, 'Permissions'),
      true,
    ),
    field('ACL', acl, 'Entries [default:]user|group|mask|other:[id]:rwx, comma-separated.'),
    button(
      'access-save-acl',
      'Set owner, group and ACL',
      () => void save({ ...who(), acl: acl.value.replace(/\s+/g, '') }, 'ACL'),
    ),
  ];
}
