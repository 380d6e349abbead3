// POSIX access control of a Data Lake path (access-control-model, data-lake-storage-access-control):
// owner, owning group, permission bits with the sticky bit, and the ACL's further entries (named
// users and groups, the mask, the default ACL). Shared by the Data Lake API, which keeps and
// enforces it, and the Blob API, which checks it for the same paths; no wire or store here.

/** A path's owner, group, mode and ACL entries beyond the mode's. */
export interface AccessControl {
  readonly owner: string;
  readonly group: string;
  /** Octal mode as 4 digits (sticky bit first): `0750`. */
  readonly mode: string;
  /** The ACL entries beyond the mode's (`user:oid:r-x,mask::r-x,default:…`), as set; '' none. */
  readonly acl: string;
}

/** Who asks, as a bearer token names them: its `oid` and its `groups` claim. */
export interface Caller {
  readonly user: string;
  readonly groups: readonly string[];
}

export const readBit = 4;
export const writeBit = 2;
export const executeBit = 1;

/** The owner and group of what a Shared Key or SAS creates (access-control-model: the superuser). */
export const superuser = '$superuser';

/** One ACL entry: `[default:]type:id:rwx`; `perms` is undefined in a removal list (`user:id`). */
export interface AclEntry {
  readonly isDefault: boolean;
  readonly type: 'user' | 'group' | 'mask' | 'other';
  /** '' for the owner (`user::`), the owning group (`group::`), the mask and other. */
  readonly id: string;
  readonly perms?: number | undefined;
}

const entryPattern = /^(default:)?(user|group|mask|other):([^:,]*)(?::([r-][w-][x-]))?$/;

/** The entries of an ACL's text; undefined when one is malformed (a removal list has no permissions). */
export function parseAclEntries(text: string, withPerms: boolean): AclEntry[] | undefined {
  if (text.trim() === '') return [];
  const entries: AclEntry[] = [];
  for (const part of text.split(',')) {
    const match = entryPattern.exec(part.trim());
    if (match === null || (match[4] === undefined) === withPerms) return undefined;
    const type = match[2] as AclEntry['type'];
    if ((type === 'mask' || type === 'other') && match[3] !== '') return undefined;
    entries.push({
      isDefault: match[1] !== undefined,
      type,
      id: match[3]!,
      perms: match[4] === undefined ? undefined : permsOf(match[4]),
    });
  }
  return entries;
}

export function permsOf(symbols: string): number {
  return (symbols[0] === 'r' ? 4 : 0) | (symbols[1] === 'w' ? 2 : 0) | (symbols[2] === 'x' ? 1 : 0);
}

export function symbolsOf(perms: number): string {
  return `${perms & 4 ? 'r' : '-'}${perms & 2 ? 'w' : '-'}${perms & 1 ? 'x' : '-'}`;
}

export function entryText(entry: AclEntry): string {
  const head = `${entry.isDefault ? 'default:' : ''}${entry.type}:${entry.id}`;
  return entry.perms === undefined ? head : `${head}:${symbolsOf(entry.perms)}`;
}

/** Whether two entries name the same thing (scope, type and id). */
export function sameSubject(a: AclEntry, b: AclEntry): boolean {
  return a.isDefault === b.isDefault && a.type === b.type && a.id === b.id;
}

/** The mode's permissions of the owner (0), the owning group (1) or other (2). */
export function modePerms(mode: string, which: 0 | 1 | 2): number {
  return Number(mode[1 + which]);
}

export function isSticky(mode: string): boolean {
  return mode[0] === '1';
}

/**
 * Whether `caller` has every permission of `wanted` on a path with `access`: the owner by the
 * owner's bits; else a named user entry; else the owning group and named groups the caller is in
 * (their permissions together); else other. The mask limits named users and all groups, not the
 * owner nor other (data-lake-storage-access-control: access check algorithm, the mask).
 */
export function permits(caller: Caller, access: AccessControl, wanted: number): boolean {
  const has = (perms: number) => (perms & wanted) === wanted;
  if (caller.user === access.owner) return has(modePerms(access.mode, 0));
  const entries = (parseAclEntries(access.acl, true) ?? []).filter((entry) => !entry.isDefault);
  const mask = entries.find((entry) => entry.type === 'mask')?.perms ?? 7;
  const named = entries.find((entry) => entry.type === 'user' && entry.id === caller.user);
  if (named !== undefined) return has(named.perms! & mask);
  let member = false;
  let groupPerms = 0;
  if (caller.groups.includes(access.group)) {
    member = true;
    groupPerms |= modePerms(access.mode, 1);
  }
  for (const entry of entries) {
    if (entry.type === 'group' && entry.id !== '' && caller.groups.includes(entry.id)) {
      member = true;
      groupPerms |= entry.perms!;
    }
  }
  if (member) return has(groupPerms & mask);
  return has(modePerms(access.mode, 2));
}

/**
 * The sticky bit of a directory: a child may be deleted or renamed only by its owner or the
 * directory's (data-lake-storage-access-control: the sticky bit; the superuser is never a Caller).
 */
export function stickyAllows(caller: Caller, parent: AccessControl, child: AccessControl): boolean {
  return !isSticky(parent.mode) || caller.user === child.owner || caller.user === parent.owner;
}

/** Who a verified bearer token names, as an ACL check sees them; undefined: no token (the superuser). */
export function callerOfPrincipal(
  principal:
    | {
        readonly objectId?: string | undefined;
        readonly subject?: string | undefined;
        readonly groups?: readonly string[] | undefined;
      }
    | undefined,
): Caller | undefined {
  if (principal === undefined) return undefined;
  return { user: principal.objectId ?? principal.subject ?? '', groups: principal.groups ?? [] };
}

/** A root directory never set: the superuser's, rwxr-x--- (data-lake-storage-access-control: the mask's note). */
export const rootAccessDefault: AccessControl = { owner: superuser, group: superuser, mode: '0750', acl: '' };

/** The access control a blob's or container's stored state keeps (`datalake`), else the defaults. */
export function storedAccess(
  state: { readonly datalake?: AccessControl | undefined; readonly metadata?: readonly (readonly [string, string])[] },
  kind: 'root' | 'path',
): AccessControl {
  if (state.datalake !== undefined && state.datalake !== null) return state.datalake;
  if (kind === 'root') return rootAccessDefault;
  const directory = (state.metadata ?? []).some(
    ([name, value]) => name.toLowerCase() === 'hdi_isfolder' && value === 'true',
  );
  return { owner: superuser, group: superuser, mode: directory ? '0750' : '0640', acl: '' };
}

/** Where an ACL check reads access controls: a file system's root and its paths. */
export interface AclTree {
  /** Undefined: no such file system. */
  root(): Promise<AccessControl | undefined>;
  /** Undefined: no record of that name (a missing path, or a folder only blob names imply). */
  path(name: string): Promise<AccessControl | undefined>;
}

/** What an operation needs besides x on every directory above its path. */
export interface Needs {
  /** On the path's parent (the deepest existing directory above it when the parent is missing). */
  readonly parent?: number;
  /** On the path itself, when it exists. */
  readonly self?: number;
  /** Deleting or renaming the path: its parent's sticky bit holds. */
  readonly sticky?: boolean;
}

/**
 * Why `caller` may not do what `needs` says on `path` ('' the root), or undefined when it may: x on
 * every existing directory above it (the root included), then `needs`. A folder only blob names
 * imply has no record and no ACL: it is passed (chosen). A missing file system or path is not
 * refused here: the operation answers its own 404.
 */
export async function pathRefusal(
  caller: Caller,
  tree: AclTree,
  path: string,
  needs: Needs,
): Promise<string | undefined> {
  const root = await tree.root();
  if (root === undefined) return undefined;
  const segments = path === '' ? [] : path.split('/');
  const above: AccessControl[] = path === '' ? [] : [root];
  for (let i = 1; i < segments.length; i++) {
    const access = await tree.path(segments.slice(0, i).join('/'));
    if (access !== undefined) above.push(access);
  }
  if (above.some((access) => !permits(caller, access, executeBit)))
    return 'The caller has no execute permission on a directory above the path.';
  const parent = above[above.length - 1];
  if (needs.parent !== undefined && parent !== undefined && !permits(caller, parent, needs.parent))
    return 'The caller lacks the permissions this operation needs on the parent directory.';
  if (needs.self === undefined && needs.sticky !== true) return undefined;
  const self = path === '' ? root : await tree.path(path);
  if (self === undefined) return undefined;
  if (needs.self !== undefined && !permits(caller, self, needs.self))
    return 'The caller lacks the permissions this operation needs on the path.';
  if (needs.sticky === true && parent !== undefined && !stickyAllows(caller, parent, self))
    return 'The sticky bit of the parent directory lets only the owners delete or rename this path.';
  return undefined;
}

/**
 * The root directory of a file system a bearer caller creates: its own, its owning group too
 * (data-lake-storage-access-control: assigning the owning group, case 1); undefined for the
 * superuser (the defaults: rootAccessDefault).
 */
export function createdRootAccess(caller: Caller | undefined): AccessControl | undefined {
  return caller && { owner: caller.user, group: caller.user, mode: rootAccessDefault.mode, acl: '' };
}
