// The tier of a block blob as the service reports it: Get Blob Properties' headers and List Blobs'
// elements (https://learn.microsoft.com/rest/api/storageservices/get-blob-properties, list-blobs).
import type { XmlNode } from '../../wire/xml.js';
import { httpDate } from './reply-headers.js';
import { tierView, type StoredTier } from '../state/tier.js';

/** Get Blob Properties' tier headers (get-blob-properties), for block blobs. */
export function tierHeaders(stored: StoredTier | undefined, nowMs: number): Record<string, string> {
  const view = tierView(stored, nowMs);
  const headers: Record<string, string> = { 'x-ms-access-tier': view.tier };
  if (view.inferred) headers['x-ms-access-tier-inferred'] = 'true';
  if (view.changedMs !== undefined) headers['x-ms-access-tier-change-time'] = httpDate(view.changedMs);
  if (view.rehydrate !== undefined) {
    headers['x-ms-archive-status'] = `rehydrate-pending-to-${view.rehydrate.to.toLowerCase()}`;
    headers['x-ms-rehydrate-priority'] = view.rehydrate.priority;
  }
  return headers;
}

/**
 * List Blobs' tier elements, for block blobs, in the order the service writes them (after BlobType:
 * AccessTier, AccessTierInferred or ArchiveStatus and RehydratePriority, then AccessTierChangeTime, as
 * in the service's replies recorded by the Java SDK's tests, BlobAPITestSetTierInferred and
 * BlobAPITestSetTierArchiveStatus).
 */
export function tierNodes(stored: StoredTier | undefined, nowMs: number): XmlNode[] {
  const view = tierView(stored, nowMs);
  const nodes: XmlNode[] = [{ name: 'AccessTier', content: view.tier }];
  if (view.inferred) nodes.push({ name: 'AccessTierInferred', content: 'true' });
  if (view.rehydrate !== undefined) {
    nodes.push(
      { name: 'ArchiveStatus', content: `rehydrate-pending-to-${view.rehydrate.to.toLowerCase()}` },
      { name: 'RehydratePriority', content: view.rehydrate.priority },
    );
  }
  if (view.changedMs !== undefined) nodes.push({ name: 'AccessTierChangeTime', content: httpDate(view.changedMs) });
  return nodes;
}
