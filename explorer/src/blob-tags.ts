// Blob index tags in the explorer: the selected blob's "Index tags" card (Get Blob Tags and Set Blob
// Tags, https://learn.microsoft.com/rest/api/storageservices/get-blob-tags, set-blob-tags) and the
// container's "Find by tags" box (Find Blobs by Tags in a container,
// https://learn.microsoft.com/rest/api/storageservices/find-blobs-by-tags-container).
import { appendXml, childText, type Credentials } from './api.js';
import { blobPath } from './blob-api.js';
import { h, replace } from './dom.js';
import { serviceCall } from './service-call.js';
import { attempt, status, succeeded } from './session.js';

/** A blob holds at most 10 tags (set-blob-tags); the card offers no more rows than that. */
export const tagsPerBlobMax = 10;
/** Matches listed a page at a time. */
const foundPerPage = 100;

type Tag = readonly [key: string, value: string];

function tagsOf(parent: Element): Tag[] {
  return [...parent.getElementsByTagName('Tag')].map((tag) => [childText(tag, 'Key'), childText(tag, 'Value')]);
}

function parseXml(text: string): XMLDocument {
  return new DOMParser().parseFromString(text, 'application/xml');
}

export async function getBlobTags(using: Credentials, container: string, blob: string): Promise<Tag[]> {
  const path = blobPath(container, blob);
  const response = await serviceCall('blob', using, { method: 'GET', path, query: { comp: 'tags' } });
  return tagsOf(parseXml(await response.text()).documentElement);
}

/** Set Blob Tags: replaces all of them (none: an empty TagSet). */
export async function setBlobTags(using: Credentials, container: string, blob: string, tags: readonly Tag[]) {
  const xml = document.implementation.createDocument(null, 'Tags', null);
  const set = appendXml(xml.documentElement, 'TagSet');
  for (const [key, value] of tags) {
    const tag = appendXml(set, 'Tag');
    appendXml(tag, 'Key', key);
    appendXml(tag, 'Value', value);
  }
  await serviceCall('blob', using, {
    method: 'PUT',
    path: blobPath(container, blob),
    query: { comp: 'tags' },
    headers: { 'Content-Type': 'application/xml' },
    body: `<?xml version="1.0" encoding="utf-8"?>${new XMLSerializer().serializeToString(xml.documentElement)}`,
  });
}

export interface FoundPage {
  readonly blobs: { readonly name: string; readonly tags: Tag[] }[];
  readonly nextMarker: string | undefined;
}

/** One page of Find Blobs by Tags in `container` for the expression `where`. */
export async function findBlobsByTags(
  using: Credentials,
  container: string,
  where: string,
  marker: string | undefined,
): Promise<FoundPage> {
  const response = await serviceCall('blob', using, {
    method: 'GET',
    path: `/${encodeURIComponent(container)}`,
    query: { restype: 'container', comp: 'blobs', where, marker, maxresults: String(foundPerPage) },
  });
  const xml = parseXml(await response.text());
  const blobs = [...xml.getElementsByTagName('Blob')].map((blob) => ({
    name: childText(blob, 'Name'),
    tags: tagsOf(blob),
  }));
  const next = childText(xml.documentElement, 'NextMarker');
  return { blobs, nextMarker: next === '' ? undefined : next };
}

const tagsText = (tags: readonly Tag[]): string => tags.map(([key, value]) => `${key}=${value}`).join(', ');

/** The selected blob's index tags, editable: rows of key and value, saved together by Set Blob Tags. */
export async function tagsCard(using: Credentials, container: string, blob: string): Promise<HTMLElement> {
  const list = h('div', { id: 'tag-list' });
  const add = h('button', { type: 'button', id: 'tag-add' }, '+ tag');
  const rows = () => [...list.querySelectorAll<HTMLElement>('.tag-row')];
  const refresh = (): void => {
    add.disabled = rows().length >= tagsPerBlobMax;
  };
  const addRow = ([key, value]: Tag): void => {
    const row = h(
      'div',
      { class: 'row tag-row' },
      h('input', { class: 'tag-key', value: key, placeholder: 'key', 'aria-label': 'Tag key' }),
      h('input', { class: 'tag-value', value, placeholder: 'value', 'aria-label': 'Tag value' }),
    );
    const remove = () => {
      row.remove();
      refresh();
    };
    row.append(h('button', { type: 'button', class: 'icon danger tag-remove', onclick: remove }, '×'));
    list.append(row);
    refresh();
  };
  add.addEventListener('click', () => addRow(['', '']));
  const card = h(
    'section',
    { class: 'card', id: 'blob-tags' },
    h('h3', {}, 'Index tags'),
    h('p', { class: 'hint' }, `Up to ${tagsPerBlobMax} key=value pairs; Find by tags searches them.`),
    list,
  );
  const tags = await attempt(() => getBlobTags(using, container, blob));
  if (tags === undefined) {
    card.append(h('p', { class: 'hint' }, 'The tags could not be read (see the status line).'));
    return card;
  }
  tags.forEach(addRow);
  const save = async (): Promise<void> => {
    const pairs = rows().map((row): Tag => [
      row.querySelector<HTMLInputElement>('.tag-key')!.value,
      row.querySelector<HTMLInputElement>('.tag-value')!.value,
    ]);
    // The service checks the keys and values: its refusal is shown as it words it.
    if (await succeeded(() => setBlobTags(using, container, blob, pairs))) {
      status(pairs.length === 0 ? `Tags of ${blob} removed.` : `Tags of ${blob} saved: ${tagsText(pairs)}.`);
    }
  };
  card.append(
    h(
      'div',
      { class: 'row' },
      add,
      h('button', { type: 'button', id: 'tags-save', class: 'primary', onclick: () => void save() }, 'Save tags'),
    ),
  );
  return card;
}

/**
 * The container's "Find by tags" box: a where expression (`"project" = 'blue' AND "n" > '2'`),
 * its matches listed a page at a time; `open` shows a match's details.
 */
export function findByTagsBox(using: Credentials, container: string, open: (blob: string) => void): HTMLElement {
  const where = h('input', {
    id: 'find-tags-where',
    size: 40,
    spellcheck: 'false',
    placeholder: `"project" = 'blue'`,
    'aria-label': 'Tag expression',
  });
  const results = h('tbody', { id: 'find-tags-results' });
  const more = h('button', { type: 'button', id: 'find-tags-more', hidden: true }, 'More matches');
  const table = h(
    'table',
    { class: 'messages', id: 'find-tags-table', hidden: true },
    h('thead', {}, h('tr', {}, h('th', {}, 'Blob'), h('th', {}, 'Tags matched'))),
    results,
  );
  let marker: string | undefined;
  let expression = '';
  const run = async (next: boolean): Promise<void> => {
    if (!next) expression = where.value.trim();
    const page = await attempt(() => findBlobsByTags(using, container, expression, next ? marker : undefined));
    if (page === undefined) return;
    table.hidden = false;
    marker = page.nextMarker;
    more.hidden = marker === undefined;
    const rows = page.blobs.map(({ name, tags }) =>
      h(
        'tr',
        { 'data-found': name },
        h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => open(name) }, name)),
        h('td', { class: 'found-tags' }, tagsText(tags)),
      ),
    );
    if (next) results.append(...rows);
    else replace(results, rows.length > 0 ? rows : h('tr', {}, h('td', { colspan: 2, class: 'hint' }, 'No matches.')));
    if (!next) status(`Find by tags: ${page.blobs.length}${marker === undefined ? '' : '+'} in ${container}.`);
  };
  more.addEventListener('click', () => void run(true));
  const form = h(
    'form',
    { class: 'row wrap', id: 'find-tags' },
    h('label', { for: 'find-tags-where' }, 'Find by tags:'),
    where,
    h('button', { type: 'submit', id: 'find-tags-run' }, 'Find'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void run(false);
  });
  return h('section', { class: 'find-tags' }, form, table, more);
}
