// The selected blob's versions in the explorer (blob versioning,
// https://learn.microsoft.com/azure/storage/blobs/versioning-overview): List Blobs with
// include=versions and the blob's name as prefix lists them; each downloads with ?versionid=, a
// previous one is restored by Copy Blob from its URL onto the blob (which keeps the version it
// replaces) or deleted with Delete Blob ?versionid=.
import { childText, type Credentials } from './api.js';
import { blobPath } from './blob-api.js';
import { download, h } from './dom.js';
import { serviceCall, serviceUrl } from './service-call.js';
import { attempt, status, succeeded } from './session.js';
import { sizeText } from './sizes.js';

const versionsPerPage = 50;

export interface BlobVersion {
  readonly versionId: string;
  readonly current: boolean;
  readonly lastModified: string;
  readonly sizeBytes: number;
}

export interface VersionPage {
  readonly versions: BlobVersion[];
  /** The marker of the next page, undefined once the listing has passed the blob's name. */
  readonly nextMarker: string | undefined;
}

/**
 * One page of the versions of `blob`. The prefix also finds longer names (`a.txt.bak` for
 * `a.txt`): their entries are left out, and the listing stops at the first of them, since List
 * Blobs lists by name and a name's entries come together.
 */
export async function listVersions(
  using: Credentials,
  container: string,
  blob: string,
  marker: string | undefined,
): Promise<VersionPage> {
  const response = await serviceCall('blob', using, {
    method: 'GET',
    path: `/${encodeURIComponent(container)}`,
    query: {
      restype: 'container',
      comp: 'list',
      include: 'versions',
      prefix: blob,
      marker,
      maxresults: String(versionsPerPage),
    },
  });
  const xml = new DOMParser().parseFromString(await response.text(), 'application/xml');
  const entries = [...xml.getElementsByTagName('Blob')];
  const versions = entries
    .filter((entry) => childText(entry, 'Name') === blob && childText(entry, 'Snapshot') === '')
    .filter((entry) => childText(entry, 'VersionId') !== '')
    .map((entry) => ({
      versionId: childText(entry, 'VersionId'),
      current: childText(entry, 'IsCurrentVersion') === 'true',
      lastModified: childText(entry, 'Last-Modified'),
      sizeBytes: Number(childText(entry, 'Content-Length')),
    }));
  const passed = entries.some((entry) => childText(entry, 'Name') !== blob);
  const next = childText(xml.documentElement, 'NextMarker');
  return { versions, nextMarker: next === '' || passed ? undefined : next };
}

export async function downloadVersion(using: Credentials, container: string, blob: string, versionId: string) {
  const path = blobPath(container, blob);
  const response = await serviceCall('blob', using, { method: 'GET', path, query: { versionid: versionId } });
  return response.blob();
}

/** Copy Blob from the version's URL onto the blob: the version becomes the current content again. */
export async function restoreVersion(using: Credentials, container: string, blob: string, versionId: string) {
  const path = blobPath(container, blob);
  const source = serviceUrl('blob', using.account, { method: 'GET', path, query: { versionid: versionId } });
  await serviceCall('blob', using, { method: 'PUT', path, headers: { 'x-ms-copy-source': source.toString() } });
}

export async function deleteVersion(using: Credentials, container: string, blob: string, versionId: string) {
  const path = blobPath(container, blob);
  await serviceCall('blob', using, { method: 'DELETE', path, query: { versionid: versionId } });
}

/** The selected blob's "Versions" card; `changed` runs after a restore or a delete. */
export function versionsCard(
  using: Credentials,
  container: string,
  blob: string,
  changed: () => Promise<void>,
): HTMLElement {
  const rows = h('tbody', { id: 'blob-versions' });
  const more = h('button', { type: 'button', id: 'versions-more', hidden: true }, 'More versions');
  const note = h('p', { class: 'hint' }, 'Reading the versions…');
  const table = h(
    'table',
    { class: 'messages', hidden: true },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Version id', '', 'Modified', 'Size', ''].map((label) => h('th', {}, label)),
      ),
    ),
    rows,
  );
  let marker: string | undefined;
  const row = (version: BlobVersion) => versionRow(using, container, blob, version, changed);
  const load = async (next: boolean): Promise<void> => {
    const page = await attempt(() => listVersions(using, container, blob, next ? marker : undefined));
    if (page === undefined) {
      note.textContent = 'The versions could not be listed (see the status line).';
      return;
    }
    marker = page.nextMarker;
    more.hidden = marker === undefined;
    rows.append(...page.versions.map(row));
    const none = rows.childElementCount === 0;
    table.hidden = none;
    note.textContent = none
      ? 'No versions: the server keeps them when it runs with --blob-versioning.'
      : 'Each write of the blob keeps the version it replaces. Restoring copies a version onto the blob.';
  };
  more.addEventListener('click', () => void load(true));
  void load(false);
  return h('section', { class: 'card', id: 'blob-versions-card' }, h('h3', {}, 'Versions'), note, table, more);
}

/** One version's row: its id, whether current, time, size; download, and for a previous one restore and delete. */
function versionRow(
  using: Credentials,
  container: string,
  blob: string,
  version: BlobVersion,
  changed: () => Promise<void>,
): HTMLElement {
  const id = version.versionId;
  const act = async (done: string, action: () => Promise<unknown>): Promise<void> => {
    if (!(await succeeded(action))) return;
    status(done);
    await changed();
  };
  const button = (label: string, name: string, run: () => Promise<void>) =>
    h('button', { type: 'button', class: name, onclick: () => void run() }, label);
  const save = async () => {
    const content = await attempt(() => downloadVersion(using, container, blob, id));
    if (content !== undefined) download(blob.split('/').pop()!, content);
  };
  const restore = () => act(`${blob}: version ${id} restored.`, () => restoreVersion(using, container, blob, id));
  const remove = async () => {
    if (!confirm(`Delete version ${id} of ${blob}? This cannot be undone.`)) return;
    await act(`${blob}: version ${id} deleted.`, () => deleteVersion(using, container, blob, id));
  };
  return h(
    'tr',
    { 'data-version': id, 'data-current': String(version.current) },
    h('td', { class: 'message-id' }, id),
    h('td', {}, version.current ? 'current' : ''),
    h('td', {}, version.lastModified),
    h('td', { class: 'number' }, sizeText(version.sizeBytes)),
    h(
      'td',
      { class: 'row' },
      button('Download', 'version-download', save),
      !version.current && button('Restore this version', 'version-restore', restore),
      !version.current && button('×', 'version-delete danger icon', remove),
    ),
  );
}
