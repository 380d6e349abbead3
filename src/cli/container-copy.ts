// `cerulean copy`: containers and their blobs from one Blob endpoint to another, streamed blob by
// blob (src/cli/blob-transfer.ts), a few at a time. Resumable: a blob the destination has already,
// identical (src/cli/blob-compare.ts), is skipped. Then checked: every blob is listed at the
// destination with the source's size and, with a full --verify, the same content (MD5 of both)
// and index tags (src/cli/blob-tags.ts). Data Lake directories are blobs (hdi_isfolder=true metadata)
// and are carried as such; between accounts with a hierarchical namespace each path's owner, group,
// permissions and ACL are carried too (src/cli/path-access.ts).
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import { contentMd5, identicalBlob, listedMd5, md5Counter } from './blob-compare.js';
import type { BlobEndpoint } from './blob-endpoint.js';
import { describeTags, sameTags, TagReader, type BlobTags } from './blob-tags.js';
import { openBlob, readContainer, writeBlob, writeContainer, type OpenBlob } from './blob-transfer.js';
import { formatCount } from './command.js';
import type { Interruption } from './interrupt.js';
import { copyPageBlob, pageBlobRefusal } from './page-blob-copy.js';
import { AccessReader, AccessWriter, accountIsHierarchical, describeAccess, sameAccess } from './path-access.js';
import type { PathAccess } from './path-access.js';
import { forEachInPool } from './pool.js';
import type { TransferProgress } from './progress.js';

/** Blobs copied at once within a container. */
const blobsInFlight = 4;

export interface ContainerCopy {
  readonly blobs: number;
  readonly bytes: number;
  /** At the destination already, identical: not copied again. */
  readonly identical: number;
  /** Blobs not carried, one line each (a page blob the destination refuses). */
  readonly skipped: readonly string[];
  /** Blobs whose access tier the destination refused to set. */
  readonly tiersRefused: number;
  /** Blobs missing at the destination, or of another size or content there, one line each. */
  readonly differences: readonly string[];
  /** Why the blobs' index tags were not carried (the source would not answer them); undefined when they were. */
  readonly tagsNotCarried: string | undefined;
  /**
   * Why the paths' access control was not carried between two hierarchical accounts (an end
   * refused it); undefined when it was, or either account is flat.
   */
  readonly accessNotCarried: string | undefined;
  readonly interrupted: boolean;
}

export interface ContainerCopyOptions {
  readonly interruption: Interruption;
  /** Read every blob back and compare its MD5 with the source's. */
  readonly verifyContent: boolean;
  readonly progress?: TransferProgress;
}

export async function copyContainer(
  source: BlobEndpoint,
  destination: BlobEndpoint,
  name: string,
  options: ContainerCopyOptions,
): Promise<ContainerCopy> {
  const target = await writeContainer(destination.service, await readContainer(source.service, name));
  const container = source.service.getContainerClient(name);
  const there = await listed(target);
  const state = { blobs: 0, bytes: 0, identical: 0, tiersRefused: 0, skipped: [] as string[] };
  const tags = new TagReader();
  const access = await accessCarrier(source, destination, name);
  /** Per blob carried: its size, content MD5 (hex) when known without reading it again, and tags when read. */
  const expected = new Map<string, Expected>();
  const copyOne = async (item: BlobItem) => {
    const size = item.properties.contentLength ?? 0;
    const existing = there.get(item.name);
    if (existing !== undefined && (await identicalBlob(container, item, target, existing))) {
      state.identical++;
      const carried = await syncTags(tags, container, target, item.name);
      const control = await syncAccess(access, item.name);
      expected.set(item.name, { size, md5: listedMd5(item), tags: carried, access: control });
      options.progress?.add(1, 0);
      return;
    }
    const copied = await copyBlob(container, target, item, tags, access);
    if (copied.refused !== undefined) {
      state.skipped.push(`${item.name}: ${copied.refused}`);
      return;
    }
    if (!(await setTier(target, item))) state.tiersRefused++;
    state.blobs++;
    state.bytes += copied.bytes;
    expected.set(item.name, { size, md5: copied.md5, tags: copied.tags, access: copied.access });
    options.progress?.add(1, copied.bytes);
  };
  const items = container.listBlobsFlat({ includeMetadata: true });
  await forEachInPool(items, blobsInFlight, copyOne, () => options.interruption.requested);
  const differences = options.interruption.requested
    ? []
    : await check(container, target, expected, options, access.there);
  const accessNotCarried = access.hierarchical ? (access.reader.notRead ?? access.writer.notWritten) : undefined;
  return {
    ...state,
    differences,
    tagsNotCarried: tags.notRead,
    accessNotCarried,
    interrupted: options.interruption.requested,
  };
}

/** Reading access control at the source, writing it at the destination, and reading it there for the check. */
interface AccessCarrier {
  /**
   * Whether both accounts have a hierarchical namespace: else nothing is asked of either end and
   * nothing is said (a copy into a flat account carries blobs, as always).
   */
  readonly hierarchical: boolean;
  readonly reader: AccessReader;
  readonly writer: AccessWriter;
  readonly there: AccessReader;
}

async function accessCarrier(source: BlobEndpoint, destination: BlobEndpoint, name: string): Promise<AccessCarrier> {
  const hierarchical =
    (await accountIsHierarchical(source.service)) && (await accountIsHierarchical(destination.service));
  const at = (endpoint: BlobEndpoint) => endpoint.datalake.getFileSystemClient(name);
  return {
    hierarchical,
    reader: new AccessReader(at(source), hierarchical),
    writer: new AccessWriter(at(destination), hierarchical),
    there: new AccessReader(at(destination), hierarchical),
  };
}

/** A path identical already: its access control set again if that there differs; answers the source's. */
async function syncAccess(carrier: AccessCarrier, name: string): Promise<PathAccess | undefined> {
  const access = await carrier.reader.read(name);
  if (access === undefined || carrier.writer.notWritten !== undefined) return undefined;
  const there = await carrier.there.read(name);
  if (there !== undefined && sameAccess(access, there)) return access;
  return (await carrier.writer.write(name, access)) ? access : undefined;
}

interface Expected {
  readonly size: number;
  readonly md5: string | undefined;
  /** Undefined when the source would not answer them. */
  readonly tags: BlobTags | undefined;
  /** Undefined when not carried. */
  readonly access: PathAccess | undefined;
}

/** A blob identical already: its tags set again if those there differ; answers the source's. */
async function syncTags(
  reader: TagReader,
  container: ContainerClient,
  target: ContainerClient,
  name: string,
): Promise<BlobTags | undefined> {
  const tags = await reader.read(container.getBlobClient(name));
  if (tags === undefined) return undefined;
  const blob = target.getBlobClient(name);
  if (!sameTags(tags, (await blob.getTags()).tags)) await blob.setTags(tags);
  return tags;
}

async function listed(container: ContainerClient): Promise<Map<string, BlobItem>> {
  const found = new Map<string, BlobItem>();
  for await (const item of container.listBlobsFlat()) found.set(item.name, item);
  return found;
}

interface CopiedBlob {
  readonly bytes: number;
  readonly md5: string | undefined;
  /** As read at the source and written with the blob; undefined when the source would not answer them. */
  readonly tags: BlobTags | undefined;
  /** Why the destination refused it, or why it is not carried. */
  readonly refused?: string;
  /** As read at the source and written at the destination; undefined when not carried. */
  readonly access?: PathAccess;
}

/** One blob with its index tags: its bytes and content MD5, or why the destination refused it. */
async function copyBlob(
  container: ContainerClient,
  target: ContainerClient,
  item: BlobItem,
  reader: TagReader,
  access: AccessCarrier,
): Promise<CopiedBlob> {
  if (item.properties.blobType === 'PageBlob') {
    const tags = await reader.read(container.getBlobClient(item.name));
    try {
      const { bytes } = await copyPageBlob(container, target, item, tags);
      return { bytes, md5: undefined, tags };
    } catch (error) {
      const refused = pageBlobRefusal(error);
      if (refused === undefined) throw error;
      return { bytes: 0, md5: undefined, tags, refused };
    }
  }
  const open = await openBlob(container, item, reader, access.reader);
  if (open === undefined)
    return { bytes: 0, md5: undefined, tags: undefined, refused: 'deleted at the source during the copy' };
  const counter = md5Counter();
  const counted: OpenBlob = { header: open.header, content: counter.through(open.content) };
  const bytes = await writeBlob(target, counted, { access: access.writer });
  const carried = access.writer.notWritten === undefined ? open.header.access : undefined;
  const tags = reader.notRead === undefined ? (open.header.tags ?? {}) : undefined;
  return { bytes, md5: counter.hex(), tags, ...(carried ? { access: carried } : {}) };
}

/** Sets the tier a blob was given explicitly; false if the destination refuses (not every one has tiers). */
async function setTier(target: ContainerClient, item: BlobItem): Promise<boolean> {
  const tier = item.properties.accessTier;
  if (tier === undefined || item.properties.accessTierInferred !== false) return true;
  try {
    await target.getBlobClient(item.name).setAccessTier(tier);
    return true;
  } catch (error) {
    const status = (error as { statusCode?: number }).statusCode;
    if (status === 400 || status === 409 || status === 501) return false;
    throw error;
  }
}

/**
 * Lists the destination: each blob there with its size; with verifyContent, its MD5 equal to the
 * source's, its index tags those carried, and its access control that carried.
 */
async function check(
  source: ContainerClient,
  target: ContainerClient,
  expected: ReadonlyMap<string, Expected>,
  options: ContainerCopyOptions,
  accessThere: AccessReader,
): Promise<string[]> {
  const there = await listed(target);
  const differences: string[] = [];
  for (const [blob, { size, md5, tags, access }] of expected) {
    const found = there.get(blob)?.properties.contentLength;
    if (found === undefined) differences.push(`${blob}: missing at the destination`);
    else if (found !== size) differences.push(`${blob}: ${size} bytes at the source, ${found} at the destination`);
    else if (options.verifyContent) {
      const [want, got] = await Promise.all([
        md5 ?? contentMd5(source.getBlobClient(blob)),
        contentMd5(target.getBlobClient(blob)),
      ]);
      if (want !== got)
        differences.push(`${blob}: content differs (MD5 ${want} at the source, ${got} at the destination)`);
      const tagsThere = tags === undefined ? undefined : (await target.getBlobClient(blob).getTags()).tags;
      if (tags !== undefined && tagsThere !== undefined && !sameTags(tags, tagsThere))
        differences.push(
          `${blob}: tags differ (${describeTags(tags)} at the source, ${describeTags(tagsThere)} at the destination)`,
        );
      const controlThere = access === undefined ? undefined : await accessThere.read(blob);
      if (access !== undefined && controlThere !== undefined && !sameAccess(access, controlThere))
        differences.push(
          `${blob}: access control differs (${describeAccess(access)} at the source, ` +
            `${describeAccess(controlThere)} at the destination)`,
        );
    }
  }
  return differences;
}

/** "photos: 3 blobs, 10,485,895 bytes copied, sizes match" and the lines that say more, for stdout. */
export function describeContainerCopy(name: string, copied: ContainerCopy, verifyContent: boolean): string {
  const identical = copied.identical > 0 ? `, ${formatCount(copied.identical)} identical already there` : '';
  const skipped = copied.skipped.length > 0 ? `, ${formatCount(copied.skipped.length)} skipped` : '';
  const tiers = copied.tiersRefused > 0 ? `, ${formatCount(copied.tiersRefused)} tiers not set (refused)` : '';
  const match = verifyContent ? 'sizes and checksums match' : 'sizes match';
  const verdict = copied.interrupted ? 'interrupted' : copied.differences.length === 0 ? match : 'MISMATCH';
  const head = `${formatCount(copied.blobs)} blobs, ${formatCount(copied.bytes)} bytes copied`;
  const lines = [`${name}: ${head}${identical}${skipped}${tiers}, ${verdict}`];
  if (copied.tagsNotCarried !== undefined) lines.push(`  tags not carried: ${copied.tagsNotCarried}`);
  if (copied.accessNotCarried !== undefined) lines.push(`  access control not carried: ${copied.accessNotCarried}`);
  for (const list of [copied.skipped, copied.differences]) {
    lines.push(...list.slice(0, 5).map((line) => `  ${line}`));
    if (list.length > 5) lines.push(`  … and ${list.length - 5} more`);
  }
  return `${lines.join('\n')}\n`;
}
