// Container soft delete (https://learn.microsoft.com/azure/storage/blobs/soft-delete-container-overview)
// and Restore Container (https://learn.microsoft.com/rest/api/storageservices/restore-container).
// Azure turns it on per account through the management plane (containerDeleteRetentionPolicy);
// here the server's --container-soft-delete-days does, for every account. Delete Container then
// keeps the container, whole, for those days (BlobStore.deleteContainer's keep); List Containers
// with include=deleted lists it, and Restore Container brings it back under its name.
import { StorageError } from '../../errors.js';
import { firstHeader } from '../../http/headers.js';
import type { Reply } from '../../http/respond.js';
import type { ServiceCall } from '../../http/service-definition.js';
import type { ContainerKeep, ContainerRecord, DeletedContainerRecord } from '../../storage/blob-store.js';
import { checkContainerName } from '../wire/container-names.js';
import { nowMs } from './access.js';
import { decodeContainerState, encodeContainerState } from '../state/container.js';
import type { BlobServices } from '../services.js';
import { visibleEtag } from '../wire/etag.js';
import { httpDate, newEtag } from '../wire/reply-headers.js';

type Call = ServiceCall<BlobServices>;

const dayMs = 24 * 60 * 60_000;

/** What Delete Container keeps, now: undefined when soft delete is off. */
export function containerKeep(call: Call): ContainerKeep | undefined {
  const days = call.services.containerSoftDeleteDays;
  if (days === 0) return undefined;
  const deletedMs = nowMs(call);
  return { deletedMs, expiresMs: deletedMs + days * dayMs };
}

/** A container as List Containers shows it; `deleted` for a soft-deleted one. */
export interface ListedRecord extends ContainerRecord {
  readonly deleted?: { readonly version: string; readonly deletedMs: number; readonly remainingDays: number };
}

/**
 * Marker text of a soft-deleted container: its name and version, apart by a character no container
 * name has, so a marker of a name alone (a live container) reads as before.
 */
const markerSeparator = '!';

/**
 * A page of List Containers with include=deleted: live and soft-deleted containers by name, a live
 * one before the soft-deleted ones of its name, those by version (chosen: the service's order of
 * a name's entries is not documented). Answers the page and the marker of the entry after it ('' none).
 */
export async function listWithDeleted(
  call: Call,
  prefix: string,
  marker: string | undefined,
  pageSize: number,
): Promise<{ readonly page: ListedRecord[]; readonly nextMarker: string }> {
  const [markerName, markerVersion] = (marker ?? '').split(markerSeparator, 2) as [string, string | undefined];
  const atMs = call.services.clock.nowMs();
  const blobs = call.services.blobs;
  // A marker of a soft-deleted entry starts the live ones after its name.
  const liveFrom = markerVersion === undefined ? markerName || undefined : `${markerName}\u0001`;
  const deletedFrom = markerName === '' ? undefined : { name: markerName, version: markerVersion ?? '' };
  const [live, deleted] = await Promise.all([
    blobs.listContainers(call.account, prefix, liveFrom, pageSize + 1),
    blobs.listDeletedContainers(call.account, prefix, deletedFrom, pageSize + 1),
  ]);
  const shown = deleted.filter((each) => each.expiresMs > atMs).map((each) => deletedEntry(each, atMs));
  const merged: ListedRecord[] = [];
  let d = 0;
  for (const each of live) {
    while (d < shown.length && shown[d]!.name < each.name) merged.push(shown[d++]!);
    merged.push(each);
  }
  merged.push(...shown.slice(d));
  const next = merged[pageSize];
  const nextMarker =
    next === undefined
      ? ''
      : next.deleted === undefined
        ? next.name
        : `${next.name}${markerSeparator}${next.deleted.version}`;
  return { page: merged.slice(0, pageSize), nextMarker };
}

function deletedEntry(record: DeletedContainerRecord, atMs: number): ListedRecord {
  const { version, deletedMs, expiresMs, ...rest } = record;
  return { ...rest, deleted: { version, deletedMs, remainingDays: Math.ceil((expiresMs - atMs) / dayMs) } };
}

/**
 * Restore Container: 201 Created with the container's ETag and Last-Modified. The URL names the
 * container to restore as; chosen: only under its own name (renaming on restore is not served:
 * 400). An unknown or purged version is 404 ContainerNotFound (chosen); a name in use 409
 * ContainerAlreadyExists. The restored container gets a new ETag and Last-Modified and no lease
 * (chosen: a lease held when it was deleted does not outlive the delete).
 */
export async function restoreContainer(call: Call, name: string): Promise<Reply> {
  checkContainerName(name);
  const deletedName = requiredHeader(call, 'x-ms-deleted-container-name');
  const version = requiredHeader(call, 'x-ms-deleted-container-version');
  if (deletedName !== name) {
    throw new StorageError(
      'InvalidHeaderValue',
      'Cerulean restores a deleted container under its own name only: x-ms-deleted-container-name must be the container of the URL.',
      undefined,
      [
        ['HeaderName', 'x-ms-deleted-container-name'],
        ['HeaderValue', deletedName],
      ],
    );
  }
  const atMs = nowMs(call);
  const [found] = await call.services.blobs.listDeletedContainers(call.account, name, { name, version }, 1);
  if (found === undefined || found.name !== name || found.version !== version || found.expiresMs <= atMs) {
    throw new StorageError('ContainerNotFound');
  }
  const { lease: _lease, ...state } = decodeContainerState(found.state);
  const record = { name, etag: newEtag(atMs), lastModifiedMs: atMs, state: encodeContainerState(state) };
  const outcome = await call.services.blobs.restoreContainer(call.account, version, record);
  if (outcome === 'containerExists') throw new StorageError('ContainerAlreadyExists');
  if (outcome === 'notFound') throw new StorageError('ContainerNotFound');
  return { status: 201, headers: { ETag: visibleEtag(record.etag), 'Last-Modified': httpDate(atMs) } };
}

function requiredHeader(call: Call, name: string): string {
  const value = firstHeader(call.headers[name]);
  if (value === undefined || value === '') {
    throw new StorageError('MissingRequiredHeader', undefined, undefined, [['HeaderName', name]]);
  }
  return value;
}
