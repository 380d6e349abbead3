// Get Page Ranges' body (https://learn.microsoft.com/rest/api/storageservices/get-page-ranges):
// a PageList of PageRange and ClearRange elements with inclusive Start and End, then NextMarker.
// Written as the ranges stream in, a few kilobytes a chunk.
import type { ListedRange } from '../state/page-ranges.js';
import { escapeXmlText } from '../../wire/xml.js';

/** Characters of XML gathered before they go out as one chunk of the body. */
const chunkChars = 32 * 1024;

/**
 * The PageList of `ranges`, which come in batches; `nextMarker()` (asked once the ranges are done)
 * is the NextMarker's text: undefined leaves the element out, '' sends it empty.
 */
export async function* pageListXml(
  ranges: AsyncIterable<readonly ListedRange[]>,
  nextMarker: () => string | undefined,
): AsyncGenerator<Buffer> {
  let text = '<?xml version="1.0" encoding="utf-8"?><PageList>';
  for await (const batch of ranges) {
    for (const range of batch) {
      const tag = range.clear ? 'ClearRange' : 'PageRange';
      text += `<${tag}><Start>${range.startByte}</Start><End>${range.endByteExclusive - 1}</End></${tag}>`;
    }
    if (text.length >= chunkChars) {
      yield Buffer.from(text, 'latin1');
      text = '';
    }
  }
  const marker = nextMarker();
  if (marker !== undefined)
    text += marker === '' ? '<NextMarker />' : `<NextMarker>${escapeXmlText(marker)}</NextMarker>`;
  yield Buffer.from(`${text}</PageList>`);
}
