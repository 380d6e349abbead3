// Blob index tags as `cerulean copy` and `backup` carry them: read per blob with Get Blob Tags
// (https://learn.microsoft.com/rest/api/storageservices/get-blob-tags), written with the blob itself
// (x-ms-tags on Put Blob, Put Block List, or the create of an append or page blob). A source that
// will not answer Get Blob Tags (it does not serve tags, or a SAS without the tag permission `t`)
// must not stop the copy: the first refusal is remembered as the container's reason, and its
// remaining blobs are not asked again.
import type { BlobClient } from '@azure/storage-blob';

export type BlobTags = Record<string, string>;

/** Statuses by which a source says it will not answer Get Blob Tags, rather than failing this once. */
const refusalStatuses = new Set([400, 403, 405, 501]);

/** Reads the tags of one container's blobs; `notRead` says why they could not be, once refused. */
export class TagReader {
  notRead: string | undefined;

  /** The blob's tags ({} for none), or undefined when the source refuses to answer them. */
  async read(blob: BlobClient): Promise<BlobTags | undefined> {
    if (this.notRead !== undefined) return undefined;
    try {
      return (await blob.getTags()).tags;
    } catch (error) {
      const { statusCode, code } = error as { statusCode?: number; code?: string };
      if (statusCode === undefined || !refusalStatuses.has(statusCode)) throw error;
      this.notRead = `the source answers Get Blob Tags with ${statusCode} ${code ?? ''}`.trimEnd();
      return undefined;
    }
  }
}

/** Both tag sets hold the same keys and values. */
export function sameTags(a: BlobTags, b: BlobTags): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/** Tags as a write's option: undefined when none, so a destination without tags is never sent x-ms-tags needlessly. */
export function tagsOption(tags: BlobTags | undefined): BlobTags | undefined {
  return tags === undefined || Object.keys(tags).length === 0 ? undefined : tags;
}

/** `a=1, b=2` for a difference line; `none` when empty. */
export function describeTags(tags: BlobTags): string {
  const entries = Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? 'none' : entries.map(([key, value]) => `${key}=${value}`).join(', ');
}
