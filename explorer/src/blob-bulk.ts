// Many blobs at once: deleting the blobs ticked in a folder's listing (one Blob Batch per 256 when
// the service answers it, else one Delete Blob each), and uploading a folder the browser picked
// (<input webkitdirectory>) with each file's path under it kept as the blob name.
import { ApiError, type Credentials } from './api.js';
import { blobPath, uploadBlob } from './blob-api.js';
import { undoneText } from './blob-deleted.js';
import { h } from './dom.js';
import { serviceCall, serviceUrl, sharedKey } from './service-call.js';
import { attempt, status, succeeded } from './session.js';
import { sizeText } from './sizes.js';

/** Most subrequests one Blob Batch may carry (https://learn.microsoft.com/rest/api/storageservices/blob-batch). */
export const batchSubrequestsMax = 256;

export interface BulkOutcome {
  readonly deleted: number;
  /** The blobs not deleted, each with the service's status and code. */
  readonly failures: { readonly name: string; readonly reason: string }[];
  /** True when Blob Batch carried the deletes; false when the service refused it and each went alone. */
  readonly batched: boolean;
}

/** Deletes `names` of `container`; `progress` hears how many have been tried so far. */
export async function deleteBlobs(
  credentials: Credentials,
  container: string,
  names: readonly string[],
  progress: (triedCount: number) => void,
): Promise<BulkOutcome> {
  const failures: { name: string; reason: string }[] = [];
  let batched = true;
  for (let start = 0; start < names.length; start += batchSubrequestsMax) {
    const chunk = names.slice(start, start + batchSubrequestsMax);
    const results = batched ? await batchDelete(credentials, container, chunk) : undefined;
    if (results === undefined) {
      batched = false;
      for (const [index, name] of chunk.entries()) {
        const reason = await singleDelete(credentials, container, name);
        if (reason !== undefined) failures.push({ name, reason });
        progress(start + index + 1);
      }
      continue;
    }
    for (const [index, reason] of results.entries())
      if (reason !== undefined) failures.push({ name: chunk[index]!, reason });
    progress(start + chunk.length);
  }
  return { deleted: names.length - failures.length, failures, batched };
}

/** Delete Blob; undefined when done, else `status code`. */
async function singleDelete(credentials: Credentials, container: string, name: string): Promise<string | undefined> {
  try {
    await serviceCall('blob', credentials, { method: 'DELETE', path: blobPath(container, name) });
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

/**
 * One Blob Batch of Delete Blob subrequests, each signed on its own: for each name, undefined when
 * deleted, else its `status code`. Undefined as a whole when the service refuses the batch itself
 * (a server without Blob Batch answers 400, 404, 405 or 501): the caller then deletes one by one.
 * A 403 is not a refusal of batches: every single delete would get it too, so it is thrown.
 */
async function batchDelete(
  credentials: Credentials,
  container: string,
  names: readonly string[],
): Promise<(string | undefined)[] | undefined> {
  const boundary = `batch_${crypto.randomUUID()}`;
  const parts = await Promise.all(names.map((name, index) => subrequest(credentials, container, name, index)));
  const body = [...parts.map((part) => `--${boundary}\r\n${part}`), `--${boundary}--\r\n`].join('');
  let response: Response;
  try {
    response = await serviceCall('blob', credentials, {
      method: 'POST',
      path: '',
      query: { comp: 'batch' },
      headers: { 'Content-Type': `multipart/mixed; boundary=${boundary}` },
      body,
    });
  } catch (error) {
    if (error instanceof ApiError && error.status !== 403) return undefined;
    throw error;
  }
  return subresponses(await response.text(), names.length);
}

async function subrequest(credentials: Credentials, container: string, name: string, index: number): Promise<string> {
  const url = serviceUrl('blob', credentials.account, { method: 'DELETE', path: blobPath(container, name) });
  const date = new Date().toUTCString();
  const authorization = await sharedKey(credentials, 'DELETE', url, { 'x-ms-date': date, 'content-length': '0' });
  return [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    `Content-ID: ${index}`,
    '',
    `DELETE ${url.pathname} HTTP/1.1`,
    `x-ms-date: ${date}`,
    `Authorization: ${authorization}`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/**
 * The outcome of each subrequest from the batch response's parts, found by Content-ID (the
 * service answers them in order, but the id is what ties a part to its request). A subrequest the
 * response does not answer counts as not deleted.
 */
function subresponses(text: string, count: number): (string | undefined)[] {
  const results: (string | undefined)[] = Array.from({ length: count }, () => 'no answer in the batch response');
  for (const part of text.split(/\r?\n--/)) {
    const id = /^Content-ID:\s*(\d+)/im.exec(part);
    const status = /^HTTP\/1\.1 (\d{3})/m.exec(part);
    if (id === null || status === null || Number(id[1]) >= count) continue;
    const code = /^x-ms-error-code:\s*(\S+)/im.exec(part)?.[1] ?? '';
    results[Number(id[1])] = Number(status[1]) < 300 ? undefined : `${status[1]} ${code}`.trim();
  }
  return results;
}

/** A file the browser picked with its path under the picked folder (webkitRelativePath). */
export interface PickedFile {
  readonly relativePath: string;
  readonly file: File;
}

export function pickedFiles(input: HTMLInputElement): PickedFile[] {
  return [...(input.files ?? [])].map((file) => ({ relativePath: file.webkitRelativePath || file.name, file }));
}

/**
 * Uploads each picked file as the blob `prefix + relativePath`, one after another; `progress` hears
 * the files done and the bytes sent of all. Stops at the first failure, which it throws.
 */
export async function uploadFolder(
  credentials: Credentials,
  container: string,
  prefix: string,
  files: readonly PickedFile[],
  progress: (filesDone: number, sentBytes: number, totalBytes: number) => void,
): Promise<void> {
  const totalBytes = files.reduce((sum, { file }) => sum + file.size, 0);
  let doneBytes = 0;
  for (const [index, { relativePath, file }] of files.entries()) {
    const report = (sentBytes: number): void => progress(index, doneBytes + sentBytes, totalBytes);
    await uploadBlob(credentials, container, `${prefix}${relativePath}`, file, report);
    doneBytes += file.size;
    progress(index + 1, doneBytes, totalBytes);
  }
}

/** What the bulk actions need of the container view they serve. */
export interface BulkHost {
  readonly using: Credentials;
  readonly container: string;
  /** The folder shown: '' for the top, else ending in '/'. */
  prefix(): string;
  /** Lists the folder shown again, from its first page. */
  reload(): Promise<void>;
  /** Where progress is written. */
  readonly progress: HTMLElement;
}

/** A container view's bulk actions: the folder upload input, the tick boxes and Delete selected. */
export class BlobBulk {
  private readonly names = new Set<string>();
  readonly deleteButton = h('button', { type: 'button', id: 'blobs-delete-selected', class: 'danger' });
  readonly folderControls: HTMLElement[];

  constructor(private readonly host: BulkHost) {
    this.deleteButton.addEventListener('click', () => void this.removeSelected());
    const folder = h('input', { type: 'file', id: 'upload-folder', webkitdirectory: true });
    folder.addEventListener('change', () => void this.uploadFolder(folder));
    this.folderControls = [h('label', { for: 'upload-folder' }, 'Upload a folder:'), folder];
    this.render();
  }

  /** The tick box of one blob's row. */
  checkbox(name: string): HTMLElement {
    const box = h('input', {
      type: 'checkbox',
      class: 'blob-select',
      'aria-label': `Select ${name}`,
      checked: this.names.has(name),
    });
    box.addEventListener('change', () => {
      if (box.checked) this.names.add(name);
      else this.names.delete(name);
      this.render();
    });
    return box;
  }

  /** Forgets the ticks (the rows they were on are gone). */
  clear(): void {
    this.names.clear();
    this.render();
  }

  private render(): void {
    this.deleteButton.textContent = `Delete selected (${this.names.size})`;
    this.deleteButton.disabled = this.names.size === 0;
  }

  /** Uploads a picked folder under the one shown, each file's path in it kept as its blob name. */
  private async uploadFolder(input: HTMLInputElement): Promise<void> {
    const { using, container, progress } = this.host;
    const prefix = this.host.prefix();
    const files = pickedFiles(input);
    const report = (filesDone: number, sentBytes: number, totalBytes: number): void => {
      progress.textContent = `${filesDone} of ${files.length} files, ${sizeText(sentBytes)} of ${sizeText(totalBytes)}`;
    };
    const done = await succeeded(() => uploadFolder(using, container, prefix, files, report));
    input.value = '';
    if (done) status(`Uploaded ${files.length} file${files.length === 1 ? '' : 's'} into ${prefix || '/'}.`);
    await this.host.reload();
  }

  private async removeSelected(): Promise<void> {
    const { using, container, progress } = this.host;
    const names = [...this.names];
    if (!confirm(`Delete ${names.length} blob${names.length === 1 ? '' : 's'}? ${undoneText}`)) return;
    const report = (tried: number): void => void (progress.textContent = `deleted ${tried} of ${names.length}`);
    const outcome = await attempt(() => deleteBlobs(using, container, names, report));
    if (outcome === undefined) return;
    const how = outcome.batched ? 'in Blob Batch requests' : 'one by one (the service refused Blob Batch)';
    const failed = outcome.failures.map(({ name, reason }) => `${name}: ${reason}`).join('; ');
    if (failed === '') status(`Deleted ${outcome.deleted} blobs ${how}.`);
    else status(`Deleted ${outcome.deleted} blobs ${how}; not deleted: ${failed}`, 'error');
    await this.host.reload();
  }
}
