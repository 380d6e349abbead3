// Previous versions of blobs for `cerulean backup --versions` (List Blobs include=versions,
// https://learn.microsoft.com/azure/storage/blobs/versioning-overview): each name's previous
// versions, oldest first, then its current blob, so a restore that writes them in that order into an
// account with versioning makes the same sequence (under new version ids), the current one last.
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import { headerOf, type OpenBlob } from './blob-transfer.js';
import { tagsOption, type TagReader } from './blob-tags.js';

/** One blob name: its previous versions by version id, and its current blob (undefined if deleted). */
export interface VersionedBlob {
  readonly previous: readonly BlobItem[];
  readonly current: BlobItem | undefined;
}

const carried = (item: BlobItem) =>
  item.properties.blobType === 'BlockBlob' || item.properties.blobType === 'AppendBlob';

/**
 * The container's block and append blobs with their previous versions, name by name, streamed
 * (one name's versions held at a time); `skip` is told of each page blob left out.
 */
export async function* versionedBlobs(container: ContainerClient, skip: () => void): AsyncIterable<VersionedBlob> {
  let name: string | undefined;
  let previous: BlobItem[] = [];
  let current: BlobItem | undefined;
  const group = (): VersionedBlob => ({
    // Version ids are timestamps of one width: text order is time order.
    previous: previous.sort((a, b) => (a.versionId! < b.versionId! ? -1 : a.versionId! > b.versionId! ? 1 : 0)),
    current,
  });
  for await (const item of container.listBlobsFlat({ includeMetadata: true, includeVersions: true })) {
    if (item.snapshot) continue; // snapshots are not carried
    if (!carried(item)) {
      if (item.versionId === undefined || item.isCurrentVersion === true) skip();
      continue;
    }
    if (item.name !== name) {
      if (name !== undefined) yield group();
      [name, previous, current] = [item.name, [], undefined];
    }
    if (item.versionId !== undefined && item.isCurrentVersion !== true) previous.push(item);
    else current = item;
  }
  if (name !== undefined) yield group();
}

/**
 * A previous version's header and content (a version never changes: no condition needed); with
 * `tags`, its index tags too (Get Blob Tags with versionid), which a restore writes with it.
 */
export async function openVersion(container: ContainerClient, item: BlobItem, tags?: TagReader): Promise<OpenBlob> {
  const versionId = item.versionId!;
  const version = container.getBlobClient(item.name).withVersion(versionId);
  const response = await version.download();
  const body = response.readableStreamBody as AsyncIterable<Buffer> | undefined;
  const found = tagsOption(await tags?.read(version));
  return {
    header: {
      ...headerOf(container.containerName, item),
      previousVersion: versionId,
      ...(found ? { tags: found } : {}),
    },
    content: body ?? none(),
  };
}

async function* none(): AsyncIterable<Buffer> {}
