// Get Page Ranges' body (https://learn.microsoft.com/rest/api/storageservices/get-page-ranges):
// a PageList of PageRange and ClearRange elements with inclusive Start and End, then NextMarker.
// Written as the ranges stream in, a few ranges a chunk.
import type { ListedRange } from '../state/page-ranges.js';
import { escapeXmlText } from '../../wire/xml.js';

/** Ranges gathered into one chunk of the body. */
const rangesPerChunk = 256;

/**
 * The PageList of `ranges`; `nextMarker()` (asked once the ranges are done) is the NextMarker's
 * text: undefined leaves the element out, '' sends it empty.
 */
export async function* pageListXml(
  ranges: AsyncIterable<ListedRange>,
  nextMarker: () => string | undefined,
): AsyncGenerator<Buffer> {
  let text = '<?xml version="1.0" encoding="utf-8"?><PageList>';
  let count = 0;
  for await (const range of ranges) {
    const tag = range.clear ? 'ClearRange' : 'PageRange';
    text += `<${tag}><Start>${range.startByte}</Start><End>${range.endByteExclusive - 1}</End></${tag}>`;
    if (++count % rangesPerChunk === 0) {
      yield Buffer.from(text);
      text = '';
    }
  }
  const marker = nextMarker();
  if (marker !== undefined)
    text += marker === '' ? '<NextMarker />' : `<NextMarker>${escapeXmlText(marker)}</NextMarker>`;
  yield Buffer.from(`${text}</PageList>`);
}
