// ACL checks of the Data Lake API (data-lake-storage-access-control: levels of permission, common
// scenarios, the sticky bit; the rules are domain/posix-acl.ts's). Only a bearer token's caller is
// checked: Shared Key and SAS carry no identity and act as the superuser (access-control-model), as
// does every request on file systems (roles, not ACLs, govern those; Cerulean has no roles). A
// refusal is 403 AuthorizationPermissionMismatch. The file system's root directory keeps its
// access control in the container's state (`datalake`), every other path in its blob's (state.ts).
import { StorageError } from '../../errors.js';
import {
  callerOfPrincipal,
  pathRefusal,
  rootAccessDefault,
  storedAccess,
  type AccessControl,
  type Caller,
  type Needs,
} from '../../domain/posix-acl.js';
import { accessOf } from '../state.js';
import { findPath, type DatalakeCall } from './access.js';

export { rootAccessDefault };

/** Who a bearer token names; undefined for Shared Key and SAS (the superuser, never checked). */
export function callerOf(call: DatalakeCall): Caller | undefined {
  return callerOfPrincipal(call.access.principal);
}

/** The root directory's access control, from the container's state; undefined when the file system is missing. */
export async function rootAccess(call: DatalakeCall, filesystem: string): Promise<AccessControl | undefined> {
  const record = await call.services.blobs.getContainer(call.account, filesystem);
  return record && storedAccess(JSON.parse(record.state) as { datalake?: AccessControl }, 'root');
}

export function refused(detail?: string): StorageError {
  return new StorageError('AuthorizationPermissionMismatch', undefined, detail);
}

/** Throws 403 unless the bearer caller may do what `needs` says on `path` ('' the root); nothing for the superuser. */
export async function requireAccess(call: DatalakeCall, filesystem: string, path: string, needs: Needs): Promise<void> {
  const caller = callerOf(call);
  if (caller === undefined) return;
  const tree = {
    root: () => rootAccess(call, filesystem),
    path: async (name: string) => {
      const found = await findPath(call, filesystem, name);
      return found && accessOf(found.state);
    },
  };
  const refusal = await pathRefusal(caller, tree, path, needs);
  if (refusal !== undefined) throw refused(refusal);
}
