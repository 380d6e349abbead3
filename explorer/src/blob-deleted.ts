// Soft-deleted blobs in the explorer's folder listing (blob soft delete,
// https://learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview): "Show deleted" lists
// them too (List Blobs include=deleted), each marked with its deletion time and the days it is
// kept, and "Undelete" restores one (Undelete Blob, PUT ?comp=undelete).
import type { Credentials } from './api.js';
import { undeleteBlob, type BlobItem } from './blob-api.js';
import { h } from './dom.js';
import { status, succeeded } from './session.js';
import { sizeText } from './sizes.js';

/** What a blob delete's confirmation says: whether it can be undone depends on the account's policy. */
export const undoneText = 'Unless the account keeps deleted blobs (soft delete), this cannot be undone.';

/** The "Show deleted" tick box of the container's toolbar; `changed` lists the folder again. */
export function showDeletedBox(changed: () => void): { box: HTMLInputElement; label: HTMLElement } {
  const box = h('input', { type: 'checkbox', id: 'show-deleted' });
  box.addEventListener('change', changed);
  return { box, label: h('label', { class: 'check' }, box, 'Show deleted') };
}

/** `deleted 2026-…, 7 days left`: when the blob was deleted and how long the service keeps it. */
export function deletedText(blob: BlobItem): string {
  const days = blob.remainingRetentionDays;
  const left = days === '' ? '' : `, ${days} day${days === '1' ? '' : 's'} left`;
  return `deleted ${blob.deletedTime}${left}`;
}

/** A soft-deleted blob's row (no tick box: bulk actions are for live blobs); `changed` runs after an undelete. */
export function deletedBlobRow(
  using: Credentials,
  container: string,
  blob: BlobItem,
  shownName: string,
  changed: () => Promise<void>,
): HTMLElement {
  const undelete = async (): Promise<void> => {
    if (!(await succeeded(() => undeleteBlob(using, container, blob.name)))) return;
    status(`Blob ${blob.name} undeleted.`);
    await changed();
  };
  return h(
    'tr',
    { 'data-blob': blob.name, 'data-deleted': 'true', class: 'deleted' },
    h('td', {}),
    h('td', { class: 'blob-name' }, shownName),
    h('td', { class: 'number' }, sizeText(blob.sizeBytes)),
    h('td', {}, blob.contentType),
    h('td', { class: 'blob-type' }, blob.blobType),
    h('td', {}),
    h('td', { class: 'blob-deleted' }, deletedText(blob)),
    h(
      'td',
      { class: 'row' },
      h('button', { type: 'button', class: 'blob-undelete', onclick: () => void undelete() }, 'Undelete'),
    ),
  );
}
