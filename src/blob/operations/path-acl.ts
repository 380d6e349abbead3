// The Blob API on a hierarchical namespace's paths (docs/datalake.md): every account has one, and
// the service checks a bearer token's caller against a path's POSIX ACL for Blob API requests too
// (data-lake-storage-access-control-model), with the Data Lake API's rules (domain/posix-acl.ts):
// Get Blob reads (r on the blob), Put Blob creates (w and x on its directory), Delete Blob deletes
// (w and x on its directory, the sticky bit), Get Blob Properties traverses; x on every directory
// above. Shared Key and SAS are the superuser and are not checked. Other Blob API operations are
// not checked (chosen: docs/datalake.md).
import { StorageError } from '../../errors.js';
import type { Reply } from '../../http/respond.js';
import {
  callerOfPrincipal,
  pathRefusal,
  storedAccess,
  type AccessControl,
  type Needs,
} from '../../domain/posix-acl.js';
import type { BlobCall, BlobOf } from './access.js';

type Handler = (call: BlobCall, resource: BlobOf) => Promise<Reply>;

/** `handler`, once a bearer caller's ACL check of the blob's path passed (else 403 AuthorizationPermissionMismatch). */
export function checkedOnPath(needs: Needs, handler: Handler): Handler {
  return async (call, resource) => {
    const caller = callerOfPrincipal(call.access.principal);
    if (caller === undefined) return handler(call, resource);
    const { container } = resource;
    const blobs = call.services.blobs;
    const tree = {
      root: async () => {
        const record = await blobs.getContainer(call.account, container);
        return record && storedAccess(JSON.parse(record.state) as { datalake?: AccessControl }, 'root');
      },
      path: async (name: string) => {
        const record = await blobs.getBlob(call.account, { container, name, snapshot: '' });
        return record && storedAccess(JSON.parse(record.state) as { datalake?: AccessControl }, 'path');
      },
    };
    const path = resource.blob.replace(/^\/+/, '').replace(/\/+$/, '');
    const refusal = await pathRefusal(caller, tree, path, needs);
    if (refusal !== undefined) throw new StorageError('AuthorizationPermissionMismatch', undefined, refusal);
    return handler(call, resource);
  };
}
