// A page blob's written pages in the explorer: Get Page Ranges
// (https://learn.microsoft.com/rest/api/storageservices/get-page-ranges, comp=pagelist), listed a
// page of ranges at a time (maxresults, marker), with the bytes written so far against the size.
import { childText, type Credentials } from './api.js';
import { blobPath } from './blob-api.js';
import { h } from './dom.js';
import { serviceCall } from './service-call.js';
import { attempt } from './session.js';
import { sizeText } from './sizes.js';

const rangesPerPage = 100;

/** Inclusive byte offsets, as the service writes them. */
export interface PageRange {
  readonly start: number;
  readonly end: number;
}

export interface PageRangePage {
  readonly ranges: PageRange[];
  /** x-ms-blob-content-length: the blob's size. */
  readonly sizeBytes: number;
  readonly nextMarker: string | undefined;
}

export async function getPageRanges(
  using: Credentials,
  container: string,
  blob: string,
  marker: string | undefined,
): Promise<PageRangePage> {
  const response = await serviceCall('blob', using, {
    method: 'GET',
    path: blobPath(container, blob),
    query: { comp: 'pagelist', marker, maxresults: String(rangesPerPage) },
  });
  const xml = new DOMParser().parseFromString(await response.text(), 'application/xml');
  const ranges = [...xml.getElementsByTagName('PageRange')].map((range) => ({
    start: Number(childText(range, 'Start')),
    end: Number(childText(range, 'End')),
  }));
  const next = childText(xml.documentElement, 'NextMarker');
  const sizeBytes = Number(response.headers.get('x-ms-blob-content-length') ?? Number.NaN);
  return { ranges, sizeBytes, nextMarker: next === '' ? undefined : next };
}

/** `1,024 B` (exact counts here: the ranges are byte offsets), with the rounded size beside larger ones. */
function bytesText(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} B`;
  return bytes < 1024 ? exact : `${exact} (${sizeText(bytes)})`;
}

/** The selected page blob's "Written pages" card. */
export function pageRangesCard(using: Credentials, container: string, blob: string): HTMLElement {
  const rows = h('tbody', { id: 'page-ranges' });
  const summary = h('p', { id: 'page-ranges-summary', class: 'hint' }, 'Reading the page ranges…');
  const more = h('button', { type: 'button', id: 'page-ranges-more', hidden: true }, 'More ranges');
  let marker: string | undefined;
  let rangeCount = 0;
  let writtenBytes = 0;
  const load = async (next: boolean): Promise<void> => {
    const page = await attempt(() => getPageRanges(using, container, blob, next ? marker : undefined));
    if (page === undefined) {
      summary.textContent = 'The page ranges could not be read (see the status line).';
      return;
    }
    marker = page.nextMarker;
    more.hidden = marker === undefined;
    for (const { start, end } of page.ranges) {
      rangeCount++;
      writtenBytes += end - start + 1;
      rows.append(
        h(
          'tr',
          { 'data-start': start },
          h('td', { class: 'number' }, start),
          h('td', { class: 'number' }, end),
          h('td', { class: 'number' }, bytesText(end - start + 1)),
        ),
      );
    }
    const so = marker === undefined ? '' : ' so far (more ranges follow)';
    const ranges = `${rangeCount} range${rangeCount === 1 ? '' : 's'}`;
    summary.textContent = `${bytesText(writtenBytes)} written in ${ranges}${so}, of ${bytesText(page.sizeBytes)}.`;
    summary.dataset['writtenBytes'] = String(writtenBytes);
  };
  more.addEventListener('click', () => void load(true));
  void load(false);
  return h(
    'section',
    { class: 'card', id: 'page-ranges-card' },
    h('h3', {}, 'Written pages'),
    summary,
    h(
      'table',
      { class: 'messages' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Start', 'End', 'Bytes'].map((label) => h('th', {}, label)),
        ),
      ),
      rows,
    ),
    more,
  );
}
