// Data Lake access control as `cerulean copy`, `backup` and `restore` carry it: each path's owner,
// group, permissions and ACL, read with Get Properties `?action=getAccessControl` and written with
// Set Access Control (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/update),
// through the official Data Lake SDK. Only an account with a hierarchical namespace has them: Get
// Account Information's `x-ms-is-hns-enabled` says so (accountIsHierarchical). A source or
// destination that will not answer must not stop the copy: the first refusal is remembered as the
// reason, and the remaining paths are not asked again (as blob-tags.ts does for index tags).
import type { BlobServiceClient } from '@azure/storage-blob';
import type {
  AccessControlType,
  DataLakeFileSystemClient,
  PathAccessControlItem,
  PathPermissions,
  RolePermissions,
} from '@azure/storage-file-datalake';

/** A path's access control as the service words it: `rwxr-x---` (a trailing `+` dropped) and the whole ACL. */
export interface PathAccess {
  readonly owner: string;
  readonly group: string;
  readonly permissions: string;
  readonly acl: string;
}

/** Statuses by which an end says it will not answer access control, rather than failing this once. */
const refusalStatuses = new Set([400, 403, 405, 409, 501]);

function refusal(error: unknown, operation: string): string | undefined {
  const { statusCode, code } = error as { statusCode?: number; code?: string };
  if (statusCode === undefined || !refusalStatuses.has(statusCode)) return undefined;
  return `${operation} answered ${statusCode} ${code ?? ''}`.trimEnd();
}

/**
 * Whether the account has a hierarchical namespace (Get Account Information). An account that
 * will not answer (a SAS scoped to a container) is taken as one without: nothing is lost by
 * that but its paths' access control, and the caller says so.
 */
export async function accountIsHierarchical(service: BlobServiceClient): Promise<boolean> {
  try {
    return (await service.getAccountInfo()).isHierarchicalNamespaceEnabled === true;
  } catch (error) {
    if (refusal(error, 'Get Account Information') !== undefined) return false;
    throw error;
  }
}

/** Reads the access control of one file system's paths; `notRead` says why not, once refused. */
export class AccessReader {
  notRead: string | undefined;

  constructor(
    private readonly filesystem: DataLakeFileSystemClient,
    hierarchical: boolean,
  ) {
    if (!hierarchical) this.notRead = 'the source account has no hierarchical namespace';
  }

  /** The path's access control, or undefined when the source does not answer it (or the path is gone). */
  async read(path: string): Promise<PathAccess | undefined> {
    if (this.notRead !== undefined) return undefined;
    try {
      const response = await this.filesystem.getFileClient(path).getAccessControl();
      const headers = response._response.headers;
      const permissions = headers.get('x-ms-permissions');
      if (response.owner === undefined || response.group === undefined || permissions === undefined) {
        this.notRead = 'the source answers getAccessControl without owner, group or permissions';
        return undefined;
      }
      const acl = headers.get('x-ms-acl') ?? '';
      return { owner: response.owner, group: response.group, permissions: permissions.replace(/\+$/, ''), acl };
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      this.notRead = refusal(error, 'getAccessControl');
      if (this.notRead === undefined) throw error;
      return undefined;
    }
  }
}

/** Writes access control to one file system's paths; `notWritten` says why not, once refused. */
export class AccessWriter {
  notWritten: string | undefined;

  constructor(
    readonly filesystem: DataLakeFileSystemClient,
    hierarchical: boolean,
  ) {
    if (!hierarchical) this.notWritten = 'the destination account has no hierarchical namespace';
  }

  /**
   * Owner, group and ACL in one Set Access Control (the ACL's user::, group:: and other:: entries
   * are the permissions); a sticky bit, which an ACL cannot say, by a second one with permissions.
   * Answers whether it was written.
   */
  async write(path: string, access: PathAccess): Promise<boolean> {
    if (this.notWritten !== undefined) return false;
    const client = this.filesystem.getFileClient(path);
    try {
      await client.setAccessControl(parseAcl(access.acl), { owner: access.owner, group: access.group });
      if (/[tT]$/.test(access.permissions)) await client.setPermissions(parsePermissions(access.permissions));
      return true;
    } catch (error) {
      this.notWritten = refusal(error, 'setAccessControl');
      if (this.notWritten === undefined) throw error;
      return false;
    }
  }
}

export function sameAccess(a: PathAccess, b: PathAccess): boolean {
  return a.owner === b.owner && a.group === b.group && a.permissions === b.permissions && a.acl === b.acl;
}

/** `owner ann, group staff, rwxr-x---, user:bob:r-x` for a difference line. */
export function describeAccess(access: PathAccess): string {
  return `owner ${access.owner}, group ${access.group}, ${access.permissions}, ACL ${access.acl || 'none'}`;
}

function role(symbols: string): RolePermissions {
  return { read: symbols[0] === 'r', write: symbols[1] === 'w', execute: /[xt]/.test(symbols[2] ?? '') };
}

/** `rwxr-x--t` as the SDK's object (the SDK writes it back as the same text). */
export function parsePermissions(text: string): PathPermissions {
  return {
    owner: role(text.slice(0, 3)),
    group: role(text.slice(3, 6)),
    other: role(text.slice(6, 9)),
    stickyBit: /[tT]/.test(text[8] ?? ''),
    extendedAcls: false,
  };
}

/** `user::rwx,default:user:bob:r-x` as the SDK's entries (the SDK writes them back as the same text). */
export function parseAcl(text: string): PathAccessControlItem[] {
  if (text === '') return [];
  return text.split(',').map((entry) => {
    const defaultScope = entry.startsWith('default:');
    const [type, entityId, permissions] = (defaultScope ? entry.slice('default:'.length) : entry).split(':');
    return {
      defaultScope,
      accessControlType: type as AccessControlType,
      entityId: entityId ?? '',
      permissions: role(permissions ?? ''),
    };
  });
}
