// Files to blobs and back (`cerulean blobs upload | download | sync`): a folder walked, a container
// listed under a prefix, a few transfers at once (src/cli/pool.ts), and what is identical already
// skipped: the same size and the same MD5 (a file's computed, a blob's Content-MD5 property). An
// upload sets Content-MD5 on every blob it writes, so what it wrote is recognised next time; a blob
// without one (written by another tool from blocks) is downloaded again. Into an account with a
// hierarchical namespace an upload of a folder makes a Data Lake directory for each of its
// subfolders (and for the folder named by the prefix), so empty ones arrive too; a download makes a
// local folder for each directory record it lists (a blob with hdi_isfolder=true), never a file.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BlobItem, ContainerClient } from '@azure/storage-blob';
import type { DataLakeFileSystemClient } from '@azure/storage-file-datalake';
import { listedMd5 } from './blob-compare.js';
import { CliError } from './command.js';
import type { Interruption } from './interrupt.js';
import { forEachInPool } from './pool.js';
import type { TransferProgress } from './progress.js';

/** One file to upload: where it is, its blob name, its size. */
export interface LocalFile {
  readonly file: string;
  readonly name: string;
  readonly sizeBytes: number;
}

export interface TransferCounts {
  files: number;
  bytes: number;
  identical: number;
}

/** `container/prefix` → the container and the prefix ('' when none). */
export function splitContainerPath(text: string): { container: string; prefix: string } {
  const slash = text.indexOf('/');
  if (slash < 0) return { container: text, prefix: '' };
  return { container: text.slice(0, slash), prefix: text.slice(slash + 1) };
}

/**
 * The files to upload and their blob names: a folder's files (recursively) under `prefix` as a
 * folder; a single file as `prefix` itself, or under it when the prefix is empty or ends in '/'.
 */
export async function localFiles(source: string, prefix: string): Promise<LocalFile[]> {
  const info = await stat(source).catch(() => undefined);
  if (info === undefined) throw new CliError(`${source}: no such file or folder`, 2);
  if (info.isFile()) {
    const name = prefix === '' || prefix.endsWith('/') ? `${prefix}${path.basename(source)}` : prefix;
    return [{ file: source, name, sizeBytes: info.size }];
  }
  const folder = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
  const files: LocalFile[] = [];
  for (const entry of await readdir(source, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const relative = path.relative(source, file).split(path.sep).join('/');
    files.push({ file, name: `${folder}${relative}`, sizeBytes: (await stat(file)).size });
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The Data Lake directories an upload of `source` under `prefix` makes: the prefix's folder (when
 * not the container's top) and every subfolder, parents before children. None for a single file.
 */
export async function localFolders(source: string, prefix: string): Promise<string[]> {
  const info = await stat(source).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) return [];
  const top = prefix.replace(/\/+$/, '');
  const folders = top === '' ? [] : [top];
  for (const entry of await readdir(source, { recursive: true, withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const relative = path.relative(source, path.join(entry.parentPath, entry.name)).split(path.sep).join('/');
    folders.push(top === '' ? relative : `${top}/${relative}`);
  }
  return folders.sort();
}

/** Makes each directory (parents first) that is not there yet; answers how many it made. */
export async function makeDirectories(filesystem: DataLakeFileSystemClient, folders: readonly string[]) {
  let made = 0;
  for (const folder of folders) if ((await filesystem.getDirectoryClient(folder).createIfNotExists()).succeeded) made++;
  return made;
}

/** A Data Lake directory as the Blob API lists it: metadata hdi_isfolder=true. */
export function isDirectoryBlob(item: BlobItem): boolean {
  return Object.entries(item.metadata ?? {}).some(
    ([name, value]) => name.toLowerCase() === 'hdi_isfolder' && value === 'true',
  );
}

/** Every blob under `prefix`, by name, with its metadata. */
export async function listedBlobs(container: ContainerClient, prefix: string): Promise<Map<string, BlobItem>> {
  const found = new Map<string, BlobItem>();
  for await (const item of container.listBlobsFlat({ prefix, includeMetadata: true })) found.set(item.name, item);
  return found;
}

/** The MD5 of a file, streamed. */
export async function fileMd5(file: string): Promise<Buffer> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest();
}

const contentTypes: Record<string, string> = {
  '.txt': 'text/plain',
  '.html': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.csv': 'text/csv',
  '.xml': 'application/xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
  '.zip': 'application/zip',
};

/** By the file's extension, as `az storage blob upload` guesses; else the service's default. */
export function contentTypeOf(file: string): string {
  return contentTypes[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export interface TransferRun {
  readonly inFlight: number;
  readonly interruption: Interruption;
  readonly progress: TransferProgress;
}

/** Uploads the files that differ from the blobs there (size, then MD5), setting each blob's Content-MD5. */
export async function uploadFiles(container: ContainerClient, files: readonly LocalFile[], run: TransferRun) {
  const there = await listedBlobs(container, commonFolder(files.map((file) => file.name)));
  const counts: TransferCounts = { files: 0, bytes: 0, identical: 0 };
  await forEachInPool(
    files,
    run.inFlight,
    async (local) => {
      const md5 = await fileMd5(local.file);
      const existing = there.get(local.name);
      if (existing?.properties.contentLength === local.sizeBytes && listedMd5(existing) === md5.toString('hex')) {
        counts.identical++;
        run.progress.add(1, 0);
        return;
      }
      await container.getBlockBlobClient(local.name).uploadFile(local.file, {
        blobHTTPHeaders: { blobContentType: contentTypeOf(local.file), blobContentMD5: md5 },
        concurrency: 4,
      });
      counts.files++;
      counts.bytes += local.sizeBytes;
      run.progress.add(1, local.sizeBytes);
    },
    () => run.interruption.requested,
  );
  return counts;
}

/** The longest folder ('a/b/') all names share, so one listing covers them. */
function commonFolder(names: readonly string[]): string {
  if (names.length === 0) return '';
  let common = names[0]!.slice(0, names[0]!.lastIndexOf('/') + 1);
  for (const name of names)
    while (!name.startsWith(common)) common = common.slice(0, common.lastIndexOf('/', common.length - 2) + 1);
  return common;
}

/** Where a blob goes under `folder`: its name less the prefix's folder part; never outside `folder`. */
export function localPathOf(folder: string, prefix: string, name: string): string {
  const relative = name.slice(prefix.lastIndexOf('/') + 1);
  const target = path.resolve(folder, ...relative.split('/'));
  const root = path.resolve(folder);
  if (relative === '' || !target.startsWith(root + path.sep))
    throw new CliError(`blob ${name}: its name leads outside ${folder}; not downloaded`);
  return target;
}

/**
 * Downloads the blobs under `prefix` that differ from the files there; each is written as
 * `<file>.partial` and renamed once whole, so a file of the blob's name is never half written.
 */
export async function downloadBlobs(container: ContainerClient, prefix: string, folder: string, run: TransferRun) {
  const counts: TransferCounts = { files: 0, bytes: 0, identical: 0 };
  const listed = [...(await listedBlobs(container, prefix)).values()].filter((item) => !item.name.endsWith('/'));
  const blobs = listed.filter((item) => !isDirectoryBlob(item));
  for (const directory of listed.filter(isDirectoryBlob)) {
    // The prefix's own directory is the folder itself.
    if (`${directory.name}/`.length <= prefix.lastIndexOf('/') + 1) continue;
    await mkdir(localPathOf(folder, prefix, directory.name), { recursive: true });
  }
  await forEachInPool(
    blobs,
    run.inFlight,
    async (item) => {
      const target = localPathOf(folder, prefix, item.name);
      const size = item.properties.contentLength ?? 0;
      if (await sameFile(target, size, listedMd5(item))) {
        counts.identical++;
        run.progress.add(1, 0);
        return;
      }
      await mkdir(path.dirname(target), { recursive: true });
      const partial = `${target}.partial`;
      try {
        const response = await container.getBlobClient(item.name).download(0, undefined, {
          conditions: { ifMatch: item.properties.etag },
        });
        await pipeline(response.readableStreamBody!, createWriteStream(partial));
        await rename(partial, target);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      counts.files++;
      counts.bytes += size;
      run.progress.add(1, size);
    },
    () => run.interruption.requested,
  );
  return { counts, listed: blobs.length };
}

async function sameFile(file: string, size: number, md5: string | undefined): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile() || info.size !== size || md5 === undefined) return false;
  return (await fileMd5(file)).toString('hex') === md5;
}

/** Deletes every blob under `prefix` (with its snapshots) not in `keep`; answers how many. */
export async function deleteBlobs(
  container: ContainerClient,
  prefix: string,
  keep: ReadonlySet<string>,
  run: Omit<TransferRun, 'progress'>,
): Promise<number> {
  let deleted = 0;
  const doomed = [...(await listedBlobs(container, prefix)).keys()].filter((name) => !keep.has(name));
  await forEachInPool(
    doomed,
    run.inFlight,
    async (name) => {
      await container.getBlobClient(name).deleteIfExists({ deleteSnapshots: 'include' });
      deleted++;
    },
    () => run.interruption.requested,
  );
  return deleted;
}
