// The Blobs side of the explorer: containers in the left pane (NameList), and one container's
// view: its blobs a folder at a time (List Blobs with delimiter '/'), upload, download, delete,
// and one blob's properties, metadata and a SAS URL. Calls go to the Blob service's own port.
// Data Lake directories (blobs with hdi_isfolder=true) are folders too, empty ones included; a
// path's access control is shown and set, and directories made, through the Data Lake API.
import type { Credentials } from './api.js';
import {
  blobProperties,
  blobSasUrl,
  createContainer,
  deleteBlob,
  deleteContainer,
  downloadBlob,
  listContainers,
  listFolder,
  setBlobMetadata,
  uploadBlob,
  type BlobItem,
  type FolderPage,
} from './blob-api.js';
import { BlobBulk } from './blob-bulk.js';
import { accessCard, createDirectory } from './datalake.js';
import { deletedBlobRow, showDeletedBox, undoneText } from './blob-deleted.js';
import { showBlobRetention } from './blob-retention.js';
import { showContainerSettings } from './container-settings.js';
import { byId, download, field, h, replace } from './dom.js';
import { tierCard, tierText } from './blob-tier.js';
import { findByTagsBox, tagsCard } from './blob-tags.js';
import { versionsCard } from './blob-versions.js';
import { pageRangesCard } from './page-ranges.js';
import { lowerCaseNameReason, NameList } from './name-list.js';
import { copyUrl } from './policies.js';
import { attempt, errorMessage, status, succeeded } from './session.js';
import { sizeText } from './sizes.js';

const containersPerPage = 50;
const blobsPerPage = 200;
/** The listing's columns: tick box, name, size, content type, blob type, modified, actions. */
const columnCount = 8;
/** Metadata names are C# identifiers (naming-and-referencing-containers--blobs--and-metadata). */
const metadataName = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function initBlobs(current: () => Credentials | undefined): NameList {
  const list = new NameList({
    kind: 'container',
    pageSize: containersPerPage,
    contents: 'every blob in it',
    credentials: current,
    page: async (using, prefix, marker, pageSize) => {
      const page = await listContainers(using, prefix, marker, pageSize);
      return { names: page.items, nextMarker: page.nextMarker };
    },
    create: createContainer,
    remove: deleteContainer,
    open: (using, container) => {
      const view = new ContainerView(using, container);
      replace(byId('main'), view.root);
      void view.openFolder('');
    },
    nameReason: (name) => (name === '$root' ? undefined : lowerCaseNameReason(name)),
  });
  byId('blob-retention-open').addEventListener('click', () => {
    const using = current();
    if (using === undefined) return;
    list.mark(undefined);
    showBlobRetention(byId('main'), using, () => void list.refresh());
  });
  return list;
}

/** One container: a breadcrumb of folders, the folder's listing, upload, and the details of one blob. */
class ContainerView {
  readonly root: HTMLElement;
  private prefix = '';
  private nextMarker: string | undefined;
  private readonly crumbs = h('nav', { class: 'row wrap crumbs', id: 'blob-path', 'aria-label': 'Folder' });
  private readonly rows = h('tbody');
  private readonly more = h('button', { type: 'button', id: 'blobs-more', hidden: true }, 'More blobs');
  private readonly details = h('div', { id: 'blob-details' });
  private readonly progress = h('span', { id: 'upload-progress', class: 'hint' });
  private readonly bulk: BlobBulk;
  private readonly showDeleted = showDeletedBox(() => void this.load(false));
  /** Folders listed since the first page: a directory's record and its prefix may fall on two pages. */
  private readonly shownFolders = new Set<string>();
  private readonly newDirectory = h('input', {
    id: 'new-directory',
    placeholder: 'new directory name',
    'aria-label': 'New directory name',
  });

  constructor(
    private readonly using: Credentials,
    private readonly container: string,
  ) {
    const upload = h('input', { type: 'file', id: 'upload-file', multiple: true });
    upload.addEventListener('change', () => void this.upload(upload));
    const reload = () => this.load(false);
    this.bulk = new BlobBulk({ using, container, prefix: () => this.prefix, reload, progress: this.progress });
    this.more.addEventListener('click', () => void this.load(true));
    this.root = h(
      'div',
      { class: 'view', 'data-container-view': container },
      h('h2', {}, container),
      this.crumbs,
      h(
        'div',
        { class: 'row wrap toolbar' },
        h(
          'button',
          { type: 'button', id: 'blobs-refresh', onclick: () => void this.openFolder(this.prefix) },
          'Refresh',
        ),
        h(
          'button',
          {
            type: 'button',
            id: 'container-settings',
            onclick: () => showContainerSettings(this.details, this.using, this.container),
          },
          'Access & SAS',
        ),
        h('label', { for: 'upload-file' }, 'Upload into this folder:'),
        upload,
        this.bulk.folderControls,
        this.progress,
        this.bulk.deleteButton,
        this.showDeleted.label,
      ),
      h(
        'div',
        { class: 'row wrap toolbar' },
        this.newDirectory,
        h(
          'button',
          { type: 'button', id: 'directory-create', onclick: () => void this.makeDirectory() },
          'New directory',
        ),
      ),
      findByTagsBox(using, container, (blob) => void this.showDetails(blob)),
      h(
        'table',
        { id: 'blobs', class: 'messages' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['', 'Name', 'Size', 'Type', 'Blob type', 'Tier', 'Modified', ''].map((label) => h('th', {}, label)),
          ),
        ),
        this.rows,
      ),
      this.more,
      this.details,
    );
  }

  /** Lists the folder `prefix` ('' for the top, else ending in '/') from its first page. */
  async openFolder(prefix: string): Promise<void> {
    this.prefix = prefix;
    this.nextMarker = undefined;
    replace(this.details);
    const parts = prefix.split('/').slice(0, -1);
    replace(
      this.crumbs,
      h(
        'button',
        { type: 'button', class: 'link', 'data-prefix': '', onclick: () => void this.openFolder('') },
        this.container,
      ),
      parts.flatMap((part, i) => {
        const at = `${parts.slice(0, i + 1).join('/')}/`;
        return [
          '/',
          h(
            'button',
            { type: 'button', class: 'link', 'data-prefix': at, onclick: () => void this.openFolder(at) },
            part,
          ),
        ];
      }),
    );
    await this.load(false);
  }

  private async load(more: boolean): Promise<void> {
    const prefix = this.prefix;
    const marker = more ? this.nextMarker : undefined;
    const withDeleted = this.showDeleted.box.checked;
    const page = await attempt(() => listFolder(this.using, this.container, prefix, marker, blobsPerPage, withDeleted));
    if (page === undefined || prefix !== this.prefix) return;
    this.nextMarker = page.nextMarker;
    this.more.hidden = page.nextMarker === undefined;
    if (!more) this.shownFolders.clear();
    const rows = this.rowsOf(page);
    if (more) this.rows.append(...rows);
    else {
      this.bulk.clear();
      const none = h('tr', {}, h('td', { colspan: columnCount, class: 'hint' }, 'No blobs here.'));
      replace(this.rows, rows.length > 0 ? rows : none);
    }
    this.rows.dataset['loaded'] = String(Date.now());
  }

  /**
   * The folders first (BlobPrefix names and Data Lake directories, an empty directory too, each
   * once), then the blobs. A directory's row offers its properties and access control.
   */
  private rowsOf(page: FolderPage): HTMLElement[] {
    const directories = new Set(page.blobs.filter((blob) => blob.directory && !blob.deleted).map((blob) => blob.name));
    const names = [...new Set([...page.folders, ...[...directories].map((name) => `${name}/`)])]
      .filter((folder) => !this.shownFolders.has(folder))
      .sort();
    for (const folder of names) this.shownFolders.add(folder);
    const folders = names.map((folder) => {
      const directory = folder.slice(0, -1);
      const recorded = directories.has(directory);
      return h(
        'tr',
        { 'data-folder': folder, ...(recorded ? { 'data-directory': directory } : {}) },
        h(
          'td',
          { colspan: columnCount - 1 },
          h(
            'button',
            { type: 'button', class: 'link', onclick: () => void this.openFolder(folder) },
            folder.slice(this.prefix.length),
          ),
          recorded && h('span', { class: 'hint' }, ' directory'),
        ),
        h(
          'td',
          { class: 'row' },
          recorded &&
            h(
              'button',
              { type: 'button', class: 'folder-properties', onclick: () => void this.showDetails(directory) },
              'Properties',
            ),
        ),
      );
    });
    const blobs = page.blobs.filter((blob) => !directories.has(blob.name));
    return [...folders, ...blobs.map((blob) => this.blobRow(blob))];
  }

  /** Create Path of a directory in this folder (the Data Lake API makes missing parents). */
  private async makeDirectory(): Promise<void> {
    const name = this.newDirectory.value.trim().replace(/^\/+|\/+$/g, '');
    if (name === '') {
      status('Name the directory first.', 'error');
      return;
    }
    const path = `${this.prefix}${name}`;
    if (!(await succeeded(() => createDirectory(this.using, this.container, path)))) return;
    this.newDirectory.value = '';
    status(`Directory ${path} created.`);
    await this.load(false);
  }

  private blobRow(blob: BlobItem): HTMLElement {
    const shownName = blob.name.slice(this.prefix.length);
    if (blob.deleted) return deletedBlobRow(this.using, this.container, blob, shownName, () => this.load(false));
    const action = (label: string, id: string, run: () => Promise<void>) =>
      h('button', { type: 'button', class: id, onclick: () => void run() }, label);
    return h(
      'tr',
      { 'data-blob': blob.name },
      h('td', {}, this.bulk.checkbox(blob.name)),
      h('td', { class: 'blob-name' }, shownName),
      h('td', { class: 'number' }, sizeText(blob.sizeBytes)),
      h('td', {}, blob.contentType),
      h('td', { class: 'blob-type' }, blob.blobType),
      h('td', { class: 'blob-tier' }, tierText(blob)),
      h('td', {}, blob.lastModified),
      h(
        'td',
        { class: 'row' },
        action('Download', 'blob-download', () => this.download(blob.name)),
        action('Properties', 'blob-properties', () => this.showDetails(blob.name)),
        action('×', 'blob-delete danger icon', () => this.remove(blob.name)),
      ),
    );
  }

  private async upload(input: HTMLInputElement): Promise<void> {
    const files = [...(input.files ?? [])];
    for (const file of files) {
      const name = `${this.prefix}${file.name}`;
      const report = (sentBytes: number): void => {
        this.progress.textContent = `${file.name}: ${sizeText(sentBytes)} of ${sizeText(file.size)}`;
      };
      if (!(await succeeded(() => uploadBlob(this.using, this.container, name, file, report)))) return;
      status(`Uploaded ${name}.`);
    }
    input.value = '';
    this.progress.textContent = `uploaded ${files.length} file${files.length === 1 ? '' : 's'}`;
    await this.load(false);
  }

  private async download(name: string): Promise<void> {
    const content = await attempt(() => downloadBlob(this.using, this.container, name));
    if (content !== undefined) download(name.split('/').pop()!, content);
  }

  private async remove(name: string): Promise<void> {
    if (!confirm(`Delete blob ${name}? ${undoneText}`)) return;
    if (!(await succeeded(() => deleteBlob(this.using, this.container, name)))) return;
    status(`Blob ${name} deleted.`);
    await this.load(false);
  }

  private async showDetails(name: string): Promise<void> {
    const properties = await attempt(() => blobProperties(this.using, this.container, name));
    if (properties === undefined) return;
    const tags = await tagsCard(this.using, this.container, name);
    const isPageBlob = properties.headers.some(
      ([header, value]) => header === 'x-ms-blob-type' && value === 'PageBlob',
    );
    const changed = async (): Promise<void> => {
      await this.load(false);
      await this.showDetails(name);
    };
    replace(
      this.details,
      h('h3', {}, name),
      h(
        'table',
        { class: 'messages', id: 'blob-headers' },
        h(
          'tbody',
          {},
          properties.headers.map(([header, value]) => h('tr', {}, h('th', {}, header), h('td', {}, value))),
        ),
      ),
      isPageBlob && pageRangesCard(this.using, this.container, name),
      metadataCard(this.using, this.container, name, properties.metadata),
      tags,
      accessCard(this.using, this.container, name),
      tierCard(this.using, this.container, name, changed),
      versionsCard(this.using, this.container, name, changed),
      sasCard(this.using, this.container, name),
    );
  }
}

function metadataCard(using: Credentials, container: string, blob: string, metadata: [string, string][]): HTMLElement {
  const list = h('div', { id: 'metadata-list' });
  const addRow = ([name, value]: [string, string]): void => {
    const row = h(
      'div',
      { class: 'row metadata-row' },
      h('input', { class: 'metadata-name', value: name, placeholder: 'name', 'aria-label': 'Metadata name' }),
      h('input', { class: 'metadata-value', value, placeholder: 'value', 'aria-label': 'Metadata value' }),
    );
    row.append(h('button', { type: 'button', class: 'icon danger', onclick: () => row.remove() }, '×'));
    list.append(row);
  };
  metadata.forEach(addRow);
  const save = async (): Promise<void> => {
    const pairs = [...list.querySelectorAll('.metadata-row')].map((row): [string, string] => [
      row.querySelector<HTMLInputElement>('.metadata-name')!.value.trim(),
      row.querySelector<HTMLInputElement>('.metadata-value')!.value,
    ]);
    const bad = pairs.find(([name, value]) => !metadataName.test(name) || !/^[\x20-\x7e]*$/.test(value));
    if (bad !== undefined) {
      status(
        `Metadata '${bad[0]}': names are letters, digits and _ (not first a digit); values printable ASCII.`,
        'error',
      );
      return;
    }
    if (await succeeded(() => setBlobMetadata(using, container, blob, pairs))) status(`Metadata of ${blob} saved.`);
  };
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, 'Metadata'),
    list,
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', id: 'metadata-add', onclick: () => addRow(['', '']) }, '+ metadata'),
      h(
        'button',
        { type: 'button', id: 'metadata-save', class: 'primary', onclick: () => void save() },
        'Save metadata',
      ),
    ),
  );
}

function sasCard(using: Credentials, container: string, blob: string): HTMLElement {
  const letters = ['r', 'a', 'c', 'w', 'd'] as const;
  const names = { r: 'read', a: 'add', c: 'create', w: 'write', d: 'delete' };
  const boxes = letters.map((letter) =>
    h('input', { type: 'checkbox', id: `blob-sas-${letter}`, value: letter, checked: letter === 'r' }),
  );
  const hours = h('input', { id: 'blob-sas-hours', type: 'number', min: 1, value: 1 });
  const output = h('textarea', { id: 'blob-sas-url', readonly: true, rows: 3, spellcheck: 'false' });
  const generate = async (): Promise<void> => {
    const permissions = boxes
      .filter((box) => box.checked)
      .map((box) => box.value)
      .join('');
    const expiry = new Date(Date.now() + Number(hours.value) * 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    try {
      output.value = await blobSasUrl(using, container, blob, permissions, expiry);
    } catch (error) {
      status(errorMessage(error), 'error');
    }
  };
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, 'Shared access signature for this blob'),
    h(
      'div',
      { class: 'row wrap' },
      boxes.map((box) => h('label', { class: 'check' }, box, names[box.value as keyof typeof names])),
    ),
    field('Valid for (hours)', hours),
    h(
      'div',
      { class: 'row' },
      h(
        'button',
        { type: 'button', id: 'blob-sas-generate', class: 'primary', onclick: () => void generate() },
        'Make SAS URL',
      ),
      h('button', { type: 'button', id: 'blob-sas-copy', onclick: () => void copyUrl(output) }, 'Copy'),
    ),
    field('SAS URL', output, 'Anyone holding this URL has these rights on this blob until it expires.'),
  );
}
