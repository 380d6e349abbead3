// Containers and blobs read from one Blob endpoint and written to another (or to and from a backup
// file), through the official Blob SDK. Content is streamed in blocks of `blockBytes`, never held
// whole: a block blob larger than one block is staged a few blocks at a time and committed with its
// headers and metadata in one Put Block List; an append blob is created, then appended to in order.
//
// A page blob is carried sparse: its written ranges and their bytes only (cli/page-blob-backup.ts).
//
// Chosen: snapshots are not carried; blocks are re-cut, so a copied block blob has the same bytes
// under other block ids.
import { createHash } from 'node:crypto';
import type {
  BlobHTTPHeaders,
  BlobItem,
  BlobServiceClient,
  ContainerClient,
  PublicAccessType,
  SignedIdentifier,
} from '@azure/storage-blob';
import { tagsOption, type BlobTags, type TagReader } from './blob-tags.js';
import type { AccessReader, AccessWriter, PathAccess } from './path-access.js';
import { pageBlobContent, pageBlobShape, writePageRanges, type PageBlobShape } from './page-blob-backup.js';

/** 4 MiB: within every service version's limit for one Put Block and one Append Block. */
export const blockBytes = 4 * 1024 * 1024;

export interface ContainerHeader {
  readonly kind: 'container';
  readonly name: string;
  readonly metadata: Record<string, string>;
  /** Anonymous read access: 'container', 'blob', or null for none. */
  readonly publicAccess: PublicAccessType | null;
  /**
   * Stored access policies; times as ISO 8601 text. Null when they could not be read (only the
   * account key may read them, not a SAS): then neither they nor the public access are restored.
   */
  readonly acl: readonly { id: string; start?: string; expiry?: string; permissions?: string }[] | null;
}

export type CarriedBlobType = 'BlockBlob' | 'AppendBlob' | 'PageBlob';

export interface BlobHeader {
  readonly kind: 'blob';
  readonly container: string;
  readonly name: string;
  readonly blobType: CarriedBlobType;
  /** The bytes of content that follow the record (of a page blob: of its written ranges only). */
  readonly sizeBytes: number;
  /** A page blob's size, sequence number and written ranges (absent before version 4). */
  readonly page?: PageBlobShape;
  readonly contentType?: string;
  readonly contentEncoding?: string;
  readonly contentLanguage?: string;
  readonly contentDisposition?: string;
  readonly cacheControl?: string;
  /** The blob's Content-MD5 property, base64, when it has one. */
  readonly contentMd5?: string;
  readonly metadata: Record<string, string>;
  /** Its index tags, when it has some and the source let them be read (absent in backups before version 3). */
  readonly tags?: BlobTags;
  /**
   * Its Data Lake owner, group, permissions and ACL, when the source account has a hierarchical
   * namespace (absent in backups before version 4). A directory is a blob with hdi_isfolder=true.
   */
  readonly access?: PathAccess;
  /** Set on a previous version (`backup --versions`): its version id at the source. */
  readonly previousVersion?: string;
  /** On the last previous version of a blob the source no longer has: delete the blob once it is written. */
  readonly currentDeleted?: true;
}

/** A blob's header and its content, to be consumed once, in order. */
export interface OpenBlob {
  readonly header: BlobHeader;
  readonly content: AsyncIterable<Buffer>;
}

export async function readContainer(service: BlobServiceClient, name: string): Promise<ContainerHeader> {
  const client = service.getContainerClient(name);
  const properties = await client.getProperties();
  const policy = await client.getAccessPolicy().catch((error: unknown) => {
    if ((error as { statusCode?: number }).statusCode === 403) return undefined;
    throw error;
  });
  return {
    kind: 'container',
    name,
    metadata: properties.metadata ?? {},
    publicAccess: policy?.blobPublicAccess ?? properties.blobPublicAccess ?? null,
    acl:
      policy === undefined
        ? null
        : policy.signedIdentifiers.map(({ id, accessPolicy }) => ({
            id,
            ...(accessPolicy.startsOn ? { start: accessPolicy.startsOn.toISOString() } : {}),
            ...(accessPolicy.expiresOn ? { expiry: accessPolicy.expiresOn.toISOString() } : {}),
            ...(accessPolicy.permissions ? { permissions: accessPolicy.permissions } : {}),
          })),
  };
}

/** Creates the container (or takes the one there), then sets its metadata, public access and ACL. */
export async function writeContainer(service: BlobServiceClient, header: ContainerHeader): Promise<ContainerClient> {
  const client = service.getContainerClient(header.name);
  await client.createIfNotExists();
  await client.setMetadata(header.metadata);
  if (header.acl === null) return client;
  const identifiers: SignedIdentifier[] = header.acl.map((entry) => ({
    id: entry.id,
    accessPolicy: {
      ...(entry.start ? { startsOn: new Date(entry.start) } : {}),
      ...(entry.expiry ? { expiresOn: new Date(entry.expiry) } : {}),
      ...(entry.permissions ? { permissions: entry.permissions } : {}),
    },
  }));
  await client.setAccessPolicy(header.publicAccess ?? undefined, identifiers);
  return client;
}

/** Every container name of the account, in the service's order. */
export async function listContainerNames(service: BlobServiceClient): Promise<string[]> {
  const names: string[] = [];
  for await (const container of service.listContainers()) names.push(container.name);
  return names;
}

/** The container's base blobs that can be carried, as listed, and how many others there are. */
export async function listCarriedBlobs(container: ContainerClient): Promise<{ items: BlobItem[]; skipped: number }> {
  const items: BlobItem[] = [];
  let skipped = 0;
  const carried: readonly (string | undefined)[] = ['BlockBlob', 'AppendBlob', 'PageBlob'] satisfies CarriedBlobType[];
  for await (const item of container.listBlobsFlat({ includeMetadata: true })) {
    if (carried.includes(item.properties.blobType)) items.push(item);
    else skipped++;
  }
  return { items, skipped };
}

/** Rounds of list-then-read for a blob that writers keep changing. */
const readRounds = 5;

/**
 * The blob's headers and metadata as List Blobs gave them, and its content by one Get Blob under
 * If-Match on the listed ETag, so all of it belongs to one version; if the blob changed since the
 * listing, it is listed again. (List Blobs, not the Get Blob reply: that reply may carry headers
 * the blob does not have, like a server's default Cache-Control.) Undefined if the blob is gone.
 * With `tags`, its index tags are read once the content is open (Get Blob Tags takes no If-Match:
 * tags set between the two reads are the newer ones); with `access`, its access control likewise.
 */
export async function openBlob(
  container: ContainerClient,
  listed: BlobItem,
  tags?: TagReader,
  access?: AccessReader,
): Promise<OpenBlob | undefined> {
  let item: BlobItem | undefined = listed;
  for (let round = 1; item !== undefined; round++) {
    try {
      if (item.properties.blobType === 'PageBlob') {
        const page = await pageBlobShape(container, item);
        const found = tagsOption(await tags?.read(container.getBlobClient(item.name)));
        const sizeBytes = page.ranges.reduce((sum, [start, end]) => sum + end - start, 0);
        const header = {
          ...headerOf(container.containerName, item),
          sizeBytes,
          page,
          ...(found ? { tags: found } : {}),
        };
        return { header, content: pageBlobContent(container, item.name, item.properties.etag, page.ranges) };
      }
      const response = await container
        .getBlobClient(item.name)
        .download(0, undefined, { conditions: { ifMatch: item.properties.etag } });
      const body = response.readableStreamBody as AsyncIterable<Buffer> | undefined;
      const found = tagsOption(await tags?.read(container.getBlobClient(item.name)));
      const control = await access?.read(item.name);
      const header = {
        ...headerOf(container.containerName, item),
        ...(found ? { tags: found } : {}),
        ...(control ? { access: control } : {}),
      };
      return { header, content: body ?? emptyContent() };
    } catch (error) {
      const status = (error as { statusCode?: number }).statusCode;
      if (status !== 412 || round >= readRounds) throw error;
    }
    item = await relist(container, item.name);
  }
  return undefined;
}

async function relist(container: ContainerClient, name: string): Promise<BlobItem | undefined> {
  for await (const item of container.listBlobsFlat({ prefix: name, includeMetadata: true })) {
    if (item.name === name) return item;
    if (item.name > name) break;
  }
  return undefined;
}

/** A listed blob's header. Listings show absent headers as empty elements: those are left out. */
export function headerOf(container: string, item: BlobItem): BlobHeader {
  const p = item.properties;
  const optional = (key: string, value: string | undefined) => (value ? { [key]: value } : {});
  const md5 = p.contentMD5 && p.contentMD5.byteLength > 0 ? Buffer.from(p.contentMD5).toString('base64') : undefined;
  return {
    kind: 'blob',
    container,
    name: item.name,
    blobType: p.blobType as CarriedBlobType,
    sizeBytes: p.contentLength ?? 0,
    ...optional('contentType', p.contentType),
    ...optional('contentEncoding', p.contentEncoding),
    ...optional('contentLanguage', p.contentLanguage),
    ...optional('contentDisposition', p.contentDisposition),
    ...optional('cacheControl', p.cacheControl),
    ...optional('contentMd5', md5),
    metadata: typeof item.metadata === 'object' ? item.metadata : {},
  };
}

async function* emptyContent(): AsyncIterable<Buffer> {}

function httpHeaders(header: BlobHeader): BlobHTTPHeaders {
  return {
    blobContentType: header.contentType,
    blobContentEncoding: header.contentEncoding,
    blobContentLanguage: header.contentLanguage,
    blobContentDisposition: header.contentDisposition,
    blobCacheControl: header.cacheControl,
    blobContentMD5: header.contentMd5 === undefined ? undefined : Buffer.from(header.contentMd5, 'base64'),
  };
}

/** `source` re-cut into pieces of exactly `bytes` (the last may be shorter; none if empty). */
export async function* pieces(source: AsyncIterable<Buffer | Uint8Array>, bytes: number): AsyncIterable<Buffer> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  for await (const chunk of source) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (heldBytes + rest.byteLength >= bytes) {
      const take = bytes - heldBytes;
      yield Buffer.concat([...held, rest.subarray(0, take)]);
      rest = rest.subarray(take);
      held = [];
      heldBytes = 0;
    }
    if (rest.byteLength > 0) {
      held.push(Buffer.from(rest)); // a copy: the source may reuse its buffer
      heldBytes += rest.byteLength;
    }
  }
  if (heldBytes > 0) yield Buffer.concat(held);
}

/** Thrown when the bytes written differ from the header's size or the checker's verdict. */
export class ContentMismatchError extends Error {
  override readonly name = 'ContentMismatchError';
}

export interface WriteBlobOptions {
  /** Called with the SHA-256 of the whole content before it becomes visible (block blobs) or after (append). */
  readonly check?: (sha256: string) => void;
  /** Sets the header's access control, if it has one, once the blob is written. */
  readonly access?: AccessWriter;
}

/** Writes one blob from its header and streamed content; answers the bytes written. */
export async function writeBlob(
  container: ContainerClient,
  open: OpenBlob,
  options: WriteBlobOptions = {},
): Promise<number> {
  const { header } = open;
  const hash = createHash('sha256');
  let written = 0;
  const counted = async function* () {
    for await (const piece of pieces(open.content, blockBytes)) {
      hash.update(piece);
      written += piece.byteLength;
      yield piece;
    }
  };
  const verify = () => {
    if (written !== header.sizeBytes)
      throw new ContentMismatchError(`${header.name}: ${written} bytes read, ${header.sizeBytes} expected`);
    options.check?.(hash.digest('hex'));
  };
  if (header.blobType === 'AppendBlob') {
    await writeAppendBlob(container, header, counted());
    verify();
  } else if (header.blobType === 'PageBlob') {
    await writePageBlob(container, header, counted());
    verify();
  } else {
    await writeBlockBlob(container, header, counted(), verify);
  }
  if (header.access !== undefined) await options.access?.write(header.name, header.access);
  return written;
}

async function writeAppendBlob(container: ContainerClient, header: BlobHeader, blocks: AsyncIterable<Buffer>) {
  const client = container.getAppendBlobClient(header.name);
  await client.create({
    blobHTTPHeaders: httpHeaders(header),
    metadata: header.metadata,
    tags: tagsOption(header.tags),
  });
  for await (const block of blocks) await client.appendBlock(block, block.byteLength);
}

async function writePageBlob(container: ContainerClient, header: BlobHeader, content: AsyncIterable<Buffer>) {
  if (header.page === undefined) throw new ContentMismatchError(`${header.name}: a page blob record without its pages`);
  await container.getPageBlobClient(header.name).create(header.page.blobSizeBytes, {
    blobHTTPHeaders: httpHeaders(header),
    metadata: header.metadata,
    tags: tagsOption(header.tags),
    blobSequenceNumber: header.page.sequenceNumber,
  });
  await writePageRanges(container, header.name, header.page.ranges, content);
}

/** Put Block requests of one blob in flight at once: at most this many blocks are held in memory. */
const stagedInFlightMax = 4;

/**
 * One Put Blob when the content fits one block; else blocks staged (up to `stagedInFlightMax` at a
 * time) and one Put Block List once all are staged and the content is verified.
 */
async function writeBlockBlob(
  container: ContainerClient,
  header: BlobHeader,
  blocks: AsyncIterable<Buffer>,
  verify: () => void,
): Promise<void> {
  const client = container.getBlockBlobClient(header.name);
  const options = { blobHTTPHeaders: httpHeaders(header), metadata: header.metadata, tags: tagsOption(header.tags) };
  const ids: string[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const stage = async (block: Buffer) => {
    const id = blockId(ids.length);
    ids.push(id);
    const staging = client.stageBlock(id, block, block.byteLength);
    inFlight.add(staging);
    staging.then(
      () => inFlight.delete(staging),
      () => undefined, // raised by the race or the wait below
    );
    if (inFlight.size >= stagedInFlightMax) await Promise.race(inFlight);
  };
  let first: Buffer | undefined;
  for await (const block of blocks) {
    if (ids.length === 0 && first === undefined) {
      first = block;
      continue;
    }
    if (first !== undefined) await stage(first);
    first = undefined;
    await stage(block);
  }
  await Promise.all(inFlight);
  verify();
  if (ids.length === 0) {
    const single = first ?? Buffer.alloc(0);
    await client.upload(single, single.byteLength, options);
  } else {
    await client.commitBlockList(ids, options);
  }
}

/** Block ids of one blob must have one length: a fixed-width index, base64. */
function blockId(index: number): string {
  return Buffer.from(`block-${String(index).padStart(8, '0')}`).toString('base64');
}
