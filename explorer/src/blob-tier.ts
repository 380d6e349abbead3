// The explorer's access tier of one blob: its Tier cell in the folder's table (List Blobs' AccessTier,
// with the rehydration under way if any) and the "Set tier" card of the selected blob (Set Blob Tier,
// https://learn.microsoft.com/rest/api/storageservices/set-blob-tier). Tiers are for block blobs.
import type { Credentials } from './api.js';
import { setBlobTier, type BlobItem } from './blob-api.js';
import { h } from './dom.js';
import { status, succeeded } from './session.js';

const tiers = ['Hot', 'Cool', 'Cold', 'Archive'] as const;

/** `Cool`, `Hot (inferred)`, or `Archive → hot` while a rehydration to Hot is pending; '' for other blob types. */
export function tierText(blob: BlobItem): string {
  if (blob.accessTier === '') return '';
  if (blob.archiveStatus !== '') return `${blob.accessTier} → ${blob.archiveStatus.replace('rehydrate-pending-to-', '')}`;
  return blob.accessTierInferred ? `${blob.accessTier} (inferred)` : blob.accessTier;
}

/** The selected blob's "Set tier" card; `changed` runs after the service accepted a tier. */
export function tierCard(
  using: Credentials,
  container: string,
  blob: string,
  changed: () => Promise<void>,
): HTMLElement {
  const choice = h(
    'select',
    { id: 'blob-tier', 'aria-label': 'Access tier' },
    tiers.map((tier) => h('option', { value: tier }, tier)),
  );
  const set = async (): Promise<void> => {
    const tier = choice.value;
    let answer = 0;
    if (!(await succeeded(async () => (answer = await setBlobTier(using, container, blob, tier))))) return;
    status(answer === 202 ? `${blob}: rehydrating to ${tier}.` : `${blob}: tier set to ${tier}.`);
    await changed();
  };
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, 'Access tier'),
    h(
      'div',
      { class: 'row' },
      choice,
      h('button', { type: 'button', id: 'blob-tier-set', class: 'primary', onclick: () => void set() }, 'Set tier'),
    ),
  );
}
