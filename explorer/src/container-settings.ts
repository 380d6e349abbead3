// One container's settings: its public access level and its stored access policies, which Get and
// Set Container ACL read and write together (https://learn.microsoft.com/rest/api/storageservices/set-container-acl),
// and a service SAS URL for the container (optionally naming one of those policies).
import { parseSignedIdentifiers, signedIdentifiersXml, type AccessPolicy, type Credentials } from './api.js';
import { blobServiceSasUrl } from './blob-api.js';
import { field, h, replace } from './dom.js';
import { policyEditor, sasCard, showPolicyChoices, type PermissionSet } from './policies.js';
import { serviceCall } from './service-call.js';
import { attempt, status, succeeded } from './session.js';

/** x-ms-blob-public-access: absent for private; `blob` reads blobs anonymously; `container` lists them too. */
export type PublicAccess = 'private' | 'blob' | 'container';

export interface ContainerAcl {
  readonly publicAccess: PublicAccess;
  readonly policies: AccessPolicy[];
}

/** A container's permissions in the order a SAS and a policy write them (create-service-sas). */
const containerPermissions: PermissionSet = {
  letters: ['r', 'a', 'c', 'w', 'd', 'l'],
  names: { r: 'read', a: 'add', c: 'create', w: 'write', d: 'delete', l: 'list' },
};

const aclPath = (container: string): string => `/${encodeURIComponent(container)}`;

export async function getContainerAcl(credentials: Credentials, container: string): Promise<ContainerAcl> {
  const response = await serviceCall('blob', credentials, {
    method: 'GET',
    path: aclPath(container),
    query: { restype: 'container', comp: 'acl' },
  });
  const level = response.headers.get('x-ms-blob-public-access');
  const publicAccess = level === 'blob' || level === 'container' ? level : 'private';
  return { publicAccess, policies: parseSignedIdentifiers(await response.text()) };
}

/** Set Container ACL replaces both the level and the policies: callers pass the ones to keep. */
export async function setContainerAcl(credentials: Credentials, container: string, acl: ContainerAcl): Promise<void> {
  const headers: Record<string, string> = { 'Content-Type': 'application/xml' };
  if (acl.publicAccess !== 'private') headers['x-ms-blob-public-access'] = acl.publicAccess;
  await serviceCall('blob', credentials, {
    method: 'PUT',
    path: aclPath(container),
    query: { restype: 'container', comp: 'acl' },
    headers,
    body: signedIdentifiersXml(acl.policies),
  });
}

/** Shows the settings of `container` in `root`: public access, stored policies, a SAS URL. */
export function showContainerSettings(root: HTMLElement, credentials: Credentials, container: string): void {
  let stored: ContainerAcl = { publicAccess: 'private', policies: [] };
  const level = h(
    'select',
    { id: 'container-public-access' },
    h('option', { value: 'private' }, 'private: every request signed'),
    h('option', { value: 'blob' }, 'blob: anyone may read a blob by its URL'),
    h('option', { value: 'container' }, 'container: anyone may also list the blobs'),
  );
  const saveLevel = async (): Promise<void> => {
    const acl = { ...stored, publicAccess: level.value as PublicAccess };
    if (!(await succeeded(() => setContainerAcl(credentials, container, acl)))) return;
    status(`Public access of ${container}: ${acl.publicAccess}.`);
    await load();
  };
  const policy = h('select', { id: 'container-sas-policy' });
  const editor = policyEditor({
    idPrefix: 'container-policy',
    kind: 'container',
    permissions: containerPermissions,
    save: async (policies) => {
      if (!(await succeeded(() => setContainerAcl(credentials, container, { ...stored, policies })))) return false;
      await load();
      return true;
    },
  });
  const sign = (choice: Parameters<typeof blobServiceSasUrl>[1]) => blobServiceSasUrl(credentials, choice);
  replace(
    root,
    h('h3', {}, `Settings of ${container}`),
    h(
      'section',
      { class: 'card' },
      h('h3', {}, 'Public access'),
      field('Anonymous requests', level, 'Anonymous requests may read, never write.'),
      h(
        'button',
        { type: 'button', id: 'container-public-access-save', class: 'primary', onclick: () => void saveLevel() },
        'Save public access',
      ),
    ),
    editor.root,
    sasCard({
      idPrefix: 'container-sas',
      kind: 'container',
      permissions: containerPermissions,
      policy,
      sign: (choice) => sign({ ...choice, container }),
    }),
  );

  async function load(): Promise<void> {
    const acl = await attempt(() => getContainerAcl(credentials, container));
    if (acl === undefined) return;
    stored = acl;
    level.value = acl.publicAccess;
    editor.show(acl.policies);
    showPolicyChoices(policy, acl.policies);
    root.dataset['loaded'] = String(Date.now());
  }

  void load();
}
