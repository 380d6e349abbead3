// A path's ACL as the Data Lake API takes and answers it (x-ms-acl: `[default:]type:id:rwx,…`;
// data-lake-storage-access-control): the whole list from a path's access control, a list set,
// modified or removed (Set Access Control and its recursive form), and what a new path inherits
// from its parent's default ACL. The mode keeps the owner's, owning group's and other's entries;
// the rest (named users and groups, mask, default entries) is the stored `acl` text.
import { invalidHeaderValue } from '../errors.js';
import {
  entryText,
  modePerms,
  parseAclEntries,
  sameSubject,
  type AccessControl,
  type AclEntry,
} from '../domain/posix-acl.js';

export type AclMode = 'set' | 'modify' | 'remove';

/** Every entry of the path's ACL: the mode's three, then the stored ones. */
export function entriesOf(access: AccessControl): AclEntry[] {
  const base: AclEntry[] = [
    { isDefault: false, type: 'user', id: '', perms: modePerms(access.mode, 0) },
    { isDefault: false, type: 'group', id: '', perms: modePerms(access.mode, 1) },
    { isDefault: false, type: 'other', id: '', perms: modePerms(access.mode, 2) },
  ];
  return [...base, ...(parseAclEntries(access.acl, true) ?? [])];
}

const isBase = (entry: AclEntry) => !entry.isDefault && entry.id === '' && entry.type !== 'mask';
const rank = (entry: AclEntry) =>
  (entry.isDefault ? 10 : 0) + { user: 0, group: 2, mask: 4, other: 5 }[entry.type] + (entry.id === '' ? 0 : 1);

/** The access control whose ACL is `entries` (their base entries set the mode's digits; the sticky bit stays). */
function withEntries(access: AccessControl, entries: readonly AclEntry[]): AccessControl {
  const digit = (type: AclEntry['type']) => entries.find((entry) => isBase(entry) && entry.type === type)?.perms ?? 0;
  const rest = entries
    .filter((entry) => !isBase(entry))
    .sort((a, b) => rank(a) - rank(b))
    .map(entryText);
  return {
    ...access,
    mode: `${access.mode[0]}${digit('user')}${digit('group')}${digit('other')}`,
    acl: rest.join(','),
  };
}

/** x-ms-acl as getAccessControl answers it: the mode's entries first, then the others in order. */
export function aclText(access: AccessControl): string {
  return entriesOf(access)
    .sort((a, b) => rank(a) - rank(b))
    .map(entryText)
    .join(',');
}

/**
 * `text` applied to `access`: `set` replaces the named, mask and default entries with the list's
 * and the base ones it names; `modify` adds or replaces each entry it names; `remove` drops the
 * entries it names (`user:oid`, `default:group:gid`, `mask`), the base ones cannot be. A file has
 * no default ACL: default entries are left out of its list (`files`: drop them). Malformed: 400.
 */
export function applyAcl(access: AccessControl, text: string, mode: AclMode, directory: boolean): AccessControl {
  const given = parseAclEntries(text, mode !== 'remove');
  if (given === undefined || given.length === 0) throw invalidHeaderValue('x-ms-acl', text);
  const list = directory ? given : given.filter((entry) => !entry.isDefault);
  const current = entriesOf(access);
  if (mode === 'remove') {
    if (list.some(isBase)) throw invalidHeaderValue('x-ms-acl', text);
    return withEntries(
      access,
      current.filter((entry) => !list.some((gone) => sameSubject(entry, gone))),
    );
  }
  if (mode === 'set') {
    const kept = current.filter((entry) => isBase(entry) && !list.some((next) => sameSubject(entry, next)));
    return withEntries(access, [...kept, ...list]);
  }
  const kept = current.filter((entry) => !list.some((next) => sameSubject(entry, next)));
  return withEntries(access, [...kept, ...list]);
}

/**
 * The access control of a new path under `parent` (data-lake-storage-access-control: default
 * permissions on new files and directories). Without a default ACL on the parent, the mode is
 * `requested & ~umask` (path/create, x-ms-umask). With one, the umask is not used (path/create:
 * it applies "when the parent folder does not have a default ACL") and, as POSIX does, the new
 * path's access ACL is the default ACL with the owner's, the mask's (else the owning group's) and
 * other's permissions limited to the requested mode's; a directory also gets the default ACL as its
 * own default ACL. Base entries the default ACL lacks take the masked mode's (chosen).
 */
export function inheritedAccess(
  parent: AccessControl,
  directory: boolean,
  requested: string,
  masked: string,
  owner: string,
  group: string,
): AccessControl {
  const defaults = entriesOf(parent).filter((entry) => entry.isDefault);
  const plain: AccessControl = { owner, group, mode: masked, acl: '' };
  if (defaults.length === 0) return plain;
  const asAccess = defaults.map((entry) => ({ ...entry, isDefault: false }));
  const hasMask = asAccess.some((entry) => entry.type === 'mask');
  const limited = asAccess.map((entry) => {
    const limit =
      entry.type === 'user' && entry.id === ''
        ? modePerms(requested, 0)
        : entry.type === 'other'
          ? modePerms(requested, 2)
          : entry.type === 'mask' || (!hasMask && entry.type === 'group' && entry.id === '')
            ? modePerms(requested, 1)
            : 7;
    return { ...entry, perms: entry.perms! & limit };
  });
  const base = entriesOf(plain).filter((entry) => !limited.some((given) => sameSubject(entry, given)));
  const entries = [...base, ...limited, ...(directory ? defaults : [])];
  return withEntries({ ...plain, mode: `${requested[0]}000` }, entries);
}
